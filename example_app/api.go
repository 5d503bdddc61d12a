package main

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/saguaro-go/saguaro/middleware"

	"github.com/go-chi/chi/v5"

	"github.com/saguaro-go/saguaro/auth"
	"github.com/saguaro-go/saguaro/example_app/board"
)

// Scopes of the example's tokens.
const (
	scopeRead  = "tasks:read"
	scopeWrite = "tasks:write"
)

// apiRoutes is the board's own JSON API, the part of the app that existed
// before MCP:
//
//	GET    /api/tasks[?done=true|false]   list          tasks:read
//	GET    /api/tasks/{id}                one task      tasks:read
//	POST   /api/tasks                     create        tasks:write
//	POST   /api/tasks/{id}/complete       mark done     tasks:write
//	DELETE /api/tasks/{id}                delete        tasks:write
func (a *app) apiRoutes() http.Handler {
	r := chi.NewRouter()
	r.Group(func(r chi.Router) {
		r.Use(auth.RequireScopes(scopeRead))
		r.Get("/tasks", a.listTasks)
		r.Get("/tasks/{id}", a.getTask)
	})
	r.Group(func(r chi.Router) {
		r.Use(auth.RequireScopes(scopeWrite))
		r.Post("/tasks", a.createTask)
		r.Post("/tasks/{id}/complete", a.completeTask)
		r.Delete("/tasks/{id}", a.deleteTask)
	})
	return r
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeStoreError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, board.ErrNotFound):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
	case errors.Is(err, board.ErrInvalid):
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
	default:
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal error"})
	}
}

func (a *app) listTasks(w http.ResponseWriter, r *http.Request) {
	var done *bool
	switch r.URL.Query().Get("done") {
	case "true":
		v := true
		done = &v
	case "false":
		v := false
		done = &v
	}
	tasks, err := a.store.List(r.Context(), done)
	if err != nil {
		writeStoreError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": tasks})
}

func (a *app) getTask(w http.ResponseWriter, r *http.Request) {
	t, err := a.store.Get(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		writeStoreError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (a *app) createTask(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title string   `json:"title"`
		Notes string   `json:"notes"`
		Tags  []string `json:"tags"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		if errors.Is(err, middleware.ErrBodyTimeout) {
			writeJSON(w, http.StatusRequestTimeout, map[string]string{"error": "request body too slow"})
			return
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid JSON: " + err.Error()})
		return
	}
	t, err := a.store.Add(r.Context(), board.NewTask{Title: in.Title, Notes: in.Notes, Tags: in.Tags})
	if err != nil {
		writeStoreError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, t)
}

func (a *app) completeTask(w http.ResponseWriter, r *http.Request) {
	t, err := a.store.SetDone(r.Context(), chi.URLParam(r, "id"), true)
	if err != nil {
		writeStoreError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (a *app) deleteTask(w http.ResponseWriter, r *http.Request) {
	if _, err := a.store.Delete(r.Context(), chi.URLParam(r, "id")); err != nil {
		writeStoreError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
