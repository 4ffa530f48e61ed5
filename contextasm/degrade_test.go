package contextasm_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// The host loop: the result lists the history the budget let go; once
// the host declares a summary that replaces it, the next call writes the
// summary in its place.
func ExampleEngine_summarizeCandidates() {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	tpl, err := template.Parse([]byte(`{"budget": 80, "sections": [
	  {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 49, "render": "{content}", "order": "time"}]}`), "template.json")
	if err != nil {
		log.Fatal(err)
	}
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	turns := []string{
		"USER: I applied for a car loan last week; where does it stand?",
		"AGENT: Your identity check has passed and all of your documents are complete now.",
		"USER: Someone quoted me 7.4%. Is that still the rate?",
		"AGENT: That was a draft; I must check your debt-to-income ratio first.",
	}
	for i, text := range turns {
		at := start.Add(time.Duration(i) * time.Minute)
		if err := eng.Declare(declare.Declaration{RequestID: fmt.Sprintf("turn-%d", i+1), MemoryType: declare.History,
			Scope: declare.ScopeSession, SessionID: "s1", LastModified: &at, Content: text}); err != nil {
			log.Fatal(err)
		}
	}
	ctx := context.Background()
	now := start.Add(5 * time.Minute)
	// NoQuery: by the newest turns alone, as the summaries go (relevance
	// to the newest user turn would rank the turns otherwise).
	res, err := eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: now, SessionID: "s1", NoQuery: true})
	if err != nil {
		log.Fatal(err)
	}
	// Send res.Text; once the answer has streamed, summarise each run.
	for _, run := range res.SummarizeCandidates {
		fmt.Println("summarise:", run.IDs)
		summary := "EARLIER: Ana asked about her loan; checks are done." // a model call of the host's own
		if err := eng.Declare(declare.Declaration{RequestID: "sum-" + run.IDs[0], MemoryType: declare.History,
			Scope: declare.ScopeSession, SessionID: "s1", LastModified: &now, Replaces: run.IDs, Content: summary}); err != nil {
			log.Fatal(err)
		}
	}
	res, err = eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: now.Add(time.Minute), SessionID: "s1", Fresh: true, NoQuery: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Text[strings.Index(res.Text, "\n")+1:]) // without the header line
	for _, ev := range res.Events() {
		fmt.Println("event:", ev.Reason, ev.RequestID, "by", ev.By)
	}
	// Output:
	// summarise: [turn-1 turn-2]
	// EARLIER: Ana asked about her loan; checks are done.
	// USER: Someone quoted me 7.4%. Is that still the rate?
	// AGENT: That was a draft; I must check your debt-to-income ratio first.
	// event: summarized turn-2 by sum-turn-1
	// event: summarized turn-1 by sum-turn-1
}

// Declare refuses a cycle of supersedes or replaces through the blocks it
// holds, naming every declaration on it, and applies nothing of the call.
func TestDeclareRefusesLinkCycles(t *testing.T) {
	fact := func(id string, sup ...string) declare.Declaration {
		return declare.Declaration{RequestID: id, MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: id, Supersedes: sup}
	}
	eng := newEngine(t, contextasm.Config{}, fact("v1"), fact("v2", "v1"), fact("v3", "v2"))
	// v1 superseding v3 closes v1 → v3 → v2 → v1; x is fine, but the call
	// fails whole.
	err := eng.Declare(fact("x"), fact("v1", "v3"))
	var ve *declare.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].RequestID != "v1" || ve.Problems[0].Field != "supersedes" ||
		ve.Problems[0].Message != `forms a cycle: "v1" → "v3" → "v2" → "v1"` {
		t.Fatalf("err = %v", err)
	}
	if eng.Len() != 3 {
		t.Errorf("%d blocks after a refused Declare, want 3", eng.Len())
	}
	// Replacing v3 with a block that supersedes nothing breaks the chain:
	// then v1 may supersede v3.
	if err := eng.Declare(fact("v3"), fact("v1", "v3")); err != nil {
		t.Errorf("no cycle once v3 is replaced: %v", err)
	}
}

// A summary declared atop a chain of summaries costs its own links, not
// the chain's (checkLinks walks the store's blocks only when one may name
// a declaration), and a cycle through the chain is still refused, also
// once what the store names was counted again (linkRefs).
func TestDeclareSummaryAtopAChain(t *testing.T) {
	turn := func(id string) declare.Declaration {
		return declare.Declaration{RequestID: id, MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1", Content: "USER: " + id}
	}
	summary := func(id string, replaces ...string) declare.Declaration {
		d := turn(id)
		d.Content, d.Replaces = "SUMMARY of "+strings.Join(replaces, ", "), replaces
		return d
	}
	chain := func(n int) (*contextasm.Engine, func() float64) {
		eng := newEngine(t, contextasm.Config{}, summary("sum-00000", "head"))
		for k := 1; k < n; k++ {
			if err := eng.Declare(turn(fmt.Sprintf("t-%05d", k)), summary(fmt.Sprintf("sum-%05d", k), fmt.Sprintf("sum-%05d", k-1), fmt.Sprintf("t-%05d", k))); err != nil {
				t.Fatal(err)
			}
		}
		top := n - 1
		return eng, func() float64 { // bytes allocated by a Declare
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range 20 {
				top++
				if err := eng.Declare(summary(fmt.Sprintf("sum-%05d", top), fmt.Sprintf("sum-%05d", top-1))); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			return float64(after.TotalAlloc-before.TotalAlloc) / 20
		}
	}
	_, short := chain(20)
	eng, long := chain(1500)
	s, l := short(), long()
	t.Logf("bytes allocated by a Declare atop a chain of 20 summaries: %.0f; of 1,500: %.0f", s, l)
	// The store's chunks grow with it; a walk of the chain costs about
	// thirty times more.
	if l > 4*s {
		t.Errorf("a Declare atop a chain of 1,500 summaries allocates %.0f bytes, atop 20 %.0f: it walks the chain", l, s)
	}
	// "head" closes a cycle through every summary of the chain.
	err := eng.Declare(summary("head", "sum-01519"))
	var ve *declare.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].RequestID != "head" || ve.Problems[0].Field != "replaces" {
		t.Fatalf("a cycle through the chain: err = %v", err)
	}
}

// Through the engine, a superseded block is excluded by the newest of its
// chain, and a block the engine re-declares with other variants is counted
// anew (its key covers them).
func TestEngineSupersedesAndVariants(t *testing.T) {
	tpl := parseTemplate(t, `{"budget": 400, "sections": [
	 {"name": "FACTS", "priority": 1, "memory_types": ["context"], "max_tokens": 20, "render": "{content}"}]}`)
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	old := global("rate-v1", declare.Context, "The rate is 7.4%.")
	newer := global("rate-v2", declare.Context, "The rate is 6.9% APR for tier B borrowers with a 48-month term and a 1% origination fee.")
	newer.Supersedes = []string{"rate-v1"}
	newer.Variants = []string{"The rate is 6.9% APR, tier B."}
	eng := newEngine(t, contextasm.Config{}, old, newer)
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: now})
	if !strings.Contains(res.Text, "The rate is 6.9% APR, tier B.\n") || strings.Contains(res.Text, "7.4%") {
		t.Fatalf("text:\n%s", res.Text)
	}
	var saw []string
	for _, e := range res.Events() {
		saw = append(saw, fmt.Sprintf("%s %s %s %d", e.Reason, e.RequestID, e.By, e.Variant))
	}
	if got := strings.Join(saw, "; "); got != "superseded rate-v1 rate-v2 0; degraded rate-v2  1" {
		t.Errorf("events: %s", got)
	}
	newer.Variants = []string{"Rate: 6.9% APR."}
	if err := eng.Declare(newer); err != nil {
		t.Fatal(err)
	}
	res = assemble(t, eng, contextasm.Request{Template: tpl, Now: now})
	if !strings.Contains(res.Text, "Rate: 6.9% APR.\n") {
		t.Errorf("the re-declared variant is not written:\n%s", res.Text)
	}
}
