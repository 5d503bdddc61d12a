package main

import (
	"fmt"
	"go/types"
	"strconv"
	"strings"
)

// A feature is one line of the API file: "pkg PATH, " and one of
//
//	const NAME TYPE = VALUE
//	var NAME TYPE
//	func NAME[TYPEPARAMS](PARAMS) RESULTS
//	type NAME[TYPEPARAMS] struct | interface | UNDERLYING
//	type NAME = TYPE
//	type NAME struct, FIELD TYPE `TAG`
//	type NAME struct, embedded TYPE
//	type NAME interface, METHOD(PARAMS) RESULTS
//	type NAME interface, unexported methods
//	type NAME interface, TERMS
//	method (RECEIVER) NAME(PARAMS) RESULTS
//
// A struct's fields and methods promoted from an embedded type that a user
// cannot name (unexported, or in an internal package) are listed as the
// struct's own; those promoted from a type the user can name are that
// type's API, recorded once under "embedded".

// featureSet collects the features of one package.
type featureSet struct {
	pkg    *types.Package
	prefix string
	lines  []string
}

// features returns the lines of pkg's exported API, unsorted.
func features(pkg *types.Package) []string {
	f := &featureSet{pkg: pkg, prefix: "pkg " + pkg.Path() + ", "}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		switch obj := scope.Lookup(name).(type) {
		case *types.Const:
			if obj.Exported() {
				f.add("const %s %s = %s", name, f.typ(obj.Type()), obj.Val().ExactString())
			}
		case *types.Var:
			if obj.Exported() {
				f.add("var %s %s", name, f.typ(obj.Type()))
			}
		case *types.Func:
			if obj.Exported() {
				f.add("func %s%s", name, signatureString(pkg, obj.Type().(*types.Signature)))
			}
		case *types.TypeName:
			if obj.Exported() {
				f.typeName(obj)
			}
		}
	}
	return f.lines
}

func (f *featureSet) add(format string, args ...any) {
	f.lines = append(f.lines, f.prefix+fmt.Sprintf(format, args...))
}

func (f *featureSet) typ(t types.Type) string { return typeString(f.pkg, t) }

// typeName records a declared type or alias with its members.
func (f *featureSet) typeName(obj *types.TypeName) {
	name := obj.Name()
	if obj.IsAlias() {
		params := ""
		rhs := types.Unalias(obj.Type())
		if a, ok := obj.Type().(*types.Alias); ok {
			params = typeParamsString(f.pkg, a.TypeParams())
			rhs = a.Rhs()
		}
		f.add("type %s%s = %s", name, params, f.typ(rhs))
		// An alias of a type a user cannot name elsewhere (one in an
		// internal package) is where that type's API is published.
		if n, ok := types.Unalias(obj.Type()).(*types.Named); ok && !importable(n.Obj().Pkg()) {
			f.members(name, n)
		}
		return
	}
	n, ok := obj.Type().(*types.Named)
	if !ok {
		return
	}
	params := typeParamsString(f.pkg, n.TypeParams())
	switch u := n.Underlying().(type) {
	case *types.Struct:
		f.add("type %s%s struct", name, params)
	case *types.Interface:
		f.add("type %s%s interface", name, params)
	default:
		f.add("type %s%s %s", name, params, f.typ(u))
	}
	f.members(name, n)
}

// members records the fields and methods of n under the name a user
// calls it by.
func (f *featureSet) members(name string, n *types.Named) {
	switch u := n.Underlying().(type) {
	case *types.Interface:
		f.interfaceMembers(name, u)
		return // its methods are the interface's, recorded above
	case *types.Struct:
		f.fields(name, u, map[*types.Named]bool{n: true})
	}
	recv := name
	if l := n.TypeParams(); l.Len() > 0 {
		names := make([]string, l.Len())
		for i := range l.Len() {
			names[i] = l.At(i).Obj().Name()
		}
		recv += "[" + strings.Join(names, ", ") + "]"
	}
	seen := map[string]bool{}
	for _, t := range []types.Type{n, types.NewPointer(n)} {
		ms := types.NewMethodSet(t)
		for i := range ms.Len() {
			sel := ms.At(i)
			m := sel.Obj()
			if !m.Exported() || seen[m.Name()] || promotedFromNameable(n, sel.Index()) {
				continue
			}
			seen[m.Name()] = true
			r := recv
			if _, ptr := t.(*types.Pointer); ptr {
				r = "*" + recv
			}
			f.add("method (%s) %s%s", r, m.Name(), signatureString(f.pkg, m.Type().(*types.Signature)))
		}
	}
}

// fields records a struct's exported fields, and those promoted from
// embedded types a user cannot name. seen guards against a type that
// embeds itself through a pointer.
func (f *featureSet) fields(name string, st *types.Struct, seen map[*types.Named]bool) {
	for i := range st.NumFields() {
		fld := st.Field(i)
		tag := tagString(st.Tag(i))
		if !fld.Embedded() {
			if fld.Exported() {
				f.add("type %s struct, %s %s%s", name, fld.Name(), f.typ(fld.Type()), tag)
			}
			continue
		}
		if nameable(fld.Type()) {
			f.add("type %s struct, embedded %s%s", name, f.typ(fld.Type()), tag)
			continue
		}
		if n := namedOf(fld.Type()); n != nil && !seen[n] {
			if inner, ok := n.Underlying().(*types.Struct); ok {
				seen[n] = true
				f.fields(name, inner, seen)
			}
		}
	}
}

// interfaceMembers records an interface's exported methods (its own and
// embedded ones), whether it has unexported ones (then no user can
// implement it, and adding a method is compatible), and a constraint's
// type terms.
func (f *featureSet) interfaceMembers(name string, it *types.Interface) {
	sealed := false
	for i := range it.NumMethods() {
		m := it.Method(i)
		if !m.Exported() {
			sealed = true
			continue
		}
		f.add("type %s interface, %s%s", name, m.Name(), signatureString(f.pkg, m.Type().(*types.Signature)))
	}
	if sealed {
		f.add("type %s interface, unexported methods", name)
	}
	for i := range it.NumEmbeddeds() {
		if e := it.EmbeddedType(i); !types.IsInterface(e) {
			f.add("type %s interface, %s", name, f.typ(e))
		}
	}
}

// promotedFromNameable reports whether a method reached through the
// embedded fields at index (all but its last element) comes through a
// type the user can name, whose own API then holds it.
func promotedFromNameable(n *types.Named, index []int) bool {
	if len(index) < 2 {
		return false
	}
	st, ok := n.Underlying().(*types.Struct)
	if !ok {
		return false
	}
	return nameable(st.Field(index[0]).Type())
}

// nameable reports whether t (or *t) is an exported named type of a
// package a user can import, so its API is recorded with its package.
func nameable(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	switch t := t.(type) {
	case *types.Named:
		return t.Obj().Exported() && importable(t.Obj().Pkg())
	case *types.Alias:
		return t.Obj().Exported() && importable(t.Obj().Pkg())
	}
	return false
}

// namedOf returns the named type t is, or points to, or nil.
func namedOf(t types.Type) *types.Named {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	return n
}

// typeParamsString returns a declaration's type parameter list, or "".
func typeParamsString(pkg *types.Package, l *types.TypeParamList) string {
	w := &writer{pkg: pkg}
	w.typeParams(l)
	return w.b.String()
}

// tagString returns a struct tag as the source would write it, with a
// leading space, or "" for no tag.
func tagString(tag string) string {
	if tag == "" {
		return ""
	}
	if strings.ContainsAny(tag, "`\n") {
		return " " + strconv.Quote(tag)
	}
	return " `" + tag + "`"
}
