package assemble_test

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/lexical"
)

const relevanceTemplate = `{"budget": %d, "sections": [
  {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": %d, "render": "{content}", "order": "time", "fill": "skip"}]}`

// relevanceOf returns each row's relevance by request_id.
func relevanceOf(out *assemble.Output) map[string]float64 {
	m := map[string]float64{}
	for _, s := range out.Sections {
		for _, b := range s.Blocks {
			m[b.RequestID] = b.Relevance
		}
	}
	return m
}

// conversationBlocks returns n turns, an hour apart and newest last, of
// session s1, one of which (the needle) speaks of the query's subject.
func conversationBlocks(r *rand.Rand, n, needle int) []assemble.Block {
	fillers := []string{"the weather was fine", "we talked about dinner plans", "a new phone arrived", "traffic was slow again", "the meeting moved to noon"}
	var blocks []assemble.Block
	for i := range n {
		text := fmt.Sprintf("USER: %s, turn %d", fillers[r.IntN(len(fillers))], i)
		if i == needle {
			text = "USER: my passport expires in March and I must renew it before the Lisbon trip"
		}
		b := chatTurn(fmt.Sprintf("t%03d", i), text, now.Add(time.Duration(i-n)*time.Hour))
		b.Scope, b.SessionID = declare.ScopeSession, "s1"
		blocks = append(blocks, keyed(b))
	}
	return blocks
}

// TestRelevanceRecallsAnOldTurn: with a query, a clearly relevant old turn
// outranks irrelevant recent ones and enters a section too small for the
// whole conversation; without one, the newest turns fill it.
func TestRelevanceRecallsAnOldTurn(t *testing.T) {
	tok := realTokenizer(t)
	tpl := mustParse(t, fmt.Sprintf(relevanceTemplate, 400, 120))
	blocks := conversationBlocks(rand.New(rand.NewPCG(1, 2)), 40, 3)
	var asm assemble.Assembler
	req := assemble.Request{Now: now, SessionID: "s1"}
	plain, err := asm.Assemble(tpl, blocks, req, tok)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.Text, "passport") {
		t.Fatalf("without a query the old turn is in the text:\n%s", plain.Text)
	}
	req.Query = lexical.NewQuery("When does my passport expire?")
	out, err := asm.Assemble(tpl, blocks, req, tok)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Text, "passport") {
		t.Errorf("with the query the passport turn is not in the text:\n%s", out.Text)
	}
	if !strings.Contains(out.Text, "turn 39") {
		t.Errorf("the newest turn is not in the text:\n%s", out.Text)
	}
	rel := relevanceOf(out)
	if rel["t003"] <= 0 || rel["t003"] > 1 {
		t.Errorf("the passport turn's relevance is %v", rel["t003"])
	}
	for id, v := range rel {
		switch id {
		case "t003":
		case "t002", "t004": // its time neighbours: γ of its relevance
			if math.Abs(v-assemble.NeighbourShare*rel["t003"]) > 1e-4 { // rows round to 4 decimals
				t.Errorf("%s, next to the passport turn, has relevance %v, want %v", id, v, assemble.NeighbourShare*rel["t003"])
			}
		default:
			if v != 0 {
				t.Errorf("%s shares no term with the query but has relevance %v", id, v)
			}
		}
	}
}

// TestRelevanceProperties: relevance is deterministic (whatever the
// blocks' order), in [0, 1], and unchanged by blocks the request cannot
// see, however much they share the query's terms; the host's relevance
// replaces it for exactly the blocks it names, the others scoring 0.
func TestRelevanceProperties(t *testing.T) {
	tok := realTokenizer(t)
	tpl := mustParse(t, fmt.Sprintf(relevanceTemplate, 2000, 800))
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"passport", "renew", "Lisbon", "trip", "dinner", "phone", "noon", "meeting", "loan", "rate", "bank", "March"}
	sentence := func() string {
		var b strings.Builder
		for range 3 + r.IntN(8) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	for run := range 40 {
		var mine, others []assemble.Block
		for i := range 10 + r.IntN(30) {
			b := chatTurn(fmt.Sprintf("m%02d", i), "USER: "+sentence(), now.Add(-time.Duration(i)*time.Minute))
			b.Scope, b.SessionID = declare.ScopeSession, "s1"
			mine = append(mine, keyed(b))
		}
		for i := range r.IntN(30) {
			b := chatTurn(fmt.Sprintf("x%02d", i), "USER: "+sentence()+" passport passport renew", now)
			b.Scope, b.SessionID = declare.ScopeSession, "s2" // another session: hidden
			if i%3 == 0 {
				b.Scope, b.SessionID, b.UserID = declare.ScopeUser, "", "u9"
			}
			others = append(others, keyed(b))
		}
		q := lexical.NewQuery(sentence())
		var asm assemble.Assembler
		assembleRel := func(blocks []assemble.Block, host map[string]float64) map[string]float64 {
			t.Helper()
			out, err := asm.Assemble(tpl, blocks, assemble.Request{Now: now, SessionID: "s1", UserID: "u1", Query: q, Relevance: host}, tok)
			if err != nil {
				t.Fatal(err)
			}
			return relevanceOf(out)
		}
		want := assembleRel(mine, nil)
		for id, v := range want {
			if v < 0 || v > 1 {
				t.Fatalf("run %d: %s has relevance %v", run, id, v)
			}
		}
		all := append(slices.Clone(mine), others...)
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		got := assembleRel(all, nil)
		for id, v := range want {
			if got[id] != v {
				t.Errorf("run %d: %s has relevance %v beside hidden blocks, %v alone", run, id, got[id], v)
			}
		}
		host := map[string]float64{mine[0].ID: 0.9, "x00": 1}
		hosted := assembleRel(all, host)
		for id := range want {
			if w := host[id]; hosted[id] != w {
				t.Errorf("run %d: %s has relevance %v with the host's scores, want %v", run, id, hosted[id], w)
			}
		}
	}
}

// TestRelevanceIsNewsToASticky: a conversation that follows its previous
// decision takes in the old turns a new query recalls, in the room its
// stable part leaves and the previous query's recalls take, and writes
// them after the rest of its history (time order otherwise), so the text
// before them stays byte for byte; asked the same again, the text stays.
func TestRelevanceIsNewsToASticky(t *testing.T) {
	tok := realTokenizer(t)
	tpl := mustParse(t, fmt.Sprintf(relevanceTemplate, 400, 160))
	blocks := conversationBlocks(rand.New(rand.NewPCG(5, 6)), 40, 3)
	// A second old turn for the second query.
	blocks[10] = sessionTurn(blocks[10].ID, declare.RoleUser, "USER: the dentist appointment is on Friday at nine", blocks[10].LastModified)
	var asm assemble.Assembler
	call := func(query string, prev *assemble.Decision) *assemble.Output {
		t.Helper()
		req := assemble.Request{Now: now, SessionID: "s1", Previous: prev, Record: true}
		if query != "" {
			req.Query, req.QueryKey = lexical.NewQuery(query), query
		}
		out, err := asm.Assemble(tpl, blocks, req, tok)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := call("When does my passport expire?", nil)
	// The recalled turn, with its neighbours, after the newest turn.
	if i := strings.Index(first.Text, "turn 39\n"); i < 0 || !strings.Contains(first.Text[i:], "Lisbon trip") {
		t.Fatalf("the recalled turn is not written last:\n%s", first.Text)
	}
	second := call("When is the dentist appointment?", first.Decision)
	if !strings.Contains(second.Text, "dentist") {
		t.Errorf("following the previous decision, the newly recalled turn stays out:\n%s", second.Text)
	}
	if strings.Contains(second.Text, "passport") {
		t.Errorf("the turn the previous query recalled stays:\n%s", second.Text)
	}
	recalled := strings.Index(first.Text, "turn 39\n") + len("turn 39\n") // the recalled turns start after the newest
	if p := second.Prefix; p == nil || p.StableBytes < recalled {
		t.Errorf("the prefix %+v breaks before the recalled turns (at byte %d)", p, recalled)
	}
	if second.Decision.Query != "When is the dentist appointment?" {
		t.Errorf("the decision records the query as %q", second.Decision.Query)
	}
	third := call("When is the dentist appointment?", second.Decision)
	if third.Text != second.Text {
		t.Errorf("the same question again changes the text:\n%s\nthen\n%s", second.Text, third.Text)
	}
}

// TestTopRelevant: the cut-off keeps exactly the k most relevant, ties
// going to the smaller request_id, whatever the order they come in: the
// first k of a sort.
func TestTopRelevant(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for trial := range 300 {
		n, k := rng.IntN(60), 1+rng.IntN(20)
		rels := map[string]float64{}
		for i := range n {
			rels[fmt.Sprintf("b%03d", i)] = float64(rng.IntN(6)) / 5 // coarse: ties
		}
		ids := slices.Collect(maps.Keys(rels))
		slices.SortFunc(ids, func(a, b string) int {
			if rels[a] != rels[b] {
				return cmp.Compare(rels[b], rels[a])
			}
			return strings.Compare(a, b)
		})
		want := ids[:min(k, len(ids))]
		got := assemble.TopRelevant(rels, k)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n %d, k %d): kept %v, want %v", trial, n, k, got, want)
		}
	}
}
