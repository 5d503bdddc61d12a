package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixtureAPI is the API file of testdata/fixture, line for line: every
// kind of feature, and nothing of the internal package or the command.
const fixtureAPI = `# The exported API of example.com/fixture, one feature a line.
# Written by apicheck -w (make api); apicheck (make api-check) fails when the code differs.
pkg example.com/fixture, const Greeting untyped string = "hello"
pkg example.com/fixture, const Limit Size = 64
pkg example.com/fixture, func Greet(string) string
pkg example.com/fixture, func Map[T any, U any]([]T, func(T) U) []U
pkg example.com/fixture, func Sum[N Number](...N) N
pkg example.com/fixture, method (*Message) Describe() string
pkg example.com/fixture, method (*Message) Send(context.Context, ...string) (int, error)
pkg example.com/fixture, method (Pair[K, V]) Swap() (V, K)
pkg example.com/fixture, method (Size) String() string
pkg example.com/fixture, method (Token) Valid() bool
pkg example.com/fixture, type Anonymous struct
pkg example.com/fixture, type Anonymous struct, Point struct{ X int ` + "`json:\"x\"`" + `; Y int ` + "`json:\"x\"`" + ` }
pkg example.com/fixture, type Handler func(context.Context, *Message) error
pkg example.com/fixture, type Message struct
pkg example.com/fixture, type Message struct, ID int ` + "`json:\"id\"`" + `
pkg example.com/fixture, type Message struct, Meta map[string]any ` + "`json:\"_meta,omitempty\"`" + `
pkg example.com/fixture, type Message struct, Reader io.Reader ` + "`json:\"-\"`" + `
pkg example.com/fixture, type Message struct, Text string ` + "`json:\"text\"`" + `
pkg example.com/fixture, type Message struct, embedded io.Closer
pkg example.com/fixture, type Number interface
pkg example.com/fixture, type Number interface, ~int | ~float64
pkg example.com/fixture, type Pair struct, Key K
pkg example.com/fixture, type Pair struct, Value V
pkg example.com/fixture, type Pair[K comparable, V any] struct
pkg example.com/fixture, type Reply interface
pkg example.com/fixture, type Reply interface, Body() string
pkg example.com/fixture, type Reply interface, unexported methods
pkg example.com/fixture, type Sender interface
pkg example.com/fixture, type Sender interface, Send(context.Context, ...string) (int, error)
pkg example.com/fixture, type Size int
pkg example.com/fixture, type Stream chan (<-chan int)
pkg example.com/fixture, type Token = hidden.Token
pkg example.com/fixture, type Token struct, Value string ` + "`json:\"value\"`" + `
pkg example.com/fixture, var ErrClosed error
`

// fixture copies testdata/fixture into a temporary folder and returns the
// folder and the path its API file is written to.
func fixture(t *testing.T) (dir, apiFile string) {
	t.Helper()
	dir = t.TempDir()
	src := filepath.Join("testdata", "fixture")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	require.NoError(t, err)
	return dir, filepath.Join(dir, "api.txt")
}

// edit replaces old with new in the fixture's fixture.go, once; the test
// fails when old is not there, so an edit can never silently do nothing.
func edit(t *testing.T, dir, old, new string) {
	t.Helper()
	path := filepath.Join(dir, "fixture.go")
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(src), old), "the fixture must hold %q once", old)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(src), old, new, 1)), 0o644))
}

// check runs apicheck on the fixture and returns its output and verdict.
func check(t *testing.T, dir, apiFile string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(append(args, dir+"="+apiFile), &out)
	return out.String(), err
}

func TestWriteRecordsEveryKindOfFeature(t *testing.T) {
	dir, apiFile := fixture(t)
	_, err := check(t, dir, apiFile, "-w")
	require.NoError(t, err)
	got, err := os.ReadFile(apiFile)
	require.NoError(t, err)
	assert.Equal(t, fixtureAPI, string(got))
}

// The acceptance: changing an exported signature fails the check with the
// difference, marked incompatible; recording the new API makes it pass.
func TestChangedSignatureFailsUntilRecorded(t *testing.T) {
	dir, apiFile := fixture(t)
	_, err := check(t, dir, apiFile, "-w")
	require.NoError(t, err)
	out, err := check(t, dir, apiFile)
	require.NoError(t, err, out)
	assert.Empty(t, out)

	edit(t, dir, "func Greet(name string) string { return Greeting + \" \" + name }",
		"func Greet(name string, times int) string { return Greeting + \" \" + name }")
	out, err = check(t, dir, apiFile)
	require.ErrorIs(t, err, errDiffers)
	assert.Contains(t, out, apiFile+" differs from the code: 1 incompatible, 0 compatible change(s)")
	assert.Contains(t, out, "INCOMPATIBLE (changed):\n"+
		"    - pkg example.com/fixture, func Greet(string) string\n"+
		"    + pkg example.com/fixture, func Greet(string, int) string\n")
	assert.Contains(t, out, "make api")

	_, err = check(t, dir, apiFile, "-w")
	require.NoError(t, err)
	out, err = check(t, dir, apiFile)
	require.NoError(t, err, out)
	recorded, err := os.ReadFile(apiFile)
	require.NoError(t, err)
	assert.Contains(t, string(recorded), "pkg example.com/fixture, func Greet(string, int) string\n")
}

// What is not API leaves the file alone: parameter names, unexported
// names, comments, the internal package's unpublished names.
func TestFileIsStable(t *testing.T) {
	dir, apiFile := fixture(t)
	_, err := check(t, dir, apiFile, "-w")
	require.NoError(t, err)
	first, err := os.ReadFile(apiFile)
	require.NoError(t, err)

	edit(t, dir, "func (m *Message) Send(ctx context.Context, to ...string) (n int, err error) {\n\treturn len(to), ctx.Err()",
		"func (m *Message) Send(c context.Context, recipients ...string) (int, error) {\n\treturn len(recipients), c.Err()")
	edit(t, dir, "func helper() {}", "func helper() int { return 1 }\n\n// A comment.\nfunc other() {}\n\nvar _ = other")
	hidden := filepath.Join(dir, "internal", "hidden", "hidden.go")
	src, err := os.ReadFile(hidden)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(hidden, append(src, "\n// More is internal.\nfunc More() {}\n"...), 0o644))
	out, err := check(t, dir, apiFile)
	require.NoError(t, err, out)

	_, err = check(t, dir, apiFile, "-w")
	require.NoError(t, err)
	second, err := os.ReadFile(apiFile)
	require.NoError(t, err)
	assert.Equal(t, string(first), string(second))
}

// Each edit of the fixture is told compatible or incompatible as Go's
// compatibility promise would tell it.
func TestClassifiesEdits(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		want           string // the line of report that must appear
	}{
		{"a function added", "func helper() {}", "func helper() {}\n\n// Wave is new.\nfunc Wave() {}",
			"compatible (added):\n    + pkg example.com/fixture, func Wave()\n"},
		{"a field removed", "\tReader io.Reader      `json:\"-\"`\n", "",
			"INCOMPATIBLE (removed):\n    - pkg example.com/fixture, type Message struct, Reader io.Reader `json:\"-\"`\n"},
		{"a field's wire name changed", "`json:\"text\"`", "`json:\"body\"`",
			"INCOMPATIBLE (changed):\n    - pkg example.com/fixture, type Message struct, Text string `json:\"text\"`\n" +
				"    + pkg example.com/fixture, type Message struct, Text string `json:\"body\"`\n"},
		{"a field added", "\tsecret string\n", "\tsecret string\n\tLang   string\n",
			"compatible (added):\n    + pkg example.com/fixture, type Message struct, Lang string\n"},
		{"a constant's value changed", "const Limit Size = 64", "const Limit Size = 65",
			"INCOMPATIBLE (changed):\n    - pkg example.com/fixture, const Limit Size = 64\n"},
		{"a method added to an interface users implement", "\tSend(ctx context.Context, to ...string) (int, error)\n}",
			"\tSend(ctx context.Context, to ...string) (int, error)\n\tFlush() error\n}",
			"INCOMPATIBLE (a method added to an interface users may implement):\n    + pkg example.com/fixture, type Sender interface, Flush() error\n"},
		{"a method added to a sealed interface", "\tBody() string\n", "\tBody() string\n\tStatus() int\n",
			"compatible (added to an interface only its package implements):\n    + pkg example.com/fixture, type Reply interface, Status() int\n"},
		{"a constraint widened", "~int | ~float64", "~int | ~float64 | ~int64",
			"INCOMPATIBLE (the constraint's type set changed):\n    + pkg example.com/fixture, type Number interface, ~int | ~float64 | ~int64\n"},
		{"a method moved to the value receiver", "func (m *Message) Send(", "func (m Message) Send(",
			"compatible (the method now has a value receiver):\n    - pkg example.com/fixture, method (*Message) Send("},
		{"a method moved to the pointer receiver", "func (s Size) String()", "func (s *Size) String()",
			"INCOMPATIBLE (changed):\n    - pkg example.com/fixture, method (Size) String() string\n    + pkg example.com/fixture, method (*Size) String() string\n"},
		{"a type published through an internal alias removed", "type Token = hidden.Token", "type Token = Size\n\nvar _ hidden.Token",
			"INCOMPATIBLE (removed):\n    - pkg example.com/fixture, method (Token) Valid() bool\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, apiFile := fixture(t)
			_, err := check(t, dir, apiFile, "-w")
			require.NoError(t, err)
			edit(t, dir, tc.old, tc.new)
			out, err := check(t, dir, apiFile)
			require.ErrorIs(t, err, errDiffers, "every difference fails the check, compatible or not")
			assert.Contains(t, out, tc.want)
		})
	}
}

func TestCompareSealing(t *testing.T) {
	const (
		header = "pkg p, type I interface"
		method = "pkg p, type I interface, M()"
		sealed = "pkg p, type I interface, unexported methods"
	)
	c := compare([]string{header, method}, []string{header, method, sealed})
	require.Len(t, c, 1)
	assert.True(t, c[0].incompatible, "sealing an interface breaks its implementations elsewhere")
	c = compare([]string{header, method, sealed}, []string{header, method})
	require.Len(t, c, 1)
	assert.False(t, c[0].incompatible, "unsealing one breaks nothing")
	c = compare(nil, []string{header, method})
	require.Len(t, c, 2)
	for _, ch := range c {
		assert.False(t, ch.incompatible, "a new interface with its methods is an addition: %+v", ch)
	}
}

func TestUsage(t *testing.T) {
	var out bytes.Buffer
	assert.Error(t, run(nil, &out))
	assert.Error(t, run([]string{"no-equals-sign"}, &out))
	dir, apiFile := fixture(t)
	_, err := check(t, dir, apiFile)
	assert.ErrorIs(t, err, fs.ErrNotExist, "a missing API file is an error, not a pass")
	assert.NotErrorIs(t, err, errDiffers)
}

// FuzzCompare: whatever the recorded file holds, reading and comparing it
// never panics, a file compared with itself has no difference, and every
// difference names a line of one side.
func FuzzCompare(f *testing.F) {
	for _, l := range strings.Split(fixtureAPI, "\n") {
		f.Add(l, "pkg example.com/fixture, func Greet(string, int) string")
	}
	f.Add("pkg p, type I interface, unexported methods", "pkg p, type I interface, M()")
	f.Add("pkg p, method (*T[K]) M()", "pkg p, method (T[K]) M()")
	f.Add("pkg , ", "type")
	f.Fuzz(func(t *testing.T, a, b string) {
		old := []string{a, b}
		if d := compare(old, old); len(d) != 0 {
			t.Fatalf("a file differs from itself: %+v", d)
		}
		for _, c := range compare([]string{a}, []string{b}) {
			if c.old != a && c.new != b {
				t.Fatalf("a change of neither line: %+v", c)
			}
		}
	})
}
