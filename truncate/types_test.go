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

func TestStartsLineCleanly(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"", false},
		{"a", true},
		{"<rule>", true},
		{"【硬性规则】", true},
		{"用户", true},
		{"42", true},
		{"\\", true}, // a backslash
		{"#", true},
		{"\u2060x", true}, // the word joiner is a format character, not white space
		{"🚀", true},
		{"/", false},
		{"//x", false},
		{" x", false},
		{"\tx", false},
		{"\nx", false},
		{"\r\n", false},
		{"\v", false},
		{"\f", false},
		{"\u0085x", false},  // next line
		{"\u00a0x", false},  // no-break space
		{"\u2028", false},   // line separator
		{"\u2029", false},   // paragraph separator
		{"\u3000x", false},  // ideographic space
		{"\u2003x", false},  // em space
		{"\xffx", false},    // not UTF-8
		{"\xe4\xb8", false}, // a character cut short
	} {
		if got := truncate.StartsLineCleanly(tt.s); got != tt.want {
			t.Errorf("StartsLineCleanly(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
