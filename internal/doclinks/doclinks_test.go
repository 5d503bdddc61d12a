package doclinks

import (
	"errors"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// checked are the folders, from the repository root, whose comments must
// name only what exists.
var checked = []string{
	"auth", "controller", "sse",
	"mcp", "mcp/jsonrpc", "mcp/mcptest", "mcp/cluster",
	"mcp/internal/streamable", "mcp/internal/conn", "mcp/internal/protocol",
	"mcp/internal/session", "mcp/internal/wire", "mcp/internal/seal",
}

// known are the packages a comment may name as pkg.Name, by import name:
// the checked ones and their neighbours in the repository.
var known = map[string]string{
	"auth": "auth", "controller": "controller", "sse": "sse", "mcp": "mcp",
	"jsonrpc": "mcp/jsonrpc", "mcptest": "mcp/mcptest", "cluster": "mcp/cluster",
	"streamable": "mcp/internal/streamable", "conn": "mcp/internal/conn",
	"protocol": "mcp/internal/protocol", "session": "mcp/internal/session",
	"wire": "mcp/internal/wire", "seal": "mcp/internal/seal",
	"middleware": "middleware", "mcpredis": "mcpredis", "redistest": "mcpredis/redistest",
	"jsonstr": "internal/jsonstr", "reqscope": "internal/reqscope", "replay": "internal/replay", "origin": "internal/origin",
}

// names is what one package declares: top-level names, and the methods
// and fields of each type ("Type.Sel"); members holds every method and
// field name, whatever its type.
type names struct {
	top     map[string]bool
	sel     map[string]bool
	members map[string]bool
}

func (n *names) has(name string) bool { return n.top[name] }

func load(t *testing.T, root, dir string) *names {
	t.Helper()
	n := &names{top: map[string]bool{}, sel: map[string]bool{}, members: map[string]bool{}}
	fset := token.NewFileSet()
	for _, f := range parseDir(t, fset, filepath.Join(root, dir), 0) {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					n.top[d.Name.Name] = true
					continue
				}
				n.sel[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
				n.members[d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						n.top[s.Name.Name] = true
						addMembers(n, s.Name.Name, s.Type)
					case *ast.ValueSpec:
						for _, id := range s.Names {
							n.top[id.Name] = true
						}
					}
				}
			}
		}
	}
	return n
}

func addMembers(n *names, typ string, e ast.Expr) {
	var list *ast.FieldList
	switch e := e.(type) {
	case *ast.StructType:
		list = e.Fields
	case *ast.InterfaceType:
		list = e.Methods
	default:
		return
	}
	for _, f := range list.List {
		for _, id := range f.Names {
			n.sel[typ+"."+id.Name] = true
			n.members[id.Name] = true
		}
		if len(f.Names) == 0 { // embedded: its name is the field's
			name := recvName(f.Type)
			if i := strings.LastIndex(name, "."); i >= 0 {
				name = name[i+1:]
			}
			n.sel[typ+"."+name] = true
			n.members[name] = true
		}
	}
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return recvName(e.X) + "." + e.Sel.Name
	}
	return ""
}

func parseDir(t *testing.T, fset *token.FileSet, dir string, mode parser.Mode) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a package that is gone declares nothing
	}
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, mode|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

var (
	// docLink is a doc link: [Name], [Name.Sel], [pkg.Name], [pkg.Name.Sel].
	docLink = regexp.MustCompile(`(?:^|[^\w\]])\[\*?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*){0,2})\]`)
	// qualified is pkg.Name, pkg.Name.Sel, or Type.Sel (either may be a call).
	qualified = regexp.MustCompile(`(?:^|[^\w.])([a-zA-Z]\w*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)
	// call is an unqualified Name( of an exported-looking name.
	call = regexp.MustCompile(`(?:^|[^\w.])([A-Z]\w+|[a-z]+[A-Z]\w*)\(`)
)

// TestCommentsNameWhatExists reads every comment of the checked packages
// (not their tests) and fails on a name that nothing declares: a doc link,
// a pkg.Name of this repository's packages, a Type.Method of the package,
// or a call Name(…) of the package. Comments drift when code is renamed;
// go vet does not look at them.
func TestCommentsNameWhatExists(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]*names{}
	for _, dir := range known {
		pkgs[dir] = load(t, root, dir)
	}
	var bad []string
	for _, dir := range checked {
		own := pkgs[dir]
		fset := token.NewFileSet()
		for _, f := range parseDir(t, fset, filepath.Join(root, dir), parser.ParseComments) {
			imports := map[string]*names{}
			for _, im := range f.Imports {
				p := strings.Trim(im.Path.Value, `"`)
				name := p[strings.LastIndex(p, "/")+1:]
				if im.Name != nil {
					name = im.Name.Name
				}
				imports[name] = importedNames(t, root, p, pkgs)
			}
			for _, cg := range f.Comments {
				for _, c := range cg.List {
					for _, line := range strings.Split(c.Text, "\n") {
						for _, miss := range checkLine(own, pkgs, imports, line) {
							bad = append(bad, fset.Position(c.Slash).String()+": "+miss)
						}
					}
				}
			}
		}
	}
	sort.Strings(bad)
	bad = slices.Compact(bad)
	for _, b := range bad {
		rel, _ := filepath.Rel(root, strings.SplitN(b, ":", 2)[0])
		t.Errorf("%s:%s", rel, strings.SplitN(b, ":", 2)[1])
	}
}

// checkLine returns what line names that does not exist.
func checkLine(own *names, pkgs map[string]*names, imports map[string]*names, line string) []string {
	var miss []string
	// other is the package a comment means by pkg: an import of the file,
	// else one of the repository's.
	other := func(pkg string) *names {
		if own.has(pkg) {
			return nil
		}
		if n, ok := imports[pkg]; ok {
			return n
		}
		if dir, ok := known[pkg]; ok {
			return pkgs[dir]
		}
		return nil
	}
	resolve := func(parts []string) bool {
		switch len(parts) {
		case 1:
			return own.has(parts[0])
		case 2:
			if own.has(parts[0]) {
				return own.sel[parts[0]+"."+parts[1]]
			}
			if p := other(parts[0]); p != nil {
				return p.has(parts[1])
			}
			return true // another module's package: not checked here
		default:
			if p := other(parts[0]); p != nil {
				return p.has(parts[1]) && p.sel[parts[1]+"."+parts[2]]
			}
			return true
		}
	}
	for _, m := range docLink.FindAllStringSubmatch(line, -1) {
		parts := strings.Split(m[1], ".")
		if !isUpper(parts[0]) && known[parts[0]] == "" || len(m[1]) == 1 {
			continue // an index expression in code, not a link
		}
		if !resolve(parts) {
			miss = append(miss, "doc link ["+m[1]+"]")
		}
	}
	line = docLink.ReplaceAllString(line, " ") // checked above
	for _, m := range qualified.FindAllStringSubmatch(line, -1) {
		pkg, name, sel := m[1], m[2], m[3]
		if p := other(pkg); p != nil && !isUpper(pkg) {
			if !p.has(name) {
				miss = append(miss, pkg+"."+name)
			} else if sel != "" && !p.sel[name+"."+sel] && !p.members[sel] {
				miss = append(miss, pkg+"."+name+"."+sel)
			}
			continue
		}
		switch {
		case own.has(pkg) && isUpper(pkg) && !own.members[pkg]: // Meta.Raw may be a field's field
			if !own.sel[pkg+"."+name] {
				miss = append(miss, pkg+"."+name)
			}
		case isUpper(pkg) && !own.has(pkg) && !own.members[pkg]:
			// A type of an imported package, or of the repository's,
			// named without its package (Header.Get, Options.Authorize
			// in the transport that mcp's Options configures): fine
			// when one of them has it.
			found := false
			for _, p := range imports {
				found = found || p != nil && p.sel[pkg+"."+name]
			}
			for _, p := range pkgs {
				found = found || p.sel[pkg+"."+name]
			}
			if !found {
				miss = append(miss, pkg+"."+name+" (no such type and member here, in an import or in the repository)")
			}
		}
	}
	for _, m := range call.FindAllStringSubmatch(line, -1) {
		if name := m[1]; len(name) > 1 && !own.has(name) && !own.members[name] {
			miss = append(miss, name+"(")
		}
	}
	return miss
}

const module = "github.com/saguaro-go/saguaro/"

// std caches the names of the standard library packages read so far.
var std = map[string]*names{}

// importedNames returns what an imported package declares: one of the
// repository's, or one of the standard library's (read from GOROOT); nil
// for other modules, whose names are not checked.
func importedNames(t *testing.T, root, path string, pkgs map[string]*names) *names {
	if rel, ok := strings.CutPrefix(path, module); ok {
		if n, ok := pkgs[rel]; ok {
			return n
		}
		n := load(t, root, rel)
		pkgs[rel] = n
		return n
	}
	if n, ok := std[path]; ok {
		return n
	}
	var n *names
	if bp, err := build.Default.Import(path, "", build.FindOnly); err == nil && bp.Goroot {
		n = load(t, "", bp.Dir)
	}
	std[path] = n
	return n
}

func isUpper(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }

// TestCheckLine holds the checker itself to what it must catch and let be.
func TestCheckLine(t *testing.T) {
	own := &names{
		top:     map[string]bool{"Server": true, "NewServer": true, "Options": true},
		sel:     map[string]bool{"Server.Close": true, "Options.Logger": true},
		members: map[string]bool{"Close": true, "Logger": true},
	}
	http := &names{top: map[string]bool{"Handler": true, "Header": true}, sel: map[string]bool{"Header.Get": true}, members: map[string]bool{"Get": true}}
	pkgs := map[string]*names{"auth": {top: map[string]bool{"Required": true, "Config": true}, sel: map[string]bool{"Config.Resource": true}}}
	imports := map[string]*names{"http": http}
	for line, want := range map[string]string{
		"served through NewEngine(srv, …)":            "NewEngine(",
		"see [Server.Close] and [Server.Open]":        "doc link [Server.Open]",
		"wrap it in [auth.Required] or [auth.Needed]": "doc link [auth.Needed]",
		"as an http.Handlr":                           "http.Handlr",
		"set Options.Loger":                           "Options.Loger",
		"EngineOptions.TaskIDPrefix":                  "EngineOptions.TaskIDPrefix (no such type and member here, in an import or in the repository)",
		"auth's Config.Resource, Config.Resourse":     "Config.Resourse (no such type and member here, in an import or in the repository)",
		"NewServer(impl, nil) then srv.Close()":       "",
		"an http.Handler; Header.Get canonicalizes":   "",
		"m[k] and CallTool[GreetOut] are not links":   "",
		"costs O(n) for [N]byte":                      "",
	} {
		got := strings.Join(checkLine(own, pkgs, imports, line), ", ")
		if got != want {
			t.Errorf("%q: got %q, want %q", line, got, want)
		}
	}
}
