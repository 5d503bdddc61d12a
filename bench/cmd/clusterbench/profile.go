package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/probe"
)

// profileRelay runs one relayed slice at conns connections while both
// replicas record a CPU profile, and writes them into dir as
// relay-owner.cpu.pprof (A) and relay-relaying.cpu.pprof (B), for go tool
// pprof. Nothing of it is reported on the results page.
func profileRelay(dir string, a, b *target, conns int, secs int, timeout time.Duration) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Printf("profile: %v", err)
		return
	}
	var wg sync.WaitGroup
	for name, t := range map[string]*target{"relay-owner": a, "relay-relaying": b} {
		wg.Go(func() {
			file := filepath.Join(dir, name+".cpu.pprof")
			if err := fetchProfile(t.procs[0], "/debug/pprof/profile?seconds="+strconv.Itoa(secs), file); err != nil {
				log.Printf("profile %s: %v", name, err)
				return
			}
			log.Printf("profile: wrote %s", file)
		})
	}
	// The profiles start with their requests: warm up meanwhile, then
	// measure for about as long as they record.
	r := runPathSlice(a, b, pathRelayed, conns, 100*time.Millisecond, time.Duration(secs)*time.Second, timeout)
	wg.Wait()
	log.Printf("profile: relayed slice at c=%d: %d calls%s", conns, r.OK, failNote(&r.Fail))
}

// fetchProfile saves what the admin endpoint of p serves at path.
func fetchProfile(p *child, path, file string) error {
	base := strings.TrimSuffix(p.Ready.ProbeURL, probe.Path)
	resp, err := http.Get(base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", path, resp.StatusCode)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
