package assemble_test

import (
	"testing"

	"github.com/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/truncate"
)

// TestScoreNoWeights: a Scoring whose weights sum to zero scores every
// block 0 rather than dividing by zero.
func TestScoreNoWeights(t *testing.T) {
	b := assemble.Block{Priority: 1, HasPriority: true, Weight: 1, Trust: 1}
	if got := assemble.Score(truncate.Scoring{Priority: 1, SemanticWeight: -0.5, Trust: -0.5}, &b, now); got != 0 {
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
		if got := assemble.StartsLineCleanly(tt.s); got != tt.want {
			t.Errorf("StartsLineCleanly(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
