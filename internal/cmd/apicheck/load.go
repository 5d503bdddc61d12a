package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// listed is what `go list -json` says of one package.
type listed struct {
	ImportPath string
	Name       string
	Export     string
	DepOnly    bool
	Error      *struct{ Err string }
}

// moduleAPI returns the module path of the module rooted at dir and the
// sorted features of its public packages.
func moduleAPI(dir string) (mod string, lines []string, err error) {
	m, err := goCmd(dir, "list", "-m", "-f", "{{.Path}}")
	if err != nil {
		return "", nil, err
	}
	mod = strings.TrimSpace(string(m))
	out, err := goCmd(dir, "list", "-e", "-export", "-deps", "-json=ImportPath,Name,Export,DepOnly,Error", "./...")
	if err != nil {
		return "", nil, err
	}
	exports := map[string]string{}
	var public []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", nil, fmt.Errorf("go list in %s: %w", dir, err)
		}
		if p.Error != nil {
			return "", nil, fmt.Errorf("go list in %s: %s: %s", dir, p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly && p.Name != "main" && !internal(p.ImportPath) {
			public = append(public, p.ImportPath)
		}
	}
	slices.Sort(public)
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	for _, path := range public {
		pkg, err := imp.Import(path)
		if err != nil {
			return "", nil, fmt.Errorf("reading %s: %w", path, err)
		}
		lines = append(lines, features(pkg)...)
	}
	slices.Sort(lines)
	return mod, slices.Compact(lines), nil
}

// internal reports whether an import path has an internal element, so
// that only the module's own packages may import it.
func internal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// goCmd runs the go command in dir and returns its standard output. A
// go.work above dir is ignored: the API is the module's as its users
// build it.
func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s in %s: %w\n%s", strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	return out, nil
}

// importable reports whether a user can name pkg's exported names: a
// package of the standard library or of a module, outside any internal
// folder.
func importable(pkg *types.Package) bool {
	return pkg != nil && !internal(pkg.Path())
}
