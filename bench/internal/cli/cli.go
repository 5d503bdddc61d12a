// Package cli holds the flag handling the load generators share: the
// list of concurrencies, and the flags given, for the results page.
package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// ParseConns parses a comma-separated list of connection counts, each
// from 1 to 1024.
func ParseConns(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return nil, fmt.Errorf("bad -conns %q", list)
		}
		out = append(out, n)
	}
	return out, nil
}

// GivenFlags is every flag set on the command line, as -name=value, but
// the ones named in skip (paths and the like, which say nothing of the
// run).
func GivenFlags(skip ...string) []string {
	var out []string
	flag.Visit(func(f *flag.Flag) {
		for _, s := range skip {
			if f.Name == s {
				return
			}
		}
		out = append(out, "-"+f.Name+"="+f.Value.String())
	})
	return out
}
