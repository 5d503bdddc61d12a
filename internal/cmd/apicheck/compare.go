package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// A change is one difference between the recorded API and the code's.
// The classification follows the Go 1 compatibility promise as
// golang.org/x/exp/apidiff applies it: code that compiled against the old
// API must compile against the new one.
type change struct {
	old, new     string // the recorded and the current line; "" when absent
	incompatible bool
	why          string
}

// keyPatterns name what a line declares, so a declaration whose line
// changed is told from one removed and another added. The first match
// wins; a line that matches none is its own key.
var keyPatterns = []struct {
	re  *regexp.Regexp
	key string
}{
	{regexp.MustCompile(`^type (\w+) struct, embedded `), ""},
	{regexp.MustCompile(`^type (\w+) struct, (\w+) `), "type $1 struct, $2"},
	{regexp.MustCompile(`^type (\w+) interface, unexported methods$`), ""},
	{regexp.MustCompile(`^type (\w+) interface, (\w+)\(`), "type $1 interface, $2"},
	{regexp.MustCompile(`^type (\w+) interface, `), ""},
	{regexp.MustCompile(`^type (\w+)`), "type $1"},
	{regexp.MustCompile(`^(const|var|func) (\w+)`), "$1 $2"},
	{regexp.MustCompile(`^method \(\*?(\w+)[^)]*\) (\w+)`), "method $1.$2"},
}

var linePattern = regexp.MustCompile(`^pkg ([^,]+), (.*)$`)

// parse splits a line into its package and feature, and returns the key
// of what it declares.
func parse(line string) (pkg, feature, key string) {
	m := linePattern.FindStringSubmatch(line)
	if m == nil {
		return "", line, line
	}
	pkg, feature = m[1], m[2]
	for _, p := range keyPatterns {
		if sub := p.re.FindStringSubmatchIndex(feature); sub != nil {
			if p.key == "" {
				return pkg, feature, line
			}
			return pkg, feature, "pkg " + pkg + ", " + string(p.re.ExpandString(nil, p.key, feature, sub))
		}
	}
	return pkg, feature, line
}

// keyed maps each line's key to the line. Two lines with one key (a
// field promoted beside one of the same name) keep their own lines as
// keys, so neither is lost.
func keyed(lines []string) map[string]string {
	m := make(map[string]string, len(lines))
	for _, l := range lines {
		_, _, k := parse(l)
		if _, dup := m[k]; dup {
			k = l
		}
		m[k] = l
	}
	return m
}

var interfaceMember = regexp.MustCompile(`^pkg ([^,]+), type (\w+) interface, (.*)$`)

// methodLine matches an interface member that is a method.
var methodLine = regexp.MustCompile(`^\w+\(`)

// compare returns the differences between the recorded lines and the
// current ones, incompatible first, each group sorted.
func compare(recorded, current []string) []change {
	old, cur := keyed(recorded), keyed(current)
	var changes []change
	for k, o := range old {
		n, ok := cur[k]
		switch {
		case !ok:
			changes = append(changes, removed(o))
		case o != n:
			changes = append(changes, changed(o, n))
		}
	}
	for k, n := range cur {
		if _, ok := old[k]; !ok {
			changes = append(changes, added(n, old, cur))
		}
	}
	slices.SortFunc(changes, func(a, b change) int {
		if a.incompatible != b.incompatible {
			if a.incompatible {
				return -1
			}
			return 1
		}
		return strings.Compare(a.old+a.new, b.old+b.new)
	})
	return changes
}

func removed(line string) change {
	if m := interfaceMember.FindStringSubmatch(line); m != nil && m[3] == "unexported methods" {
		return change{old: line, why: "the interface may now be implemented outside its package"}
	}
	return change{old: line, incompatible: true, why: "removed"}
}

func changed(o, n string) change {
	// A method moved from the pointer to the value receiver is in both
	// method sets still.
	if strings.HasPrefix(o, "pkg ") && strings.Replace(o, ", method (*", ", method (", 1) == n {
		return change{old: o, new: n, why: "the method now has a value receiver"}
	}
	return change{old: o, new: n, incompatible: true, why: "changed"}
}

// added classifies a new line: compatible, unless it is a new member of
// an interface that existed before, which breaks its implementations or,
// for a constraint, the code instantiated with it.
func added(line string, old, cur map[string]string) change {
	m := interfaceMember.FindStringSubmatch(line)
	if m == nil {
		return change{new: line, why: "added"}
	}
	pkg, iface, member := m[1], m[2], m[3]
	if _, existed := old["pkg "+pkg+", type "+iface]; !existed {
		return change{new: line, why: "added"}
	}
	sealed := "pkg " + pkg + ", type " + iface + " interface, unexported methods"
	switch {
	case member == "unexported methods":
		return change{new: line, incompatible: true, why: "the interface can no longer be implemented outside its package"}
	case methodLine.MatchString(member):
		if _, ok := cur[sealed]; ok {
			return change{new: line, why: "added to an interface only its package implements"}
		}
		return change{new: line, incompatible: true, why: "a method added to an interface users may implement"}
	default:
		return change{new: line, incompatible: true, why: "the constraint's type set changed"}
	}
}

// report prints the differences of one file.
func report(out io.Writer, file string, changes []change) {
	n := 0
	for _, c := range changes {
		if c.incompatible {
			n++
		}
	}
	fmt.Fprintf(out, "%s differs from the code: %d incompatible, %d compatible change(s)\n", file, n, len(changes)-n)
	for _, c := range changes {
		kind := "compatible"
		if c.incompatible {
			kind = "INCOMPATIBLE"
		}
		fmt.Fprintf(out, "  %s (%s):\n", kind, c.why)
		if c.old != "" {
			fmt.Fprintf(out, "    - %s\n", c.old)
		}
		if c.new != "" {
			fmt.Fprintf(out, "    + %s\n", c.new)
		}
	}
}
