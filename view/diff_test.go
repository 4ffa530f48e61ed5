package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/outcome"
)

// blk is a block of a hand-made dump.
func blk(id string, st outcome.Status, reason outcome.Reason, tokens int, score float64) outcome.BlockResult {
	return outcome.BlockResult{RequestID: id, MemoryType: "history", Status: st, Reason: reason, Tokens: tokens, Score: score}
}

func dumpOf(sections []outcome.SectionResult, events ...outcome.Event) *outcome.Dump {
	return &outcome.Dump{ProtocolVersion: "1.2", Fingerprint: "sha256:f", Budget: 100, Sections: sections, Events: events}
}

func excluded(id string, r outcome.Reason) outcome.Event {
	return outcome.Event{Kind: outcome.KindExcluded, RequestID: id, Reason: r}
}

func TestDiffKinds(t *testing.T) {
	k, c, d := outcome.StatusKept, outcome.StatusCut, outcome.StatusDropped
	a := dumpOf([]outcome.SectionResult{
		{Name: "H", MaxTokens: 50, UsedTokens: 40, Blocks: []outcome.BlockResult{
			blk("same", k, "", 10, 0.9),
			blk("swap-1", k, "", 5, 0.8),
			blk("swap-2", k, "", 5, 0.7),
			blk("left-dropped", k, "", 5, 0.6),
			blk("left-excluded", k, "", 5, 0.6),
			blk("newly-cut", k, "", 5, 0.5),
			blk("uncut", c, outcome.ReasonCut, 3, 0.5),
			blk("back", d, outcome.ReasonBudget, 5, 0.4),
			blk("cap-to-budget", d, outcome.ReasonSectionCap, 5, 0.3),
			blk("retokened", d, outcome.ReasonSectionCap, 5, 0.2),
			blk("gone", k, "", 5, 0.1),
		}},
		{Name: "ONLY_A", MaxTokens: 10, UsedTokens: 7},
	},
		excluded("was-excluded", outcome.ReasonExpired),
		excluded("excluded-to-dropped", outcome.ReasonOutOfScope),
	)
	b := dumpOf([]outcome.SectionResult{
		{Name: "ONLY_B", MaxTokens: 10, UsedTokens: 3},
		{Name: "H", MaxTokens: 60, UsedTokens: 45, Blocks: []outcome.BlockResult{
			blk("new-top", k, "", 5, 0.99), // moves every rank down one: not a rank change
			blk("same", k, "", 10, 0.9),
			blk("swap-2", k, "", 5, 0.85),
			blk("swap-1", k, "", 5, 0.8),
			blk("newly-cut", c, outcome.ReasonCut, 2, 0.5),
			blk("uncut", k, "", 5, 0.5),
			blk("back", k, "", 5, 0.4),
			blk("was-excluded", k, "", 5, 0.4),
			blk("left-dropped", d, outcome.ReasonBudget, 5, 0.35),
			blk("cap-to-budget", d, outcome.ReasonBudget, 5, 0.3),
			blk("retokened", d, outcome.ReasonSectionCap, 9, 0.2),
			blk("excluded-to-dropped", d, outcome.ReasonBudget, 5, 0.1),
		}},
	},
		excluded("left-excluded", outcome.ReasonAccessDenied),
	)
	r := Diff(a, b)
	got := map[string]ChangeKind{}
	var order []string
	for _, ch := range r.Changes {
		got[ch.RequestID] = ch.Change
		order = append(order, ch.RequestID)
	}
	want := map[string]ChangeKind{
		"new-top":             Appeared,
		"gone":                Disappeared,
		"left-dropped":        LeftOut,
		"left-excluded":       LeftOut,
		"newly-cut":           NewlyCut,
		"uncut":               BackIn,
		"back":                BackIn,
		"was-excluded":        BackIn,
		"cap-to-budget":       ReasonChanged,
		"excluded-to-dropped": ReasonChanged,
		"swap-1":              RankChanged,
		"swap-2":              RankChanged,
		"retokened":           Changed,
	}
	for id, k := range want {
		if got[id] != k {
			t.Errorf("%s: %q, want %q", id, got[id], k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("changes %v, want only %v", got, want)
	}
	if r.Unchanged != 1 {
		t.Errorf("unchanged %d, want 1 (same)", r.Unchanged)
	}
	wantOrder := "new-top gone left-dropped left-excluded newly-cut uncut back was-excluded cap-to-budget excluded-to-dropped swap-2 swap-1 retokened"
	if strings.Join(order, " ") != wantOrder {
		t.Errorf("order\n%s\nwant\n%s", strings.Join(order, " "), wantOrder)
	}

	var names []string
	for _, s := range r.Sections {
		names = append(names, s.Name)
	}
	if strings.Join(names, " ") != "ONLY_B H ONLY_A" {
		t.Errorf("sections %q", names)
	}
	h := r.Sections[1]
	if h.UsedA != 40 || h.UsedB != 45 || h.Shift != 5 || h.MaxTokensA != 50 || h.MaxTokensB != 60 || h.InTextA != 8 || h.InTextB != 8 {
		t.Errorf("H shift %+v", h)
	}
	if s := r.Sections[2]; s.UsedA != 7 || s.UsedB != 0 || s.Shift != -7 {
		t.Errorf("ONLY_A shift %+v", s)
	}
	if c := r.Changes[0]; c.A != nil || c.B == nil || c.B.Rank != 1 || c.B.Section != "H" {
		t.Errorf("appeared: %+v", c)
	}
	// The JSON names the sides and says null for a side without the block.
	js, err := json.Marshal(r.Changes[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"request_id":"new-top","change":"appeared","a":null,"b":{"section":"H","status":"kept","rank":1,"tokens":5,"score":0.99}}`; string(js) != want {
		t.Errorf("json %s\nwant %s", js, want)
	}
}

func TestDiffSame(t *testing.T) {
	d := loadDump(t, demoDump)
	r := Diff(d, d)
	if len(r.Changes) != 0 || !r.SameTemplate {
		t.Errorf("a dump against itself: %+v", r.Changes)
	}
	n := len(d.Events)
	for _, s := range d.Sections {
		n += len(s.Blocks)
	}
	var out bytes.Buffer
	if err := WriteDiff(&out, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "No block changed") {
		t.Errorf("WriteDiff of no change:\n%s", out.String())
	}
}

// Long and wide ids, and long section names, still fit 80 columns.
func TestWriteDiffFits80Columns(t *testing.T) {
	r := Diff(loadDump(t, multilingualDump), wideDump())
	var out bytes.Buffer
	if err := WriteDiff(&out, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "the template changed") {
		t.Errorf("no word on the changed template:\n%s", out.String())
	}
	for i, line := range strings.Split(out.String(), "\n") {
		if w := textWidth(line); w > 80 {
			t.Errorf("line %d is %d columns: %q", i+1, w, line)
		}
		if strings.Contains(line, "\x1b") {
			t.Errorf("line %d has an escape: %q", i+1, line)
		}
	}
	golden(t, "wide.diff.golden", out.String())
}

// TestDiffUncountedIsNoChange: a block dropped in both dumps, counted in
// one (50 tokens) and not in the other (0: nothing after a misfit of a
// fill "stop" section is counted), has not changed; a real change of size
// says "not counted" rather than "0 tok".
func TestDiffUncountedIsNoChange(t *testing.T) {
	dump := func(tokens int, status outcome.Status, reason outcome.Reason) *outcome.Dump {
		return &outcome.Dump{Budget: 100, Sections: []outcome.SectionResult{{Name: "S", Priority: 1, MaxTokens: 50,
			Blocks: []outcome.BlockResult{{RequestID: "b", MemoryType: "context", Tokens: tokens, Status: status, Reason: reason}}}}}
	}
	r := Diff(dump(50, outcome.StatusDropped, outcome.ReasonSectionCap), dump(0, outcome.StatusDropped, outcome.ReasonSectionCap))
	if len(r.Changes) != 0 || r.Unchanged != 1 {
		t.Errorf("changes %+v, unchanged %d; want none and 1", r.Changes, r.Unchanged)
	}
	r = Diff(dump(50, outcome.StatusKept, ""), dump(0, outcome.StatusDropped, outcome.ReasonSectionCap))
	var out strings.Builder
	if err := WriteDiff(&out, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), " 0 tok") || !strings.Contains(out.String(), "50 tok → not counted") {
		t.Errorf("diff says:\n%s", out.String())
	}
}

// TestDiffRelevance: the diff says whether the query changed (by hash)
// and how each listed block's relevance moved; a change of relevance
// where it counted (its points) is a change, one in a section where it
// took no share, or below the four decimals shown, is not.
func TestDiffRelevance(t *testing.T) {
	a, b := queryDump(), queryDump()
	r := Diff(a, b)
	if len(r.Changes) != 0 || !r.SameQuery {
		t.Fatalf("a dump against itself: same_query %t, changes %+v", r.SameQuery, r.Changes)
	}
	var out strings.Builder
	if err := WriteDiff(&out, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "  same query: 9f9f9f9f9f9f (request)\n") {
		t.Errorf("no word on the same query:\n%s", out.String())
	}

	b.Query = &outcome.Query{From: outcome.QueryNewestUserTurn, SHA256: "sha256:" + strings.Repeat("ab", 32), Tokens: 9, Block: "turn-9-user"}
	h := b.Sections[1].Blocks
	h[1].Relevance, h[1].RelevancePoints, h[1].Score = 0.3, 0.15, 0.35 // turn-3-refund: less relevant, still kept
	h[3].Relevance += 1e-9                                             // turn-2-user: the same at four decimals
	b.Sections[0].Blocks[0].Relevance = 0.5                            // rule-refunds: relevance takes no share in RULES
	h[2], h[1] = h[1], h[2]                                            // turn-8-agent now ranks above turn-3-refund, kept
	h[1].Status, h[1].Reason, h[1].LostOnRelevance = outcome.StatusKept, "", false
	h[2].Status, h[2].Reason = outcome.StatusDropped, outcome.ReasonBudget
	outcome.MarkLostOnRelevance(h)
	r = Diff(a, b)
	if r.SameQuery || r.B.Query == nil || r.B.Query.Block != "turn-9-user" {
		t.Errorf("same_query %t, b's query %+v", r.SameQuery, r.B.Query)
	}
	got := map[string]ChangeKind{}
	for _, c := range r.Changes {
		got[c.RequestID] = c.Change
	}
	if want := map[string]ChangeKind{"turn-3-refund": LeftOut, "turn-8-agent": BackIn}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("changes %v, want %v (rule-refunds and turn-2-user unchanged)", got, want)
	}
	out.Reset()
	if err := WriteDiff(&out, r); err != nil {
		t.Fatal(err)
	}
	contains(t, "the diff", out.String(),
		"  the query changed: 9f9f9f9f9f9f (request) → abababababab (turn-9-user)\n",
		"  - turn-3-refund  HISTORY  kept #2 → dropped #3 (budget)  30 tok\n      relevance 0.5000 → 0.3000\n",
		"  + turn-8-agent   HISTORY  dropped #3 (budget) → kept #2  40 tok\n      no longer lost_on_relevance\n",
	)
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"same_query":false`, `"query":{"from":"request","sha256":"sha256:9f9f`, `"relevance":0.3,"relevance_points":0.15`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("the JSON lacks %s", want)
		}
	}
}
