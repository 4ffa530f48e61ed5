package assemble_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/lexical"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// A walk passes a unit over whole (passUnit) only when the fill would
// drop it: over a history of tool exchanges of every size and groups of
// near-empty turns among lone turns, at every cap of the section from a
// few tokens to all of it (so that the room left meets every exchange's
// need, and its overhead alone, exactly), with separators of one token
// and of many, in the text format and in each chat format, fresh and
// following the previous decision, the incremental assembly is the full
// one, and some caps pass units over.
func TestPassUnitAtEveryRoom(t *testing.T) {
	compared, passed, _ := sweepPassUnit(t, nil)
	t.Logf("%d assemblies compared, %d units passed over", compared, passed)
	if compared < 2000 || passed == 0 {
		t.Errorf("%d assemblies compared, %d units passed over: the sweep does not cover passUnit", compared, passed)
	}
}

// The same with a query that touches most tool exchanges, a new one at
// the step that follows the previous decision (so that some hits are
// recalled): a unit with a hit is passed over too, where a long
// conversation asking the same again would otherwise make candidates of
// its every exchange, and the incremental assembly is still the full one.
func TestPassUnitWithHits(t *testing.T) {
	queries := []string{"word3 word5 rate", "word4 word9 word12"}
	compared, passed, hits := sweepPassUnit(t, queries)
	t.Logf("%d assemblies compared, %d units passed over, %d with a hit", compared, passed, hits)
	if compared < 2000 || hits == 0 {
		t.Errorf("%d assemblies compared, %d units with a hit passed over: the sweep does not cover passableHit", compared, hits)
	}
}

// sweepPassUnit compares the incremental assembly with the full one over
// passUnit's history at every cap, in every format, fresh and then
// following it, step i asking queries[i] when queries is not nil. It
// returns the assemblies compared, the units passed over and, of them,
// those with a relevance hit.
func sweepPassUnit(t *testing.T, queries []string) (compared, passed, passedHits int) {
	t.Helper()
	tok := boundedCounter{&memoCounter{Counter: additiveTokenizer(t), counts: map[string]int{}}}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	s := &store{heat: map[string]*assemble.Heat{}}
	words := func(n int) string {
		out := "w"
		for i := range n {
			out += fmt.Sprintf(" word%d", i)
		}
		return out
	}
	turn := func(id string, role declare.Role, content string, at time.Time) *assemble.Block {
		return &assemble.Block{ID: id, Type: declare.History, Scope: declare.ScopeSession, SessionID: "s1", ForAssistant: true,
			Weight: 0.5, Trust: 0.5, Role: role, Content: content, LastModified: at}
	}
	at := now.Add(-10 * time.Hour)
	for i := range 24 {
		at = at.Add(time.Minute)
		s.put(turn(fmt.Sprintf("h%02d-u", i), declare.RoleUser, words(1+i%4), at))
		if i%2 == 0 {
			asst := turn(fmt.Sprintf("h%02d-a", i), declare.RoleAssistant, words(i%3), at)
			asst.EditRare().ToolCalls = []declare.ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: "get_rate", Arguments: `{"q":"x"}`}}
			res := turn(fmt.Sprintf("h%02d-r", i), declare.RoleTool, words((i*7)%23), at.Add(time.Second))
			res.EditRare().ToolCallID = fmt.Sprintf("call_%d", i)
			s.put(asst)
			s.put(res)
		}
		if i%3 == 1 { // a group of turns with next to nothing in them: its need is its overhead
			for k, content := range []string{"", words(i % 2)} {
				g := turn(fmt.Sprintf("h%02d-g%d", i, k), declare.RoleAssistant, content, at)
				g.EditRare().Group = fmt.Sprintf("g%d", i)
				s.put(g)
			}
		}
	}
	for cap := 4; cap <= 320; cap++ {
		sep := []string{"\n\n", "\n-- -- -- --\n"}[cap%2] // a separator of many tokens too
		def := template.Definition{Budget: 2000, Sections: []template.SectionDefinition{{
			Name: "HISTORY", Priority: 1, MemoryTypes: []declare.MemoryType{declare.History}, MaxTokens: cap,
			Render: "{content}", Fill: template.FillSkip, Order: template.OrderTime, Partial: cap%3 == 0, Separator: &sep,
		}}}
		tpl, err := template.Compile(def)
		if err != nil {
			t.Fatal(err)
		}
		x := assemble.NewIndex(tpl, assemble.Request{SessionID: "s1", UserID: "u1"}, truncate.Scoring{})
		x.Build(s.blocks, now)
		for format := range 4 {
			var full, fast assemble.Assembler
			var prev *assemble.Decision
			for step := range 2 { // fresh, then following it
				req := assemble.Request{Now: now, SessionID: "s1", UserID: "u1", Previous: prev, Record: true}
				if format > 0 {
					req.Chat = assemble.ChatCost{Format: chat.Format(format), PerMessage: 3, Reply: 3}
				}
				if queries != nil {
					req.Query, req.QueryKey = lexical.NewQuery(queries[step]), queries[step]
				}
				want, errFull := full.AssembleRefs(tpl, s.blocks, req, tok)
				got, _, ok, errFast := fast.AssembleIndexed(x, req, tok, s.get)
				describe := fmt.Sprintf("cap %d, format %d, step %d", cap, format, step)
				if (errFull != nil) != (errFast != nil) {
					t.Fatalf("%s: errors differ: full %v, incremental %v", describe, errFull, errFast)
				}
				if errFull != nil || !ok {
					continue
				}
				compareOutputs(t, describe, want, got)
				compared++
				passed += fast.PassedUnits()
				passedHits += fast.PassedHitUnits()
				prev = want.Decision
			}
		}
	}
	return compared, passed, passedHits
}
