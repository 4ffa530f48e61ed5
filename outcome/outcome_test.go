package outcome_test

import (
	"encoding/json"
	"testing"

	"github.com/contextasm/contextasm/outcome"
)

func TestStatusText(t *testing.T) {
	for _, tt := range []struct {
		s    outcome.Status
		name string
	}{{outcome.StatusKept, "kept"}, {outcome.StatusCut, "cut"}, {outcome.StatusDropped, "dropped"}} {
		js, err := json.Marshal(tt.s)
		if err != nil || string(js) != `"`+tt.name+`"` || tt.s.String() != tt.name {
			t.Errorf("%d: %s, %v, String %q; want %q", tt.s, js, err, tt.s.String(), tt.name)
		}
		var back outcome.Status = 99
		if err := json.Unmarshal(js, &back); err != nil || back != tt.s {
			t.Errorf("%s: read back %v, %v", js, back, err)
		}
	}
	var s outcome.Status
	if err := s.UnmarshalText([]byte("lost")); err == nil {
		t.Error(`UnmarshalText("lost"): no error`)
	}
}
