package assemble_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/truncate"
)

// conversationTurns returns n history turns of equal weight, turn-1 the
// oldest, one minute apart, declared in order.
func conversationTurns(n int) []assemble.Block {
	blocks := make([]assemble.Block, n)
	for i := range blocks {
		b := block(fmt.Sprintf("turn-%d", i+1), declare.History, fmt.Sprintf("USER: question number %d about the fees?", i+1))
		b.LastModified = now.Add(time.Duration(i-n) * time.Minute)
		b.Seq = int64(i + 1)
		blocks[i] = b
	}
	slices.SortFunc(blocks, func(a, b assemble.Block) int { return cmpString(a.ID, b.ID) })
	return blocks
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// rankOf returns the section's blocks in rank order.
func rankOf(out *assemble.Output) []string {
	var ids []string
	for _, b := range out.Sections[0].Blocks {
		ids = append(ids, b.RequestID)
	}
	return ids
}

const historyTemplate = `{"budget": 4096, "sections": [
  {"name": "H", "priority": 1, "memory_types": ["history"], "max_tokens": %d, "render": "{content}", "order": "time"}]}`

// TestHistoryNewestFirst: with equal weights, history ranks newest first
// (turn-10 is not ranked above turn-2 by its id), and a section too small
// for every turn keeps the newest ones.
func TestHistoryNewestFirst(t *testing.T) {
	blocks := conversationTurns(12)
	out := mustAssemble(t, mustParse(t, fmt.Sprintf(historyTemplate, 4000)), blocks, assemble.Request{Now: now})
	want := []string{"turn-12", "turn-11", "turn-10", "turn-9", "turn-8", "turn-7", "turn-6", "turn-5", "turn-4", "turn-3", "turn-2", "turn-1"}
	if got := rankOf(out); !slices.Equal(got, want) {
		t.Errorf("rank = %v, want newest first %v", got, want)
	}

	tok := realTokenizer(t)
	lineTokens := tok.Count("USER: question number 10 about the fees?\n")
	small := mustAssemble(t, mustParse(t, fmt.Sprintf(historyTemplate, 3*lineTokens)), blocks, assemble.Request{Now: now})
	st := statuses(small)
	for id, s := range st {
		keep := id == "turn-12" || id == "turn-11" || id == "turn-10"
		if keep != (s == "kept") {
			t.Errorf("%s is %s; a section for three turns keeps the newest three (%v)", id, s, st)
		}
	}
}

// TestHistoryWeightsOverride: a weightier old turn outranks newer ones by
// the margin the Scoring documents, and with a tiny Recency weights alone
// decide.
func TestHistoryWeightsOverride(t *testing.T) {
	s := truncate.DefaultScoring()
	at := func(age time.Duration, w float64) *assemble.Block {
		b := block("b", declare.History, "x")
		b.LastModified, b.Weight = now.Add(-age), w
		return &b
	}
	// The documented break-even: 0.1 of semantic weight is worth about
	// two minutes between recent turns; a day-old turn outranks turns up
	// to about 12 hours newer.
	for _, c := range []struct {
		older, newer time.Duration
		wins         bool
	}{
		{2 * time.Minute, 0, true}, {3 * time.Minute, 0, false},
		{24 * time.Hour, 13 * time.Hour, true}, {24 * time.Hour, 11 * time.Hour, false},
	} {
		heavy, light := assemble.Score(s, at(c.older, 0.6), now), assemble.Score(s, at(c.newer, 0.5), now)
		if (heavy > light) != c.wins {
			t.Errorf("weight 0.6 at %v (%.4f) vs weight 0.5 at %v (%.4f): heavier wins = %v, want %v", c.older, heavy, c.newer, light, heavy > light, c.wins)
		}
	}
	// Recency does not touch other memory types.
	ctx := block("c", declare.Context, "x")
	ctx.LastModified = now
	if got, want := assemble.Score(s, &ctx, now), assemble.Score(s, &ctx, now.Add(1000*time.Hour)); got != want {
		t.Errorf("a context block's score moved with its age: %v vs %v", got, want)
	}

	blocks := conversationTurns(5)
	for i := range blocks {
		if blocks[i].ID == "turn-1" {
			blocks[i].Weight = 0.9
		}
	}
	asm := &assemble.Assembler{Scoring: truncate.Scoring{Recency: 1e-9}}
	out, err := asm.Assemble(mustParse(t, fmt.Sprintf(historyTemplate, 4000)), blocks, assemble.Request{Now: now}, realTokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	// Weights alone: turn-1 first; the rest tie on score (recency
	// ×1e-9 still orders them newest first, never by id).
	if got, want := rankOf(out), []string{"turn-1", "turn-5", "turn-4", "turn-3", "turn-2"}; !slices.Equal(got, want) {
		t.Errorf("rank with tiny recency = %v, want %v", got, want)
	}
}

// TestHistoryTies: blocks of equal score and different times never fall
// to id order; equal times fall to declaration order (later first), then
// to id; undated blocks rank by declaration. Every input order of the
// same blocks (with their Seq) ranks alike.
func TestHistoryTies(t *testing.T) {
	mk := func(id string, lm time.Time, seq int64) assemble.Block {
		b := block(id, declare.History, "turn "+id)
		b.LastModified, b.Seq = lm, seq
		return b
	}
	future := now.Add(time.Hour) // recency is 1 for every future time: a tie on score
	blocks := []assemble.Block{
		mk("a", future, 1), mk("b", future.Add(time.Minute), 2), // b newer
		mk("c", time.Time{}, 3), mk("d", time.Time{}, 4), // undated: d declared later
		mk("e", now.Add(-time.Hour), 6), mk("f", now.Add(-time.Hour), 5), // same instant: e declared later
	}
	want := []string{"b", "a", "e", "f", "d", "c"}
	tpl := mustParse(t, fmt.Sprintf(historyTemplate, 4000))
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10 {
		work := slices.Clone(blocks)
		rng.Shuffle(len(work), func(i, j int) { work[i], work[j] = work[j], work[i] })
		out := mustAssemble(t, tpl, work, assemble.Request{Now: now})
		if got := rankOf(out); !slices.Equal(got, want) {
			t.Fatalf("rank = %v, want %v", got, want)
		}
		for _, b := range out.Sections[0].Blocks {
			if b.Status != outcome.StatusKept {
				t.Fatalf("%s is %v", b.RequestID, b.Status)
			}
		}
	}
}
