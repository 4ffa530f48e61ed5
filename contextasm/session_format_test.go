package contextasm_test

import (
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
)

// A session assembled in turn as text and as a chat body keeps one
// previous decision per format: each format's first assembly is a
// conversation's first (no prefix to compare), and each later one
// compares with its own format's previous text.
func TestSessionDecisionPerFormat(t *testing.T) {
	tpl := parseTemplate(t, `{"budget": 400, "sections": [
	 {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 100, "render": "{content}"},
	 {"name": "HISTORY", "priority": 2, "memory_types": ["history"], "max_tokens": 300, "render": "{content}", "order": "time"}]}`)
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	eng := newEngine(t, contextasm.Config{},
		global("rule", declare.Constraint, "Quote the APR with every rate."),
		declare.Declaration{RequestID: "t1", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1",
			LastModified: &now, Content: "What is today's rate?"})
	formats := []chat.Format{0, chat.FormatOpenAI, 0, chat.FormatAnthropic, chat.FormatOpenAI}
	seen := map[chat.Format]bool{}
	for i, f := range formats {
		res := assemble(t, eng, contextasm.Request{Template: tpl, Now: now.Add(time.Duration(i) * time.Minute), SessionID: "s1", Format: f})
		switch {
		case !seen[f] && res.Prefix != nil:
			t.Errorf("call %d (%v): the format's first assembly compared with %+v, another format's decision", i, f, res.Prefix)
		case seen[f] && (res.Prefix == nil || res.Prefix.Reason != "unchanged"):
			t.Errorf("call %d (%v): prefix %+v, want the format's previous text unchanged", i, f, res.Prefix)
		}
		seen[f] = true
	}
}
