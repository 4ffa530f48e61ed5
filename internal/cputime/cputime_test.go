package cputime_test

import (
	"runtime"
	"testing"

	"github.com/contextasm/contextasm/internal/cputime"
)

// TestProcessGrows: work done shows in the process's CPU time, which never
// goes back.
func TestProcessGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no CPU time on this system")
	}
	before := cputime.Process()
	x := 0
	for i := range 50_000_000 {
		x ^= i * i
	}
	after := cputime.Process()
	if after <= before {
		t.Fatalf("CPU time %v then %v after work (%d)", before, after, x)
	}
}
