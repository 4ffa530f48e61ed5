package learned

import (
	"math"
	"testing"
)

func TestUsageLog(t *testing.T) {
	l := UsageLog{}
	if r, n := l.Ratio("claude"); r != 0 || n != 0 {
		t.Fatalf("empty: %v %d", r, n)
	}
	if err := l.Observe("claude", 0, 10); err == nil {
		t.Error("a zero count was accepted")
	}
	l.Observe("claude", 100, 130)
	l.Observe("claude", 100, 110)
	if r, n := l.Ratio("claude"); r != 1.3 || n != 2 {
		t.Errorf("ratio %v over %d, want the largest, 1.3, over 2", r, n)
	}
	// The largest ages out after UsageWindow reports.
	for range UsageWindow {
		l.Observe("claude", 100, 105)
	}
	if r, n := l.Ratio("claude"); math.Abs(r-1.05) > 1e-12 || n != UsageWindow {
		t.Errorf("after the window: ratio %v over %d, want 1.05 over %d", r, n, UsageWindow)
	}
	c := l.Clone()
	c.Observe("claude", 1, 100)
	if r, _ := l.Ratio("claude"); r != 1.05 {
		t.Errorf("Clone shares the ratios: %v", r)
	}
	if r, _ := l.Ratio("gemini"); r != 0 {
		t.Errorf("another family: %v", r)
	}
}
