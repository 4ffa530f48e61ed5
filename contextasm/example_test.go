package contextasm_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/template"
)

func ExampleEngine_Assemble() {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	err = eng.Declare(
		declare.Declaration{RequestID: "rule-privacy", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal,
			Required: true, Content: "Never reveal account numbers."},
		declare.Declaration{RequestID: "turn-1", MemoryType: declare.History, Scope: declare.ScopeSession,
			SessionID: "s1", Content: "USER: What is my balance?"},
		declare.Declaration{RequestID: "turn-9", MemoryType: declare.History, Scope: declare.ScopeSession,
			SessionID: "s2", Content: "USER: Someone else's question."},
	)
	if err != nil {
		log.Fatal(err)
	}

	tpl, err := template.Parse([]byte(`{
	  "budget": 200,
	  "sections": [
	    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 50, "render": "<rule>{content}</rule>"},
	    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 100, "render": "{content}"}
	  ]
	}`), "template.json")
	if err != nil {
		log.Fatal(err)
	}

	// Now is an input: the engine never reads the clock.
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, SessionID: "s1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Text) // the text ends with a newline
	fmt.Println("tokens:", res.TotalTokens, "of", res.Budget)
	for _, ev := range res.Events() {
		fmt.Println("event:", ev.Reason, ev.RequestID)
	}
	// Another session's block is counted, never named.
	fmt.Println("excluded:", res.ExcludedCounts)
	// Output:
	// [MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:b904f03843efca3e]
	// <rule>Never reveal account numbers.</rule>
	// USER: What is my balance?
	// tokens: 40 of 200
	// excluded: map[out_of_scope:1]
}

func ExampleEngine_Declare() {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	weight := 1.5
	err = eng.Declare(
		declare.Declaration{RequestID: "rule-ok", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal,
			Content: "A valid rule."},
		declare.Declaration{RequestID: "note-bad", MemoryType: declare.Context, Scope: declare.ScopeSession,
			SemanticWeight: &weight, Content: "Two problems: no session_id, and a weight above 1."},
	)
	// All or nothing: one invalid declaration and none is stored.
	fmt.Println(err)
	fmt.Println("blocks stored:", eng.Len())
	// Output:
	// declare: request_id "note-bad": session_id: is required when scope is session
	// declare: request_id "note-bad": semantic_weight: must be between 0 and 1 (got 1.5)
	// blocks stored: 0
}

func ExampleEngine_Feedback() {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	rule := declare.Declaration{RequestID: "rule-age", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal,
		Content: "Never decide on the applicant's age.", BreakOnViolation: true,
		ViolationPatterns: []string{`(?i)because of (his|her) age`}}
	fact := declare.Declaration{RequestID: "dti", MemoryType: declare.Context, Scope: declare.ScopeGlobal,
		Content: "Debt-to-income ratio: 45%."}
	if err := eng.Declare(rule, fact); err != nil {
		log.Fatal(err)
	}
	tpl, err := template.Parse([]byte(`{"budget": 200, "sections": [
	  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 50, "render": "<rule id=\"{request_id}\">{content}</rule>"},
	  {"name": "FACTS", "priority": 2, "memory_types": ["context"], "max_tokens": 50, "render": "<fact id=\"{request_id}\">{content}</fact>"}]}`), "t.json")
	if err != nil {
		log.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now})
	if err != nil {
		log.Fatal(err)
	}

	// The model cites the blocks it used; citing one early raises its
	// trust, which later assemblies rank with.
	fb, err := eng.Feedback(context.Background(), res, `<memory_ref id="dti"/> At 45% the file needs a manual review.`)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range fb.TrustChanges {
		fmt.Printf("trust of %s: %.2f -> %.2f\n", c.RequestID, c.From, c.To)
	}

	// A response that breaks a break_on_violation constraint is an error.
	_, err = eng.Feedback(context.Background(), res, "Declined because of her age.")
	fmt.Println(errors.Is(err, feedback.ErrConstraintViolation), err)
	// Output:
	// trust of dti: 0.50 -> 0.55
	// true CONSTRAINT_VIOLATION: block "rule-age": the response matches "(?i)because of (his|her) age"
}

// A conversation: each call with the same session, user and template
// follows the previous one's decisions, so the text only grows at the end
// and a provider's prompt cache reuses its prefix. Result.Prefix says how
// much of the text is the previous call's; EndSession releases it all.
func ExampleEngine_EndSession() {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	tpl, err := template.Parse([]byte(`{
	  "budget": 300,
	  "sections": [
	    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 50, "render": "<rule>{content}</rule>"},
	    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 200, "render": "{content}", "order": "time"}
	  ]
	}`), "template.json")
	if err != nil {
		log.Fatal(err)
	}
	rule := declare.Declaration{RequestID: "rule-privacy", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal,
		Required: true, Content: "Never reveal account numbers."}
	if err := eng.Declare(rule); err != nil {
		log.Fatal(err)
	}
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i, q := range []string{"What is my balance?", "And my last payment?", "Thanks!"} {
		now := start.Add(time.Duration(i) * 3 * time.Minute)
		turn := declare.Declaration{RequestID: fmt.Sprintf("turn-%d", i+1), MemoryType: declare.History,
			Scope: declare.ScopeSession, SessionID: "s1", LastModified: &now, Content: "USER: " + q}
		if err := eng.Declare(turn); err != nil {
			log.Fatal(err)
		}
		res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, SessionID: "s1", UserID: "u1"})
		if err != nil {
			log.Fatal(err)
		}
		if p := res.Prefix; p != nil {
			fmt.Printf("call %d: %d of %d tokens as before (%s %s)\n", i+1, p.StableTokens, res.TotalTokens, p.Reason, p.FirstChangedBlock)
		} else {
			fmt.Printf("call %d: %d tokens, the conversation's first\n", i+1, res.TotalTokens)
		}
	}
	end, err := eng.EndSession("s1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("released %d blocks and %d decisions; %d block left\n", end.Blocks, end.Decisions, eng.Len())
	// Output:
	// call 1: 43 tokens, the conversation's first
	// call 2: 43 of 50 tokens as before (appended turn-2)
	// call 3: 50 of 54 tokens as before (appended turn-3)
	// released 3 blocks and 1 decisions; 1 block left
}
