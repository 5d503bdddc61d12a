package version

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository's root, from this package's folder.
const root = "../.."

// release matches a Keep a Changelog release heading, "## [1.2.3] -
// 2026-12-02"; Unreleased is not a release.
var release = regexp.MustCompile(`^## \[(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\] - (\d{4}-\d{2}-\d{2})$`)

// newestRelease returns the first release heading of CHANGELOG.md.
func newestRelease(t *testing.T) (version, date string) {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "CHANGELOG.md"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := release.FindStringSubmatch(sc.Text()); m != nil {
			return m[1], m[2]
		}
		require.False(t, strings.HasPrefix(sc.Text(), "## [") && !strings.HasPrefix(sc.Text(), "## [Unreleased]"),
			"a release heading must read \"## [X.Y.Z] - YYYY-MM-DD\": %q", sc.Text())
	}
	require.NoError(t, sc.Err())
	t.Fatal("CHANGELOG.md has no release heading")
	return "", ""
}

func TestVersionIsTheNewestRelease(t *testing.T) {
	v, _ := newestRelease(t)
	assert.Equal(t, v, Version, "internal/version.Version and CHANGELOG.md's newest release must agree")
}

// mcpredis is released with the core it requires: the mcpredis tag made
// from this tree must build against a core tag that exists.
func TestMcpredisRequiresThisRelease(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "mcpredis", "go.mod"))
	require.NoError(t, err)
	require.Regexp(t, `(?m)^\s*github\.com/saguaro-go/saguaro v`+regexp.QuoteMeta(Version)+`$`, string(data),
		"mcpredis/go.mod must require the core at v%s", Version)
}

// The changelog keeps its Unreleased section above the releases and links
// every heading to what it compares.
func TestChangelogShape(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	require.NoError(t, err)
	text := string(data)
	unreleased := strings.Index(text, "\n## [Unreleased]\n")
	newest := strings.Index(text, "\n## ["+Version+"] - ")
	require.GreaterOrEqual(t, unreleased, 0, "an Unreleased section collects the changes since the last release")
	require.Greater(t, newest, unreleased, "Unreleased comes first")
	for _, h := range regexp.MustCompile(`(?m)^## \[([^\]]+)\]`).FindAllStringSubmatch(text, -1) {
		assert.Regexp(t, `(?m)^\[`+regexp.QuoteMeta(h[1])+`\]: https://`, text, "heading %q needs its link at the end", h[1])
	}
}
