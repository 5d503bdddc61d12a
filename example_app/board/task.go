// Package board is the team task board's data: tasks in a database
// (package database: SQLite for one process, PostgreSQL for replicas),
// behind the small Store interface, and the changes every replica hears.
package board

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Task is one item on the team's board.
type Task struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Notes     string    `json:"notes,omitempty"`
	Tags      []string  `json:"tags,omitempty"`
	Done      bool      `json:"done"`
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Errors the store returns (wrapped, with the detail).
var (
	ErrNotFound = errors.New("task not found")
	ErrInvalid  = errors.New("invalid task")
)

// Limits of a task's fields.
const (
	MaxTitle = 200
	MaxNotes = 4000
	MaxTags  = 10
	maxTag   = 40
)

// NewTask is what Store.Add needs.
type NewTask struct {
	Title string
	Notes string
	Tags  []string
}

// clean validates t and normalises its title and tags.
func (t NewTask) clean() (NewTask, error) {
	t.Title = strings.TrimSpace(t.Title)
	if t.Title == "" || len(t.Title) > MaxTitle {
		return t, fmt.Errorf("%w: a title of 1 to %d characters is required", ErrInvalid, MaxTitle)
	}
	if len(t.Notes) > MaxNotes {
		return t, fmt.Errorf("%w: notes longer than %d characters", ErrInvalid, MaxNotes)
	}
	if len(t.Tags) > MaxTags {
		return t, fmt.Errorf("%w: at most %d tags", ErrInvalid, MaxTags)
	}
	var tags []string
	for _, tag := range t.Tags {
		tag = strings.ToLower(strings.TrimSpace(tag))
		if tag == "" {
			continue
		}
		if len(tag) > maxTag {
			return t, fmt.Errorf("%w: tag too long", ErrInvalid)
		}
		if !slices.Contains(tags, tag) {
			tags = append(tags, tag)
		}
	}
	t.Tags = tags
	return t, nil
}

// taskID is the public id of row seq: "t12".
func taskID(seq int64) string { return "t" + strconv.FormatInt(seq, 10) }

// seqOf parses a public id; false for anything that is not one.
func seqOf(id string) (int64, bool) {
	s, ok := strings.CutPrefix(id, "t")
	if !ok || s == "" || s[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

// Matches reports whether query (case-insensitive) is in t's title, notes
// or tags.
func (t Task) Matches(query string) bool {
	q := strings.ToLower(strings.TrimSpace(query))
	return strings.Contains(strings.ToLower(t.Title), q) || strings.Contains(strings.ToLower(t.Notes), q) ||
		slices.ContainsFunc(t.Tags, func(tag string) bool { return strings.Contains(tag, q) })
}
