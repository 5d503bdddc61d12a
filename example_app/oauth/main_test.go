package oauth

import (
	"io"
	"log/slog"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/saguaro-go/saguaro/example_app/database/dbtest"
)

func TestMain(m *testing.M) {
	// op logs every refused request on slog's default logger; the
	// refusals are what these tests are made of.
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	code := dbtest.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
