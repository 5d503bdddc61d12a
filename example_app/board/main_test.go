package board

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/saguaro-go/saguaro/example_app/database/dbtest"
)

func TestMain(m *testing.M) {
	code := dbtest.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
