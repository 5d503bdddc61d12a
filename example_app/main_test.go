package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/saguaro-go/saguaro/example_app/database/dbtest"
)

func TestMain(m *testing.M) {
	code := dbtest.Main(m)
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// binDir holds the app's binary once exampleBin built it.
var binDir string

// exampleBin builds the app once per test binary, for the tests that run
// it as a process; TestMain removes it.
var exampleBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "saguaro-example-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "example_app")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%w\n%s", err, out)
	}
	return bin, nil
})
