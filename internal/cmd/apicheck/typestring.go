package main

import (
	"go/types"
	"strconv"
	"strings"
)

// writer prints types as the API file records them. It is written here
// rather than taken from types.TypeString because the file must not change
// with the Go release that prints it, and it must leave out what is not
// API: parameter and result names, how an empty interface was spelled.
type writer struct {
	pkg *types.Package // the package whose names print unqualified
	b   strings.Builder
}

// typeString returns t as the API file writes it, relative to pkg.
func typeString(pkg *types.Package, t types.Type) string {
	w := &writer{pkg: pkg}
	w.typ(t)
	return w.b.String()
}

// signatureString returns a function's type parameters, parameters and
// results, without the func keyword: "[T any](int, ...string) (T, error)".
func signatureString(pkg *types.Package, s *types.Signature) string {
	w := &writer{pkg: pkg}
	w.typeParams(s.TypeParams())
	w.signature(s)
	return w.b.String()
}

func (w *writer) str(s string) { w.b.WriteString(s) }

// qualified writes a package-level name, qualified by its package's name
// unless it is w.pkg's.
func (w *writer) qualified(obj types.Object) {
	if p := obj.Pkg(); p != nil && p != w.pkg {
		w.str(p.Name())
		w.str(".")
	}
	w.str(obj.Name())
}

func (w *writer) typ(t types.Type) {
	switch t := t.(type) {
	case *types.Basic:
		w.str(t.Name())
	case *types.Pointer:
		w.str("*")
		w.typ(t.Elem())
	case *types.Slice:
		w.str("[]")
		w.typ(t.Elem())
	case *types.Array:
		w.str("[" + strconv.FormatInt(t.Len(), 10) + "]")
		w.typ(t.Elem())
	case *types.Map:
		w.str("map[")
		w.typ(t.Key())
		w.str("]")
		w.typ(t.Elem())
	case *types.Chan:
		w.chanType(t)
	case *types.Signature:
		w.str("func")
		w.signature(t)
	case *types.Struct:
		w.structType(t)
	case *types.Interface:
		w.interfaceType(t)
	case *types.Union:
		for i := range t.Len() {
			if i > 0 {
				w.str(" | ")
			}
			if t.Term(i).Tilde() {
				w.str("~")
			}
			w.typ(t.Term(i).Type())
		}
	case *types.TypeParam:
		w.str(t.Obj().Name())
	case *types.Alias:
		w.qualified(t.Obj())
		w.typeArgs(t.TypeArgs())
	case *types.Named:
		w.qualified(t.Obj())
		w.typeArgs(t.TypeArgs())
	case *types.Tuple:
		w.tuple(t, false)
	default:
		// A kind of type newer than this writer: its own spelling is
		// better than nothing, and a change of it still shows.
		w.str(types.TypeString(t, func(p *types.Package) string {
			if p == w.pkg {
				return ""
			}
			return p.Name()
		}))
	}
}

func (w *writer) chanType(t *types.Chan) {
	switch t.Dir() {
	case types.SendOnly:
		w.str("chan<- ")
	case types.RecvOnly:
		w.str("<-chan ")
	default:
		w.str("chan ")
	}
	// chan (<-chan T) needs its parentheses, or it reads as chan<- (chan T).
	if e, ok := t.Elem().(*types.Chan); ok && t.Dir() == types.SendRecv && e.Dir() == types.RecvOnly {
		w.str("(")
		w.typ(e)
		w.str(")")
		return
	}
	w.typ(t.Elem())
}

func (w *writer) structType(t *types.Struct) {
	if t.NumFields() == 0 {
		w.str("struct{}")
		return
	}
	w.str("struct{ ")
	for i := range t.NumFields() {
		if i > 0 {
			w.str("; ")
		}
		f := t.Field(i)
		if !f.Embedded() {
			w.str(f.Name())
			w.str(" ")
		}
		w.typ(f.Type())
		w.str(tagString(t.Tag(i)))
	}
	w.str(" }")
}

// interfaceType writes an interface literal: its explicit methods and
// embedded types in order. Every empty interface is "any", however the
// source spelled it.
func (w *writer) interfaceType(t *types.Interface) {
	if t.NumExplicitMethods() == 0 && t.NumEmbeddeds() == 0 {
		w.str("any")
		return
	}
	if t.IsImplicit() && t.NumEmbeddeds() == 1 {
		// A constraint written as a bare union: [T ~int | ~string].
		w.typ(t.EmbeddedType(0))
		return
	}
	w.str("interface{ ")
	n := 0
	for i := range t.NumEmbeddeds() {
		if n > 0 {
			w.str("; ")
		}
		w.typ(t.EmbeddedType(i))
		n++
	}
	for i := range t.NumExplicitMethods() {
		if n > 0 {
			w.str("; ")
		}
		m := t.ExplicitMethod(i)
		w.str(m.Name())
		w.signature(m.Type().(*types.Signature))
		n++
	}
	w.str(" }")
}

// signature writes "(params) results" with no names.
func (w *writer) signature(s *types.Signature) {
	w.tuple(s.Params(), s.Variadic())
	switch r := s.Results(); r.Len() {
	case 0:
	case 1:
		w.str(" ")
		w.typ(r.At(0).Type())
	default:
		w.str(" ")
		w.tuple(r, false)
	}
}

func (w *writer) tuple(t *types.Tuple, variadic bool) {
	w.str("(")
	for i := range t.Len() {
		if i > 0 {
			w.str(", ")
		}
		typ := t.At(i).Type()
		if variadic && i == t.Len()-1 {
			w.str("...")
			// The last parameter of a variadic function is a slice, except
			// in append-like signatures where it may be a string.
			if s, ok := typ.(*types.Slice); ok {
				typ = s.Elem()
			}
		}
		w.typ(typ)
	}
	w.str(")")
}

// typeParams writes a declaration's type parameter list, "[K comparable,
// V any]", or nothing.
func (w *writer) typeParams(l *types.TypeParamList) {
	if l.Len() == 0 {
		return
	}
	w.str("[")
	for i := range l.Len() {
		if i > 0 {
			w.str(", ")
		}
		p := l.At(i)
		w.str(p.Obj().Name())
		w.str(" ")
		w.typ(p.Constraint())
	}
	w.str("]")
}

// typeArgs writes an instantiated type's arguments, "[int, string]".
func (w *writer) typeArgs(l *types.TypeList) {
	if l.Len() == 0 {
		return
	}
	w.str("[")
	for i := range l.Len() {
		if i > 0 {
			w.str(", ")
		}
		w.typ(l.At(i))
	}
	w.str("]")
}
