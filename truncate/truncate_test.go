package truncate_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/truncate"
)

// TestScoringWithDefaults: each zero field takes its default, each set
// field stays, and DefaultScoring returns a fresh copy a caller cannot
// change for others.
func TestScoringWithDefaults(t *testing.T) {
	d := truncate.DefaultScoring()
	if got := (truncate.Scoring{}).WithDefaults(); got != d {
		t.Errorf("zero Scoring with defaults = %+v, want %+v", got, d)
	}
	got := truncate.Scoring{StalePenalty: 0.2}.WithDefaults()
	want := d
	want.StalePenalty = 0.2
	if got != want {
		t.Errorf("Scoring{StalePenalty: 0.2} with defaults = %+v, want %+v", got, want)
	}
	got = truncate.Scoring{Priority: 2, Trust: -1}.WithDefaults()
	if got.Priority != 2 || got.Trust != -1 || got.SemanticWeight != d.SemanticWeight || got.DefaultPriority != d.DefaultPriority {
		t.Errorf("partial Scoring with defaults = %+v", got)
	}
	mine := truncate.DefaultScoring()
	mine.Priority = 99
	if truncate.DefaultScoring().Priority == 99 {
		t.Error("changing a DefaultScoring() result changed the default")
	}
}

func TestRequiredError(t *testing.T) {
	err := error(&truncate.RequiredError{Misses: []truncate.RequiredMiss{
		{RequestID: "a", Reason: outcome.ReasonNoSection},
		{RequestID: "b", Section: "S", Tokens: 40, Limit: 30, Reason: outcome.ReasonSectionCap},
		{RequestID: "c", Section: "S", Tokens: 90, Limit: 80, Reason: outcome.ReasonBudget},
	}})
	if !errors.Is(err, truncate.ErrBudgetTooSmall) {
		t.Errorf("%v does not wrap ErrBudgetTooSmall", err)
	}
	for _, want := range []string{`"a": no section`, `"b" (40 tokens)`, `max_tokens 30`, `"c" (90 tokens, section "S")`, `budget of 80`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
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
