package truncate_test

import (
	"encoding/json"
	"testing"

	"github.com/contextasm/contextasm/truncate"
)

func TestStatusText(t *testing.T) {
	for _, tt := range []struct {
		s    truncate.Status
		name string
	}{{truncate.Kept, "kept"}, {truncate.Cut, "cut"}, {truncate.Dropped, "dropped"}} {
		js, err := json.Marshal(tt.s)
		if err != nil || string(js) != `"`+tt.name+`"` || tt.s.String() != tt.name {
			t.Errorf("%d: %s, %v, String %q; want %q", tt.s, js, err, tt.s.String(), tt.name)
		}
		var back truncate.Status = 99
		if err := json.Unmarshal(js, &back); err != nil || back != tt.s {
			t.Errorf("%s: read back %v, %v", js, back, err)
		}
	}
	var s truncate.Status
	if err := s.UnmarshalText([]byte("lost")); err == nil {
		t.Error(`UnmarshalText("lost"): no error`)
	}
}

// TestScoreNoWeights: a Scoring that weighs nothing scores every block 0
// rather than dividing by zero.
func TestScoreNoWeights(t *testing.T) {
	b := truncate.Block{Priority: 1, HasPriority: true, Weight: 1, Trust: 1}
	if got := (truncate.Scoring{DefaultPriority: 0.5}).Score(&b, now); got != 0 {
		t.Errorf("score = %v, want 0", got)
	}
}
