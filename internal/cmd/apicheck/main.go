// Command apicheck records the exported API of a Go module in a text file
// and checks that the code still matches it, so that a change to a public
// name is never made by accident and an incompatible one is plain in
// review.
//
// Usage:
//
//	apicheck [-w] DIR=FILE ...
//
// For each DIR (a module's root) it lists every package of the module
// except commands, test data and packages under an internal folder, and
// writes one line per exported feature: constants with their values,
// variables, functions, types with their exported fields (struct tags
// included, since a tag is the wire name of a field) and methods, and the
// methods of interfaces. Lines are sorted and carry no parameter names, so
// the file changes only when the API does. Without -w it compares the code
// with FILE and exits 1 when they differ, printing each difference as
// incompatible (a name removed or changed, a method added to an interface
// a user may implement) or compatible (a name added).
//
// The API is read from the compiler's export data (`go list -export`),
// through go/importer: the standard library only, and always the same Go
// that built the export data, so no dependency can fall behind a new
// export format.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, errDiffers) {
			fmt.Fprintln(os.Stderr, "apicheck:", err)
		}
		os.Exit(1)
	}
}

// errDiffers is run's answer when an API file does not match the code;
// the differences were already printed.
var errDiffers = errors.New("the API differs from its file")

// run writes (-w) or checks each DIR=FILE pair named in args, reporting
// on out. It checks every pair before failing, so one run shows every
// module's differences.
func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("apicheck", flag.ContinueOnError)
	fs.SetOutput(out)
	write := fs.Bool("w", false, "write the API files instead of checking them")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: apicheck [-w] DIR=FILE ...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("no DIR=FILE given")
	}
	differs := false
	for _, arg := range fs.Args() {
		dir, file, ok := strings.Cut(arg, "=")
		if !ok || dir == "" || file == "" {
			return fmt.Errorf("%q is not DIR=FILE", arg)
		}
		mod, lines, err := moduleAPI(dir)
		if err != nil {
			return err
		}
		if *write {
			if err := writeFile(file, mod, lines); err != nil {
				return err
			}
			continue
		}
		recorded, err := readFile(file)
		if err != nil {
			return fmt.Errorf("%w (run with -w to write it)", err)
		}
		if d := compare(recorded, lines); len(d) > 0 {
			differs = true
			report(out, file, d)
		}
	}
	if differs {
		fmt.Fprintln(out, "If the change is meant: record it with `make api` (apicheck -w), commit api/, and add a line to CHANGELOG.md.")
		return errDiffers
	}
	return nil
}

// writeFile writes the API file of module mod: a short header, then one
// feature a line.
func writeFile(file, mod string, lines []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# The exported API of %s, one feature a line.\n", mod)
	b.WriteString("# Written by apicheck -w (make api); apicheck (make api-check) fails when the code differs.\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}

// readFile returns the features recorded in file, without its comments
// and blank lines.
func readFile(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var lines []string
	for l := range strings.SplitSeq(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines, nil
}
