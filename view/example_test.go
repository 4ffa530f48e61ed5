package view_test

import (
	"context"
	"io"
	"log"
	"os"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/view"
)

// A host explains an assembly it just ran: the report for its log or
// terminal, the page for a person to open.
func ExampleWriteReport() {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		log.Fatal(err)
	}
	err = eng.Declare(
		declare.Declaration{RequestID: "rule-privacy", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal,
			Required: true, Content: "Never reveal account numbers."},
		declare.Declaration{RequestID: "turn-1", MemoryType: declare.History, Scope: declare.ScopeSession,
			SessionID: "s1", Content: "USER: What is my balance? I need it for the rent, which is due on Friday, and the bank is closed."},
		declare.Declaration{RequestID: "turn-2", MemoryType: declare.History, Scope: declare.ScopeSession,
			SessionID: "s1", Content: "USER: Never mind."},
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
	    {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 20, "render": "{content}", "fill": "skip"}
	  ]
	}`), "template.json")
	if err != nil {
		log.Fatal(err)
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{
		Template: tpl, Now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), SessionID: "s1"})
	if err != nil {
		log.Fatal(err)
	}

	d := res.Dump()
	if err := view.WriteReport(os.Stdout, &d, view.ReportOptions{Width: 72}); err != nil {
		log.Fatal(err)
	}
	if err := view.WriteHTML(io.Discard, &d); err != nil { // or to a file
		log.Fatal(err)
	}
	// Output:
	// contextasm report · sha256:d723cdba325ec7f0 · o200k_base
	// now 2026-11-30T09:00:00Z · protocol v1.2 · render sha256:c4df3775b87f…
	//
	// Budget  38 of 200 tokens (19%) · 162 free
	//         ████████████▏░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░
	// Blocks  2 kept · 0 cut · 1 dropped · 1 excluded
	// Query   the newest user turn (turn-2) · 5 tokens · sha256:5b2b11cefedc…
	//         rel: each block's relevance to the query, 0 to 1; points: what
	//         it added to the score
	//
	// RULES · priority 1 · 1 block
	//   ██████▏░░░░░░░░░░░░░░░░░░░░░░░░  10/50 tok (20% of cap) · 5% of budget
	//   #  status   tokens  score    rel   points  block         why
	//   1  kept         10  0.5000  0.12        -  rule-privacy  required
	//
	// HISTORY · priority 2 · 2 blocks
	//   ███████▊░░░░░░░░░░░░░░░░░░░░░░░  5/20 tok (25% of cap) · 3% of budget
	//   #  status   tokens  score    rel   points  block         why
	//   1  kept          5  0.3967  0.54  +0.2717  turn-2
	//   2  dropped       -  0.1697  0.09  +0.0447  turn-1        section_cap
	//
	// Excluded before ranking: 1
	//   out_of_scope · belongs to another session or user
	//     1 block hidden from this request: counted, not named
	//
	// What the reasons mean
	//   required     the host requires it: never dropped or cut
	//   section_cap  did not fit its section's max_tokens
	//
	// Total  38 of 200 tokens: 15 in sections, 23 for the header and joins
}
