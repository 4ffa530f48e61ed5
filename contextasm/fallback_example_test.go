package contextasm_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// Two rules on the same fact (conflict_key "max-rate"): the more trusted
// enters, and the result says so. The preferred template's rules cap
// cannot hold the required rule, so the fallback is used.
func ExampleRequest_fallback() {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	trust := func(t float64) *float64 { return &t }
	err = eng.Declare(
		declare.Declaration{RequestID: "rule-kyc", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, Required: true,
			Content: "Verify the applicant's identity before discussing any terms."},
		declare.Declaration{RequestID: "rate-cap-15", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, ConflictKey: "max-rate",
			TrustScore: trust(0.9), Content: "The rate may not exceed 15%."},
		declare.Declaration{RequestID: "rate-sb-18", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal, ConflictKey: "max-rate",
			TrustScore: trust(0.6), Content: "Small businesses may go up to 18%."},
	)
	if err != nil {
		log.Fatal(err)
	}
	parse := func(rulesCap string) *template.Template {
		tpl, err := template.Parse([]byte(`{"budget": 200, "sections": [
		  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": `+rulesCap+`, "render": "RULE: {content}"}]}`), "t.json")
		if err != nil {
			log.Fatal(err)
		}
		return tpl
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{
		Template: parse("5"), Fallback: []*template.Template{parse("100")},
		Now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("template %d used; the first: %s\n", res.Template.Used, res.Template.Skipped[0].Reason)
	for _, c := range res.Conflicts() {
		fmt.Printf("%s: %s (trust %v) over %s (trust %v)\n", c.Key, c.Winner, c.WinnerTrust, c.Losers[0].RequestID, c.Losers[0].Trust)
	}
	fmt.Print(res.Text[len("[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:0123456789abcdef]\n"):])
	// Output:
	// template 1 used; the first: budget_too_small
	// max-rate: rate-cap-15 (trust 0.9) over rate-sb-18 (trust 0.6)
	// RULE: Verify the applicant's identity before discussing any terms.
	// RULE: The rate may not exceed 15%.
}
