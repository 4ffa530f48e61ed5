package contextasm_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
)

// TestSlackRefills checks that a section that shed down to its slack takes
// the blocks that fit again once nothing new competes for its room: the
// slack avoids churn while blocks arrive, it does not leave room unused for
// the rest of a session. Every block left out says why truly.
func TestSlackRefills(t *testing.T) {
	const capTokens = 1600
	tpl := parseTemplate(t, fmt.Sprintf(`{"budget": 4000, "sections": [
	    {"name": "KB", "priority": 1, "memory_types": ["external"], "max_tokens": %d, "render": "{content}"}]}`, capTokens))
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	doc := func(n int, weight float64) declare.Declaration {
		return declare.Declaration{RequestID: fmt.Sprintf("kb-%02d", n), MemoryType: declare.External, Scope: declare.ScopeGlobal, SemanticWeight: &weight,
			LastModified: &now, Content: fmt.Sprintf("Document %d. ", n) + strings.Repeat(fmt.Sprintf("policy clause %d applies; ", n), 40)}
	}
	eng := newEngine(t, contextasm.Config{})
	for n := 1; n <= 8; n++ {
		if err := eng.Declare(doc(n, 0.9-0.05*float64(n))); err != nil {
			t.Fatal(err)
		}
	}
	req := contextasm.Request{Template: tpl, Now: now, SessionID: "s1"}
	first := assemble(t, eng, req)
	if len(first.Sections()[0].Blocks) != 8 {
		t.Fatalf("call 1 kept %d documents, want the 8 that fit", len(first.Sections()[0].Blocks))
	}
	// A new, better document: the section must drop one it kept, and sheds.
	if err := eng.Declare(doc(9, 0.95)); err != nil {
		t.Fatal(err)
	}
	req.Now = now.Add(time.Second)
	second := assemble(t, eng, req)
	shed := false
	for _, ev := range second.Events() {
		shed = shed || ev.Reason == outcome.ReasonSlack
	}
	if !shed {
		t.Fatalf("call 2 did not shed: %v", second.Events())
	}
	for _, ev := range second.Events() {
		if ev.Kind == outcome.KindDropped && ev.Reason != outcome.ReasonSlack {
			t.Errorf("call 2: %s left out for %s; the shed let it go (slack): %+v", ev.RequestID, ev.Reason, ev)
		}
	}
	fresh := assemble(t, eng, contextasm.Request{Template: tpl, Now: req.Now, Fresh: true})
	for call := 3; call <= 5; call++ {
		req.Now = now.Add(time.Duration(call) * time.Second)
		res := assemble(t, eng, req)
		sec := res.Sections()[0]
		if call >= 4 && sec.UsedTokens < fresh.Sections()[0].UsedTokens {
			t.Errorf("call %d: the section holds %d tokens; a fresh assembly fills it to %d", call, sec.UsedTokens, fresh.Sections()[0].UsedTokens)
		}
		for _, ev := range res.Events() {
			if ev.Kind != outcome.KindDropped {
				continue
			}
			if ev.Reason == outcome.ReasonSticky {
				t.Errorf("call %d: %s left out as sticky, though no score moved", call, ev.RequestID)
			}
			if ev.Reason == outcome.ReasonSectionCap && ev.Tokens > 0 && ev.Tokens <= capTokens-sec.UsedTokens { // a count of 0: never counted
				t.Errorf("call %d: %s (%d tokens) left out for the section's cap with %d free", call, ev.RequestID, ev.Tokens, capTokens-sec.UsedTokens)
			}
		}
	}
}
