// Package report formats the figures of the benchmark's markdown results
// pages (durations, bytes, ratios, table cells) and writes the pages.
// Both load generators use it, so their pages read alike.
package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Dur is a latency for a table cell: µs below a millisecond, then ms;
// "–" when not positive.
func Dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
}

// SignedDur is Dur for a difference, which may be negative.
func SignedDur(d time.Duration) string {
	switch {
	case d == 0:
		return "0 µs"
	case d < 0:
		return "−" + Dur(-d)
	default:
		return "+" + Dur(d)
	}
}

// Bytes is a size in B, KiB or MiB.
func Bytes(b float64) string {
	switch {
	case b < 0:
		return "-" + Bytes(-b)
	case b < 1024:
		return fmt.Sprintf("%.0f B", b)
	case b < 1<<20:
		return fmt.Sprintf("%.1f KiB", b/1024)
	default:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	}
}

// Ratio is v / base as FmtRatio, "–" when either is not positive.
func Ratio(v, base float64) string {
	if base <= 0 || v <= 0 {
		return "–"
	}
	return FmtRatio(v / base)
}

// FmtRatio is a ratio such as "1.23×" (three decimals below 0.1), "–"
// when not positive.
func FmtRatio(x float64) string {
	if x <= 0 {
		return "–"
	}
	if x < 0.1 {
		return fmt.Sprintf("%.3f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}

// MinMax is the smallest and the largest of xs, 0, 0 when empty.
func MinMax(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// JoinInts is xs separated by ", ".
func JoinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// MDEscape makes s safe in a table cell: | escaped, newlines as spaces.
func MDEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// OrDash is s, or "–" when empty.
func OrDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// WriteFileAtomic writes b to path through a temporary file and a rename,
// creating the folder if needed, so a reader never sees half a page.
func WriteFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
