package main

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/saguaro-go/saguaro/sse"
)

// app holds what the routes share.
type app struct {
	logger *slog.Logger
	hub    *sse.Hub
}

func newApp(logger *slog.Logger) *app {
	return &app{logger: logger, hub: sse.NewHub(nil)}
}

// Close ends every live subscription.
func (a *app) Close() { a.hub.Close() }

// Handler is the app's router: an ordinary chi app with saguaro's live
// endpoints mounted on it.
func (a *app) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.RequestID, middleware.Recoverer)
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	r.Mount("/events", a.eventRoutes())
	return r
}
