package assemble_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
)

// keyedBlock is a constraint stating key, with trust t.
func keyedBlock(id, key string, t float64) assemble.Block {
	b := block(id, declare.Constraint, "Rule "+id+".")
	b.Trust = t
	if key != "" {
		b.EditRare().ConflictKey = key
	}
	return b
}

func TestConflictRules(t *testing.T) {
	tpl := mustParse(t, eventsTemplate)
	req := assemble.Request{Now: now, SessionID: "s1", UserID: "u1"}
	with := func(b assemble.Block, f func(*assemble.Block)) assemble.Block { f(&b); return b }
	tests := []struct {
		name     string
		blocks   []assemble.Block
		winner   string
		losers   []string
		rule     outcome.ConflictRule
		conflict bool // the key has a conflict row (else: no conflict at all)
	}{
		{name: "higher trust wins", blocks: []assemble.Block{keyedBlock("a", "rate", 0.6), keyedBlock("b", "rate", 0.9)},
			winner: "b", losers: []string{"a"}, rule: outcome.RuleTrust, conflict: true},
		{name: "trust beats time and weight", blocks: []assemble.Block{
			with(keyedBlock("a", "rate", 0.6), func(b *assemble.Block) { b.LastModified, b.Weight = now, 1 }),
			with(keyedBlock("b", "rate", 0.7), func(b *assemble.Block) { b.LastModified, b.Weight = now.Add(-time.Hour), 0 })},
			winner: "b", losers: []string{"a"}, rule: outcome.RuleTrust, conflict: true},
		{name: "equal trust: newer last_modified", blocks: []assemble.Block{
			with(keyedBlock("a", "rate", 0.8), func(b *assemble.Block) { b.LastModified = now.Add(-time.Hour) }),
			with(keyedBlock("b", "rate", 0.8), func(b *assemble.Block) { b.LastModified = now.Add(-2 * time.Hour) })},
			winner: "a", losers: []string{"b"}, rule: outcome.RuleLastModified, conflict: true},
		{name: "a dated block beats an undated one", blocks: []assemble.Block{
			keyedBlock("a", "rate", 0.8),
			with(keyedBlock("b", "rate", 0.8), func(b *assemble.Block) { b.LastModified = now.Add(-48 * time.Hour) })},
			winner: "b", losers: []string{"a"}, rule: outcome.RuleLastModified, conflict: true},
		{name: "equal trust and time: higher semantic_weight", blocks: []assemble.Block{
			with(keyedBlock("a", "rate", 0.8), func(b *assemble.Block) { b.Weight = 0.2 }),
			with(keyedBlock("b", "rate", 0.8), func(b *assemble.Block) { b.Weight = 0.9 })},
			winner: "b", losers: []string{"a"}, rule: outcome.RuleSemanticWeight, conflict: true},
		{name: "all equal: the smaller request_id", blocks: []assemble.Block{keyedBlock("z", "rate", 0.8), keyedBlock("m", "rate", 0.8)},
			winner: "m", losers: []string{"z"}, rule: outcome.RuleRequestID, conflict: true},
		{name: "any memory type: a context block wins over a constraint", blocks: []assemble.Block{
			keyedBlock("rule", "rate", 0.5),
			with(block("note", declare.Context, "Small businesses may go to 18%."), func(b *assemble.Block) { b.Trust = 0.9; b.EditRare().ConflictKey = "rate" })},
			winner: "note", losers: []string{"rule"}, rule: outcome.RuleTrust, conflict: true},
		{name: "three of a key: one winner", blocks: []assemble.Block{keyedBlock("a", "rate", 0.5), keyedBlock("b", "rate", 0.9), keyedBlock("c", "rate", 0.7)},
			winner: "b", losers: []string{"c", "a"}, rule: outcome.RuleTrust, conflict: true},
		{name: "a required block beats a more trusted one", blocks: []assemble.Block{
			with(keyedBlock("a", "rate", 0.3), func(b *assemble.Block) { b.Required = true }), keyedBlock("b", "rate", 0.9)},
			winner: "a", losers: []string{"b"}, rule: outcome.RuleRequired, conflict: true},
		{name: "other keys do not conflict", blocks: []assemble.Block{keyedBlock("a", "rate", 0.5), keyedBlock("b", "term", 0.9), keyedBlock("c", "", 0.9)}},
		{name: "an expired block takes no part", blocks: []assemble.Block{
			keyedBlock("a", "rate", 0.5), with(keyedBlock("b", "rate", 0.9), func(b *assemble.Block) { b.ValidUntil = now })}},
		{name: "a superseded block takes no part", blocks: []assemble.Block{
			keyedBlock("a", "rate", 0.5), keyedBlock("b", "rate", 0.9), with(keyedBlock("c", "", 0.5), func(b *assemble.Block) { b.EditRare().Supersedes = []string{"b"} })}},
		{name: "a block of no section takes no part", blocks: []assemble.Block{
			keyedBlock("a", "rate", 0.5), with(block("h", declare.History, "Turn."), func(b *assemble.Block) { b.Trust = 0.9; b.EditRare().ConflictKey = "rate" })}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := mustAssemble(t, tpl, tt.blocks, req)
			if !tt.conflict {
				if len(out.Conflicts) != 0 {
					t.Fatalf("conflicts %+v, want none", out.Conflicts)
				}
				for _, e := range out.Events {
					if e.Reason == outcome.ReasonConflict {
						t.Fatalf("event %+v, want no conflict", e)
					}
				}
				return
			}
			if len(out.Conflicts) != 1 {
				t.Fatalf("conflicts %+v, want one", out.Conflicts)
			}
			c := out.Conflicts[0]
			if c.Key != "rate" || c.Winner != tt.winner || len(c.Losers) != len(tt.losers) {
				t.Fatalf("conflict %+v, want winner %s, losers %v", c, tt.winner, tt.losers)
			}
			var win assemble.Block
			for _, b := range tt.blocks {
				if b.ID == tt.winner {
					win = b
				}
			}
			if c.WinnerTrust != win.Trust {
				t.Errorf("winner_trust %v, want %v", c.WinnerTrust, win.Trust)
			}
			if _, _, ok := result(out, tt.winner); !ok {
				t.Errorf("the winner %s is in no section", tt.winner)
			}
			for i, id := range tt.losers {
				if c.Losers[i].RequestID != id {
					t.Errorf("loser %d is %s, want %s", i, c.Losers[i].RequestID, id)
				}
				if _, _, ok := result(out, id); ok {
					t.Errorf("the loser %s has a row in a section", id)
				}
				evs := eventsOf(out, id)
				if len(evs) != 1 || evs[0].Kind != outcome.KindExcluded || evs[0].Reason != outcome.ReasonConflict || evs[0].By != tt.winner || evs[0].Conflict == nil {
					t.Fatalf("events of %s: %+v, want one conflict exclusion by %s", id, evs, tt.winner)
				}
				ec := evs[0].Conflict
				if ec.Key != "rate" || ec.ByTrust != win.Trust || ec.Trust != c.Losers[i].Trust {
					t.Errorf("event's comparison %+v, conflict row %+v", ec, c.Losers[i])
				}
				if i == 0 && ec.Rule != tt.rule {
					t.Errorf("rule %s, want %s", ec.Rule, tt.rule)
				}
				if strings.Contains(out.Text, "Rule "+id+".") {
					t.Errorf("the loser %s is in the text", id)
				}
			}
		})
	}
}

func TestConflictRequiredPair(t *testing.T) {
	tpl := mustParse(t, eventsTemplate)
	req := func(b assemble.Block) assemble.Block { b.Required = true; return b }
	blocks := []assemble.Block{req(keyedBlock("cap-15", "rate", 0.9)), req(keyedBlock("cap-18", "rate", 0.4)), keyedBlock("other", "rate", 0.95),
		req(keyedBlock("t1", "term", 0.5)), req(keyedBlock("t2", "term", 0.5)), req(keyedBlock("t3", "term", 0.5))}
	var a assemble.Assembler
	_, err := a.Assemble(tpl, blocks, assemble.Request{Now: now}, realTokenizer(t))
	if !errors.Is(err, outcome.ErrConflict) {
		t.Fatalf("error %v, want ErrConflict", err)
	}
	var ce *outcome.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("error %T, want *outcome.ConflictError", err)
	}
	want := "required blocks in conflict\n" +
		`conflict_key "rate": required blocks "cap-15" and "cap-18" exclude each other` + "\n" +
		`conflict_key "term": required blocks "t1", "t2" and "t3" exclude each other`
	if err.Error() != want {
		t.Fatalf("error\n%s\nwant\n%s", err, want)
	}
	// One of the pair not eligible: no conflict, and no error.
	blocks[1].ValidUntil = now
	blocks = blocks[:3]
	out := mustAssemble(t, tpl, blocks, assemble.Request{})
	if len(out.Conflicts) != 1 || out.Conflicts[0].Winner != "cap-15" || out.Conflicts[0].Losers[0].RequestID != "other" {
		t.Fatalf("conflicts %+v, want cap-15 over other", out.Conflicts)
	}
}

// TestConflictHiddenNeverNamed: a block the request cannot see (another
// session's, a role it lacks, the user's only) takes no part, whatever
// its trust: the visible block is kept without a conflict, and no output
// (events, conflicts, error) names the hidden one, even when both are
// required.
func TestConflictHiddenNeverNamed(t *testing.T) {
	tpl := mustParse(t, eventsTemplate)
	hide := []struct {
		name string
		f    func(*assemble.Block)
	}{
		{"another session's", func(b *assemble.Block) { b.Scope, b.SessionID = declare.ScopeSession, "s2" }},
		{"another user's", func(b *assemble.Block) { b.Scope, b.UserID = declare.ScopeUser, "u2" }},
		{"a role the request lacks", func(b *assemble.Block) { b.EditRare().Roles = []string{"admin"} }},
		{"meant for the user", func(b *assemble.Block) { b.ForAssistant = false }},
	}
	for _, h := range hide {
		for _, required := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, required %v", h.name, required), func(t *testing.T) {
				seen, hidden := keyedBlock("mine", "rate", 0.2), keyedBlock("secret-rule", "rate", 0.99)
				seen.Required, hidden.Required = required, required
				h.f(&hidden)
				out := mustAssemble(t, tpl, []assemble.Block{hidden, seen}, assemble.Request{SessionID: "s1", UserID: "u1"})
				if len(out.Conflicts) != 0 {
					t.Fatalf("conflicts %+v, want none", out.Conflicts)
				}
				if _, b, ok := result(out, "mine"); !ok || b.Status != outcome.StatusKept {
					t.Fatalf("the visible block: %+v, %v; want kept", b, ok)
				}
				for _, e := range out.Events {
					if e.RequestID == "secret-rule" || e.By == "secret-rule" || e.Reason == outcome.ReasonConflict {
						t.Fatalf("event %+v names the hidden block or a conflict", e)
					}
				}
			})
		}
	}
}

// TestConflictProperty: over random stores and requests, a conflict_key
// contributes at most one block to any output (its rows and text), every
// other eligible block of the key has a conflict event naming the winner,
// and every conflict event is of a block the request may see.
func TestConflictProperty(t *testing.T) {
	tpl := mustParse(t, eventsTemplate)
	tok := realTokenizer(t)
	keys := []string{"rate", "term", "kyc"}
	var conflicts, errs int
	for run := range 300 {
		rng := rand.New(rand.NewPCG(uint64(run), 27))
		var blocks []assemble.Block
		for i := range 2 + rng.IntN(14) {
			typ := []declare.MemoryType{declare.Constraint, declare.Context, declare.External}[rng.IntN(3)]
			b := block(fmt.Sprintf("b%02d", i), typ, fmt.Sprintf("Block %d says %d.", i, rng.IntN(100)))
			b.Trust, b.Weight = float64(rng.IntN(4))/4, float64(rng.IntN(3))/2
			if rng.IntN(2) == 0 {
				b.LastModified = now.Add(-time.Duration(rng.IntN(3)) * time.Hour)
			}
			if rng.IntN(4) > 0 {
				b.EditRare().ConflictKey = keys[rng.IntN(len(keys))]
			}
			switch rng.IntN(8) {
			case 0:
				b.Scope, b.SessionID = declare.ScopeSession, []string{"s1", "s2"}[rng.IntN(2)]
			case 1:
				b.ValidUntil = now.Add(-time.Minute)
			case 2:
				b.EditRare().Roles = []string{"admin"}
			}
			b.Required = rng.IntN(12) == 0
			blocks = append(blocks, b)
		}
		req := assemble.Request{Now: now, SessionID: "s1"}
		var a assemble.Assembler
		out, err := a.Assemble(tpl, blocks, req, tok)
		visible := map[string][]assemble.Block{} // eligible blocks by key
		for _, b := range blocks {
			if k := b.ConflictKey(); k != "" && req.Sees(&b) {
				visible[k] = append(visible[k], b)
			}
		}
		if err != nil {
			var ce *outcome.ConflictError
			if !errors.As(err, &ce) {
				continue // a budget error: not this test's
			}
			for _, k := range ce.Keys {
				required := 0
				for _, b := range visible[k.Key] {
					if b.Required {
						required++
					}
				}
				if required < 2 || required != len(k.IDs) {
					t.Fatalf("run %d: %v, but key %s has %d required visible blocks", run, err, k.Key, required)
				}
			}
			errs++
			continue
		}
		byID := map[string]assemble.Block{}
		for _, b := range blocks {
			byID[b.ID] = b
		}
		for k, group := range visible {
			inOutput := 0
			for _, b := range group {
				if _, _, ok := result(out, b.ID); ok {
					inOutput++
				}
			}
			if inOutput > 1 {
				t.Fatalf("run %d: key %s has %d blocks in the output", run, k, inOutput)
			}
		}
		for _, e := range out.Events {
			if e.Reason != outcome.ReasonConflict {
				continue
			}
			b, w := byID[e.RequestID], byID[e.By]
			if !req.Sees(&b) || !req.Sees(&w) || b.ConflictKey() != w.ConflictKey() || e.Conflict.Trust != b.Trust || e.Conflict.ByTrust != w.Trust {
				t.Fatalf("run %d: event %+v", run, e)
			}
		}
		for _, c := range out.Conflicts {
			conflicts++
			for _, l := range c.Losers {
				if n := len(eventsOf(out, l.RequestID)); n != 1 {
					t.Fatalf("run %d: loser %s has %d events", run, l.RequestID, n)
				}
			}
			if len(c.Losers)+1 != len(visible[c.Key]) {
				t.Fatalf("run %d: conflict %+v, visible %d", run, c, len(visible[c.Key]))
			}
		}
	}
	if conflicts < 100 || errs == 0 {
		t.Fatalf("%d conflicts, %d required pairs: the runs do not cover enough", conflicts, errs)
	}
}
