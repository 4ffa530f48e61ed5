package contextasm_test

import (
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
)

// A message's count is the template's encoding's: an engine that counted a
// message for one encoding does not reuse that count under another (it
// did, and a cl100k_base request then counted a Chinese turn as
// o200k_base does, far under its real count).
func TestChatCountsPerEncoding(t *testing.T) {
	const src = `{"budget": 4000, "encoding": "ENC", "sections": [
	 {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 3000, "render": "{content}"}]}`
	o200k := parseTemplate(t, strings.Replace(src, "ENC", "o200k_base", 1))
	cl100k := parseTemplate(t, strings.Replace(src, "ENC", "cl100k_base", 1))
	turn := declare.Declaration{RequestID: "t1", MemoryType: declare.History, Scope: declare.ScopeGlobal,
		Content: strings.Repeat("客户要求在周五之前完成转账，并希望了解所有手续费。", 20)}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	both := newEngine(t, contextasm.Config{}, turn)
	assemble(t, both, contextasm.Request{Template: o200k, Now: now, Format: chat.FormatOpenAI})
	got := assemble(t, both, contextasm.Request{Template: cl100k, Now: now, Format: chat.FormatOpenAI})
	want := assemble(t, newEngine(t, contextasm.Config{}, turn), contextasm.Request{Template: cl100k, Now: now, Format: chat.FormatOpenAI})
	if got.TotalTokens != want.TotalTokens {
		t.Errorf("cl100k_base after o200k_base counts %d tokens, alone %d", got.TotalTokens, want.TotalTokens)
	}
}
