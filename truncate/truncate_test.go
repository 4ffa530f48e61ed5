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
