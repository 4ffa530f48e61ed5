package assemble_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/lexical"
	"github.com/contextasm/contextasm/truncate"
)

// The room a conversation's questions recall into: a fresh decision's
// stable part is bounded (boundStable), a turn another question recalled
// holds no margin (candidate.holds), the question ends the text, and the
// host's relevance takes its own share.

// recallCall assembles blocks under tpl for a request with query (or the
// host's scores host; with neither, the newest user turn's), following
// prev.
func recallCall(t *testing.T, blocks []assemble.Block, tplJSON, query string, host map[string]float64, prev *assemble.Decision) *assemble.Output {
	t.Helper()
	var asm assemble.Assembler
	req := assemble.Request{Now: now, SessionID: "s1", Previous: prev, Record: true}
	switch {
	case host != nil:
		req.Relevance, req.QueryKey = host, fmt.Sprint(host)
	case query != "":
		req.Query, req.QueryKey = lexical.NewQuery(query), query
	default:
		req.NewestTurnQuery = true
	}
	out, err := asm.Assemble(mustParse(t, tplJSON), blocks, req, realTokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFreshStableIsBounded: a fresh decision with a query records as
// recalled every kept block past 1 − λ of what the section holds, newest
// first, so that what it kept for leftover room is not the next
// question's stable part; the text ends with the question.
func TestFreshStableIsBounded(t *testing.T) {
	blocks := conversationBlocks(rand.New(rand.NewPCG(5, 6)), 40, 3)
	last := &blocks[len(blocks)-1]
	*last = keyed(sessionTurn(last.ID, declare.RoleUser, "USER: When does my passport expire?", last.LastModified))
	out := recallCall(t, blocks, fmt.Sprintf(relevanceTemplate, 1000, 300), "", nil, nil)
	tokens := map[string]int{}
	for _, b := range out.Sections[0].Blocks {
		tokens[b.RequestID] = b.Tokens
	}
	stable, recalled := 0, 0
	for _, w := range out.Decision.Sections[0].Blocks {
		if w.Recalled {
			recalled++
		} else {
			stable += tokens[w.ID]
		}
	}
	room := int((1 - truncate.DefaultRelevance) * float64(out.Sections[0].UsedTokens))
	if stable > room || recalled < 2 {
		t.Errorf("stable part %d tokens (room %d), %d recalled:\n%s", stable, room, recalled, out.Text)
	}
	if !strings.Contains(out.Text, "Lisbon") || !strings.HasSuffix(out.Text, "USER: When does my passport expire?\n") {
		t.Errorf("the recalled turn is not kept, or the question does not end the text:\n%s", out.Text)
	}
}

// TestOtherQuestionsRecallHoldsNoMargin: a turn another question
// recalled gives its place to a turn the new question makes only a little
// relevant (less than the margin): it held its place for that question,
// not for the conversation.
func TestOtherQuestionsRecallHoldsNoMargin(t *testing.T) {
	blocks := conversationBlocks(rand.New(rand.NewPCG(7, 8)), 40, 5)
	tpl := fmt.Sprintf(relevanceTemplate, 1000, 300)
	first := recallCall(t, blocks, tpl, "", map[string]float64{"t005": 1}, nil)
	if !strings.Contains(first.Text, "Lisbon") || strings.Contains(first.Text, "turn 2\n") {
		t.Fatalf("the first question's setting does not hold:\n%s", first.Text)
	}
	// Less than the margin over any turn's score: not news by relevance.
	weak := 0.9 * truncate.DefaultStickiness().Margin / truncate.DefaultHostRelevance
	second := recallCall(t, blocks, tpl, "", map[string]float64{"t002": weak}, first.Decision)
	if !strings.Contains(second.Text, "turn 2\n") {
		t.Errorf("the turn the new question scores stays out behind another question's recalls:\n%s", second.Text)
	}
}

// TestHostRelevanceShare: the host's relevance takes Scoring.HostRelevance
// of the score, and a section's own relevance weight sets it as it sets
// the built-in one's.
func TestHostRelevanceShare(t *testing.T) {
	blocks := conversationBlocks(rand.New(rand.NewPCG(9, 10)), 10, 3)
	host := map[string]float64{"t003": 0.5}
	for _, tt := range []struct {
		tpl  string
		want float64
	}{
		{fmt.Sprintf(relevanceTemplate, 1000, 300), truncate.DefaultHostRelevance},
		{strings.Replace(fmt.Sprintf(relevanceTemplate, 1000, 300), `"order": "time"`, `"order": "time", "relevance": 0.3`, 1), 0.3},
	} {
		out := recallCall(t, blocks, tt.tpl, "", host, nil)
		for _, b := range out.Sections[0].Blocks {
			if b.RequestID == "t003" && math.Abs(b.RelevancePoints-tt.want*0.5) > 1e-4 {
				t.Errorf("share %v: t003's relevance points %v, want %v", tt.want, b.RelevancePoints, tt.want*0.5)
			}
		}
	}
}
