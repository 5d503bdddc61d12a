package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Task is one item on the team's board.
type Task struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Notes     string    `json:"notes,omitempty"`
	Tags      []string  `json:"tags,omitempty"`
	Done      bool      `json:"done"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// TaskChange is what the store tells its observers.
type TaskChange struct {
	Kind string `json:"kind"` // "created", "updated", "deleted"
	Task Task   `json:"task"`
}

// Errors the store returns.
var (
	ErrNotFound = errors.New("task not found")
	ErrInvalid  = errors.New("invalid task")
)

// maxTitle bounds a task's title; maxNotes its notes.
const (
	maxTitle = 200
	maxNotes = 4000
	maxTags  = 10
)

// Store is the board's task store: in memory, optionally persisted to a
// JSON file after every change. It is safe for concurrent use.
type Store struct {
	mu        sync.Mutex
	tasks     map[string]*Task
	next      int
	path      string
	observers []func(TaskChange)
	now       func() time.Time
}

// NewStore returns a store; with a non-empty path it loads the file if it
// exists and saves every change to it.
func NewStore(path string) (*Store, error) {
	s := &Store{tasks: map[string]*Task{}, path: path, now: time.Now}
	if path == "" {
		return s, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load tasks: %w", err)
	}
	var saved struct {
		Next  int     `json:"next"`
		Tasks []*Task `json:"tasks"`
	}
	if err := json.Unmarshal(data, &saved); err != nil {
		return nil, fmt.Errorf("load tasks from %s: %w", path, err)
	}
	for _, t := range saved.Tasks {
		s.tasks[t.ID] = t
	}
	s.next = saved.Next
	return s, nil
}

// Observe registers fn for every change; fn runs after the change, outside
// the store's lock, and must not block.
func (s *Store) Observe(fn func(TaskChange)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observers = append(s.observers, fn)
}

func (s *Store) notify(c TaskChange) {
	s.mu.Lock()
	obs := slices.Clone(s.observers)
	s.mu.Unlock()
	for _, fn := range obs {
		fn(c)
	}
}

func cleanTags(tags []string) ([]string, error) {
	if len(tags) > maxTags {
		return nil, fmt.Errorf("%w: at most %d tags", ErrInvalid, maxTags)
	}
	var out []string
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if len(t) > 40 {
			return nil, fmt.Errorf("%w: tag too long", ErrInvalid)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Add creates a task.
func (s *Store) Add(title, notes string, tags []string) (Task, error) {
	title = strings.TrimSpace(title)
	if title == "" || len(title) > maxTitle {
		return Task{}, fmt.Errorf("%w: a title of 1 to %d characters is required", ErrInvalid, maxTitle)
	}
	if len(notes) > maxNotes {
		return Task{}, fmt.Errorf("%w: notes longer than %d characters", ErrInvalid, maxNotes)
	}
	tags, err := cleanTags(tags)
	if err != nil {
		return Task{}, err
	}
	s.mu.Lock()
	s.next++
	now := s.now().UTC()
	t := &Task{ID: "t" + strconv.Itoa(s.next), Title: title, Notes: notes, Tags: tags, CreatedAt: now, UpdatedAt: now}
	s.tasks[t.ID] = t
	err = s.saveLocked()
	out := *t
	s.mu.Unlock()
	s.notify(TaskChange{Kind: "created", Task: out})
	return out, err
}

// Get returns a task.
func (s *Store) Get(id string) (Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return Task{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return *t, nil
}

// SetDone marks a task done or not done.
func (s *Store) SetDone(id string, done bool) (Task, error) {
	s.mu.Lock()
	t, ok := s.tasks[id]
	if !ok {
		s.mu.Unlock()
		return Task{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	t.Done = done
	t.UpdatedAt = s.now().UTC()
	err := s.saveLocked()
	out := *t
	s.mu.Unlock()
	s.notify(TaskChange{Kind: "updated", Task: out})
	return out, err
}

// Delete removes a task.
func (s *Store) Delete(id string) (Task, error) {
	s.mu.Lock()
	t, ok := s.tasks[id]
	if !ok {
		s.mu.Unlock()
		return Task{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	delete(s.tasks, id)
	err := s.saveLocked()
	out := *t
	s.mu.Unlock()
	s.notify(TaskChange{Kind: "deleted", Task: out})
	return out, err
}

// List returns the tasks, oldest first; done filters when not nil.
func (s *Store) List(done *bool) []Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Task, 0, len(s.tasks))
	for _, t := range s.tasks {
		if done == nil || t.Done == *done {
			out = append(out, *t)
		}
	}
	slices.SortFunc(out, func(a, b Task) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return idOrder(a.ID, b.ID)
	})
	return out
}

// idOrder orders "t2" before "t10".
func idOrder(a, b string) int {
	na, _ := strconv.Atoi(strings.TrimPrefix(a, "t"))
	nb, _ := strconv.Atoi(strings.TrimPrefix(b, "t"))
	return na - nb
}

// Search returns the tasks whose title, notes or tags contain query
// (case-insensitive).
func (s *Store) Search(query string) []Task {
	q := strings.ToLower(strings.TrimSpace(query))
	var out []Task
	for _, t := range s.List(nil) {
		if strings.Contains(strings.ToLower(t.Title), q) || strings.Contains(strings.ToLower(t.Notes), q) ||
			slices.ContainsFunc(t.Tags, func(tag string) bool { return strings.Contains(tag, q) }) {
			out = append(out, t)
		}
	}
	return out
}

// IDs returns the task ids starting with prefix, in order.
func (s *Store) IDs(prefix string) []string {
	var out []string
	for _, t := range s.List(nil) {
		if strings.HasPrefix(t.ID, prefix) {
			out = append(out, t.ID)
		}
	}
	return out
}

// saveLocked writes the file atomically (temporary file, then rename).
func (s *Store) saveLocked() error {
	if s.path == "" {
		return nil
	}
	saved := struct {
		Next  int     `json:"next"`
		Tasks []*Task `json:"tasks"`
	}{Next: s.next}
	for _, t := range s.tasks {
		saved.Tasks = append(saved.Tasks, t)
	}
	slices.SortFunc(saved.Tasks, func(a, b *Task) int { return idOrder(a.ID, b.ID) })
	data, err := json.MarshalIndent(saved, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".tasks-*.json")
	if err != nil {
		return fmt.Errorf("save tasks: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("save tasks: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save tasks: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("save tasks: %w", err)
	}
	return nil
}
