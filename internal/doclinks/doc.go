// Package doclinks has no code: its test reads the comments of the
// library's packages and fails on a name that nothing declares, since
// comments drift when code is renamed and neither the compiler nor go vet
// reads them.
package doclinks
