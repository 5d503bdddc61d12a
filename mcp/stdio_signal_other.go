//go:build !unix

package mcp

// keepBrokenPipe has nothing to do where there is no SIGPIPE.
func keepBrokenPipe() func() { return func() {} }
