package contextasm

import (
	"testing"
	"time"

	"github.com/contextasm/contextasm/declare"
)

// TestToBlockRare: a declaration that sets none of the rare fields makes
// a Block without Rare (the common case, kept small); one that sets them
// makes a Block that reads every one back.
func TestToBlockRare(t *testing.T) {
	plain := declare.Declaration{RequestID: "p", MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: "x"}
	if b := toBlock(&plain); b.Rare != nil {
		t.Errorf("plain declaration: Rare %+v, want nil", b.Rare)
	}
	maxTokens, ttl := 7, declare.Duration(time.Hour)
	d := declare.Declaration{RequestID: "r", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s", Content: "x",
		Roles: []string{"a"}, ToolCalls: []declare.ToolCall{{ID: "c", Name: "n", Arguments: "{}"}}, ToolCallID: "c0", Group: "g",
		Variants: []string{"y"}, MaxTokens: &maxTokens, Supersedes: []string{"o"}, Replaces: []string{"t"}, IdleTTL: &ttl,
		BreakOnViolation: true, ViolationPatterns: []string{"z+"}}
	d.Provenance.SourceLocation, d.Provenance.URI = "f:1", "u:x"
	b := toBlock(&d)
	if b.Rare == nil {
		t.Fatal("Rare nil")
	}
	r := b.Rare
	if len(r.Roles) != 1 || len(r.ToolCalls) != 1 || r.ToolCallID != "c0" || r.Group != "g" || len(r.Variants) != 1 ||
		r.MaxTokens != 7 || len(r.Supersedes) != 1 || len(r.Replaces) != 1 || r.IdleTTL != time.Hour ||
		len(r.ViolationPatterns) != 1 || len(r.Patterns) != 1 || r.SourceLocation != "f:1" || r.URI != "u:x" {
		t.Errorf("Rare %+v", r)
	}
	if b.MinTokens != 0 {
		t.Errorf("MinTokens %d with max_tokens set, want 0", b.MinTokens)
	}
}
