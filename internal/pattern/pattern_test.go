package pattern_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/internal/pattern"
)

func TestSize(t *testing.T) {
	for _, tt := range []struct {
		expr     string
		min, max int
	}{
		{`a`, 2, 4},
		{`(?i)because (she|he) is (married|single)`, 20, 80},
		{`[a-z ]{1000}x`, 1000, 1010},
		{`(?:[a-z ]{100}){10}x`, 1000, 1010},
		{`\w{500}Q`, 500, 510},
	} {
		n, err := pattern.Size(tt.expr)
		if err != nil || n < tt.min || n > tt.max {
			t.Errorf("Size(%q) = %d, %v; want %d to %d", tt.expr, n, err, tt.min, tt.max)
		}
	}
	if _, err := pattern.Size(`(unclosed`); err == nil {
		t.Error("an invalid expression has no size")
	}
}

// Size agrees with regexp on what compiles.
func FuzzSize(f *testing.F) {
	for _, s := range []string{`a`, `(?i)x{2,5}`, `(`, `\pL+`, `[^\x00-\x{10FFFF}]`, strings.Repeat("(a)", 50)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		n, err := pattern.Size(expr)
		_, rerr := regexp.Compile(expr)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("Size(%q) error %v, regexp.Compile error %v", expr, err, rerr)
		}
		if err == nil && n < 1 {
			t.Fatalf("Size(%q) = %d", expr, n)
		}
	})
}
