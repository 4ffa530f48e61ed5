package outcome_test

import (
	"fmt"
	"testing"

	"github.com/contextasm/contextasm/outcome"
)

// row is a block of one section: its status, reason, score and relevance
// points.
func row(id string, st outcome.Status, reason outcome.Reason, score, points float64) outcome.BlockResult {
	return outcome.BlockResult{RequestID: id, Status: st, Reason: reason, Score: score, RelevancePoints: points}
}

// lost lists the ids MarkLostOnRelevance marks.
func lost(rows []outcome.BlockResult) []string {
	outcome.MarkLostOnRelevance(rows)
	var ids []string
	for _, r := range rows {
		if r.LostOnRelevance {
			ids = append(ids, r.RequestID)
		}
	}
	return ids
}

func TestMarkLostOnRelevance(t *testing.T) {
	k, c, d := outcome.StatusKept, outcome.StatusCut, outcome.StatusDropped
	req := func(r outcome.BlockResult) outcome.BlockResult { r.Required = true; return r }
	for _, tt := range []struct {
		name string
		rows []outcome.BlockResult
		want string
	}{
		{"a kept block above by its points alone", []outcome.BlockResult{
			row("hit", k, "", 0.60, 0.30),                    // 0.30 without relevance
			row("lost", d, outcome.ReasonBudget, 0.45, 0.02), // 0.43: it would rank first
		}, "[lost]"},
		{"the block above outscores it without relevance too", []outcome.BlockResult{
			row("hit", k, "", 0.60, 0.10),                    // 0.50
			row("fair", d, outcome.ReasonBudget, 0.45, 0.02), // 0.43
		}, "[]"},
		{"equal without relevance: the tie, not relevance, decided", []outcome.BlockResult{
			row("hit", k, "", 0.60, 0.17), // 0.43
			row("tie", d, outcome.ReasonSectionCap, 0.45, 0.02),
		}, "[]"},
		{"no relevance in the section", []outcome.BlockResult{
			row("a", k, "", 0.6, 0), row("b", d, outcome.ReasonBudget, 0.5, 0), row("small", k, "", 0.4, 0),
		}, "[]"},
		{"a block kept below it (it fitted, the dropped one did not) is no rival", []outcome.BlockResult{
			row("top", k, "", 0.9, 0),
			row("big", d, outcome.ReasonSectionCap, 0.5, 0.05), // 0.45
			row("small", k, "", 0.44, 0.30),                    // 0.14, but ranked below
		}, "[]"},
		{"a required block above is kept whatever its score", []outcome.BlockResult{
			req(row("must", k, "", 0.5, 0.40)), // 0.10
			row("out", d, outcome.ReasonBudget, 0.45, 0),
		}, "[]"},
		{"a cut block is in the text; every room reason counts", []outcome.BlockResult{
			row("part", c, outcome.ReasonCut, 0.8, 0.5), // 0.30
			row("cap", d, outcome.ReasonSectionCap, 0.7, 0),
			row("grp", d, outcome.ReasonGroup, 0.6, 0),
			row("stick", d, outcome.ReasonSticky, 0.5, 0),
			row("slack", d, outcome.ReasonSlack, 0.4, 0),
			row("budget", d, outcome.ReasonBudget, 0.35, 0.01),
			row("low", d, outcome.ReasonBudget, 0.3, 0.01), // 0.29: below the cut block without relevance too
		}, "[cap grp stick slack budget]"},
		{"left out for another reason than room", []outcome.BlockResult{
			row("hit", k, "", 0.9, 0.8),
			row("summed", d, outcome.ReasonSummarized, 0.5, 0),
			row("first", d, outcome.ReasonFirstMessage, 0.5, 0),
			row("summary", d, outcome.ReasonTurnsKept, 0.5, 0),
		}, "[]"},
		{"nothing kept above it", []outcome.BlockResult{
			row("out", d, outcome.ReasonSectionCap, 0.9, 0), row("in", k, "", 0.5, 0.4),
		}, "[]"},
		{"figures as the rows show them: 0.3 - 0.1 against 0.2", []outcome.BlockResult{
			row("hit", k, "", 0.3, 0.1),
			row("even", d, outcome.ReasonBudget, 0.2, 0), // 0.2 = 0.2 exactly in ten-thousandths
		}, "[]"},
	} {
		if got := fmt.Sprint(lost(tt.rows)); got != tt.want {
			t.Errorf("%s: lost on relevance %s, want %s", tt.name, got, tt.want)
		}
	}
}

// Marking again gives the same rows, and a mark the figures no longer
// support is cleared.
func TestMarkLostOnRelevanceClears(t *testing.T) {
	rows := []outcome.BlockResult{row("hit", outcome.StatusKept, "", 0.6, 0.3), row("lost", outcome.StatusDropped, outcome.ReasonBudget, 0.45, 0)}
	if got := fmt.Sprint(lost(rows)); got != "[lost]" {
		t.Fatalf("first mark %s", got)
	}
	if got := fmt.Sprint(lost(rows)); got != "[lost]" {
		t.Errorf("marked twice: %s", got)
	}
	rows[0].RelevancePoints = 0
	if got := fmt.Sprint(lost(rows)); got != "[]" {
		t.Errorf("without the kept block's points: %s, want none", got)
	}
}

// The rival is the block above that relevance lifted furthest: the
// lowest without relevance; the iterator stops when asked.
func TestLostOnRelevanceRival(t *testing.T) {
	k, d := outcome.StatusKept, outcome.StatusDropped
	rows := []outcome.BlockResult{
		row("a", k, "", 0.70, 0.20),                // 0.50
		row("b", k, "", 0.65, 0.45),                // 0.20: the rival
		row("c", k, "", 0.60, 0.30),                // 0.30
		row("x", d, outcome.ReasonBudget, 0.55, 0), // 0.55: above all three
		row("y", d, outcome.ReasonBudget, 0.25, 0), // 0.25: above b only
	}
	var got []string
	for i, rival := range outcome.LostOnRelevance(rows) {
		got = append(got, rows[i].RequestID+"<"+rows[rival].RequestID)
	}
	if fmt.Sprint(got) != "[x<b y<b]" {
		t.Errorf("lost to %v, want [x<b y<b]", got)
	}
	n := 0
	for range outcome.LostOnRelevance(rows) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("the loop ran %d times after a break", n)
	}
}
