package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/contextasm/contextasm/declare"
)

// Epoch is the workload's "now": blocks are dated before it, some expire
// after it.
var Epoch = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// Session and User are the request the workload is meant for.
const (
	Session = "s-bench"
	User    = "u-bench"
)

// phrases are the building blocks of content, in several languages and
// kinds, so token density varies as it does in real memory.
var phrases = [...]string{
	"The applicant's net monthly income is EUR 3,450 and existing debt payments are EUR 1,120.",
	"Always state the annual percentage rate next to any quoted rate.",
	"客户要求在周五之前完成转账，并希望了解所有手续费。",
	"根据最新的政策，债务收入比超过百分之四十三的申请需要人工审核。",
	"O cliente prefere respostas em português europeu, com um resumo curto no fim.",
	"A taxa de juro nominal não inclui a comissão de abertura de 1%.",
	"func fee(amount float64) float64 { return math.Max(2.5, amount*0.004) }",
	`{"account":"PT50 0002 0123 1234 5678 9015 4","balance_eur":9800.15,"flags":["kyc_passed","dti_review"]}`,
	"SELECT id, amount, status FROM loans WHERE applicant_id = $1 ORDER BY created_at DESC;",
	"USER: Can you compare both options in a table with the total fees and arrival dates?",
	"AGENT: Before I quote anything I need to check your debt-to-income ratio.",
	"Market news: the central bank held rates; lenders compete on fees rather than rates.",
}

// Generate returns n declarations for seed. Content averages about 700
// bytes, so 20,000 blocks make a memories file of about 14 MB. About one
// block in 25 belongs to another session, one in 40 is expired, one in 30
// is stale; constraints are a tenth, with a few required ones.
func Generate(n int, seed uint64) []declare.Declaration {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	decls := make([]declare.Declaration, n)
	var b strings.Builder
	for i := range decls {
		b.Reset()
		for b.Len() < 350+r.IntN(550) {
			b.WriteString(phrases[r.IntN(len(phrases))])
			b.WriteByte(' ')
		}
		d := declare.Declaration{
			RequestID: fmt.Sprintf("blk-%06d", i),
			Scope:     declare.ScopeSession,
			SessionID: Session,
			Content:   strings.TrimSpace(b.String()),
		}
		w := float64(r.IntN(101)) / 100
		d.SemanticWeight = &w
		switch k := r.IntN(100); {
		case k < 10:
			d.MemoryType = declare.Constraint
			d.Scope, d.SessionID = declare.ScopeGlobal, ""
			d.Required = i < 5 && k < 2
		case k < 35:
			d.MemoryType = declare.Context
		case k < 55:
			d.MemoryType = declare.External
			p := float64(r.IntN(100)) / 100 // below 1: priority 1 would make a block required
			d.Priority = &p
		default:
			d.MemoryType = declare.History
		}
		if d.Required {
			d.Content = d.Content[:min(len(d.Content), 120)]
			d.Content = strings.ToValidUTF8(d.Content, "")
		}
		lm := Epoch.Add(-time.Duration(n-i) * time.Minute)
		d.LastModified = &lm
		switch {
		case i%25 == 7 && d.Scope == declare.ScopeSession:
			d.SessionID = "s-other"
		case i%40 == 11:
			vu := declare.Time{Time: Epoch.Add(-time.Hour)}
			d.ValidUntil = &vu
		case i%30 == 13:
			vu := declare.Time{Time: Epoch.Add(24 * time.Hour)}
			sa := declare.Duration(72 * time.Hour)
			d.ValidUntil, d.StaleAfter = &vu, &sa
		}
		decls[i] = d
	}
	return decls
}

// TemplateJSON returns the workload's template for a budget: four sections
// with caps that together exceed the budget, so the hierarchical cut runs.
func TemplateJSON(budget int) []byte {
	return fmt.Appendf(nil, `{
  "template_version": "1.2",
  "budget": %d,
  "encoding": "o200k_base",
  "sections": [
    {"name": "CONSTRAINTS", "priority": 1, "memory_types": ["constraint"], "max_tokens": %d, "render": "<rule id=\"{request_id}\">{content}</rule>"},
    {"name": "CONTEXT", "priority": 2, "memory_types": ["context"], "max_tokens": %d, "render": "<context>{content}</context>", "fill": "skip"},
    {"name": "SOURCES", "priority": 3, "memory_types": ["external"], "max_tokens": %d, "render": "<source id=\"{request_id}\">{content}</source>", "partial": true},
    {"name": "HISTORY", "priority": 4, "memory_types": ["history"], "max_tokens": %d, "render": "{content}", "order": "time", "partial": true}
  ]
}
`, budget, budget/4, budget/3, budget/4, budget/2)
}

// WriteJSONL writes declarations one a line.
func WriteJSONL(w io.Writer, decls []declare.Declaration) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range decls {
		if err := enc.Encode(&decls[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Turn returns the i-th new history turn of the workload's session: short,
// weighty enough to enter the context, and dated at the workload's now (as
// `contextasm bench` dates its turn): a request at Epoch that follows the
// previous one at Epoch sees it as a block like the others, not as one
// modified since (which every later turn at the same now would see too).
func Turn(i int) declare.Declaration {
	w := 0.97
	lm := Epoch
	return declare.Declaration{
		RequestID:      fmt.Sprintf("turn-%06d", i),
		MemoryType:     declare.History,
		Scope:          declare.ScopeSession,
		SessionID:      Session,
		SemanticWeight: &w,
		LastModified:   &lm,
		Content:        fmt.Sprintf("USER: follow-up question number %d about the fees and the arrival date.", i),
	}
}

// Other returns a block of another session: declaring it changes the store
// but not what the workload's request sees.
func Other() declare.Declaration {
	return declare.Declaration{
		RequestID: "zz-other-session", MemoryType: declare.History, Scope: declare.ScopeSession,
		SessionID: "s-other", Content: "a turn of somebody else's conversation",
	}
}
