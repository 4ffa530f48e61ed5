package declare_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/declare"
)

func TestConversation(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	conv := chat.Conversation{
		System: []chat.SystemPart{{Text: "Be brief."}},
		Messages: []chat.Message{
			{Role: chat.RoleUser, Content: "Rate?"},
			{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c1", Name: "rate", Arguments: "{}"}}},
			{Role: chat.RoleTool, ToolCallID: "c1", Content: "6.9%"},
		},
	}
	decls, err := declare.Conversation(conv, declare.ConversationOptions{SessionID: "s1", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		prefix   string
		mt       declare.MemoryType
		role     declare.Role
		at       time.Time
		required bool
	}{
		{"s1/system-", declare.Constraint, "", time.Time{}, true},
		{"s1/msg-", declare.History, chat.RoleUser, now.Add(-2 * time.Millisecond), false},
		{"s1/msg-", declare.History, chat.RoleAssistant, now.Add(-time.Millisecond), false},
		{"s1/msg-", declare.History, chat.RoleTool, now, true},
	}
	if len(decls) != len(want) {
		t.Fatalf("%d declarations, want %d", len(decls), len(want))
	}
	for i, w := range want {
		d := decls[i]
		var at time.Time
		if d.LastModified != nil {
			at = *d.LastModified
		}
		if !strings.HasPrefix(d.RequestID, w.prefix) || len(d.RequestID) != len(w.prefix)+12 || d.MemoryType != w.mt || d.Role != w.role || !at.Equal(w.at) || d.Required != w.required || d.SessionID != "s1" || d.Scope != declare.ScopeSession {
			t.Errorf("declarations[%d] = %+v, want %+v", i, d, w)
		}
		if err := declare.Validate(&d); err != nil {
			t.Errorf("declarations[%d]: %v", i, err)
		}
	}
	if decls[2].ToolCalls[0] != conv.Messages[1].ToolCalls[0] || decls[3].ToolCallID != "c1" {
		t.Errorf("tool fields lost: %+v %+v", decls[2], decls[3])
	}
	if decls[3].MaxTokens != nil {
		t.Errorf("a tool result declared with max_tokens %d without ToolResultMaxTokens", *decls[3].MaxTokens)
	}
	clipped, err := declare.Conversation(conv, declare.ConversationOptions{SessionID: "s1", Now: now, ToolResultMaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range clipped {
		if got, want := d.MaxTokens != nil, i == 3; got != want || got && *d.MaxTokens != 64 {
			t.Errorf("ToolResultMaxTokens 64: declarations[%d].MaxTokens = %v", i, d.MaxTokens)
		}
	}
	decls[2].ToolCalls[0].ID = "changed"
	if conv.Messages[1].ToolCalls[0].ID != "c1" {
		t.Error("the declarations share the conversation's tool calls")
	}
	if got, _ := declare.Conversation(conv, declare.ConversationOptions{SessionID: "s1", Prefix: "x:", Now: now}); got[1].RequestID != "x:"+strings.TrimPrefix(decls[1].RequestID, "s1/") {
		t.Errorf("prefix: %q", got[1].RequestID)
	}
	// An id is the message's, wherever it stands: a framework that trims
	// its history keeps the ids of what it kept. A repeat is numbered.
	user := conv.Messages[0]
	trimmed := chat.Conversation{Messages: append(slices.Clone(conv.Messages[1:]), user, user)}
	again, err := declare.Conversation(trimmed, declare.ConversationOptions{SessionID: "s1", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if again[0].RequestID != decls[2].RequestID || again[1].RequestID != decls[3].RequestID ||
		again[2].RequestID != decls[1].RequestID || again[3].RequestID != decls[1].RequestID+".2" {
		t.Errorf("ids after a trim: %q, before: %q", []string{again[0].RequestID, again[1].RequestID, again[2].RequestID, again[3].RequestID},
			[]string{decls[1].RequestID, decls[2].RequestID, decls[3].RequestID})
	}
	ids := map[string]bool{}
	for _, d := range decls {
		ids[d.RequestID] = true
	}
	if len(ids) != len(decls) {
		t.Errorf("ids repeat: %v", ids)
	}
	for _, o := range []declare.ConversationOptions{{Now: now}, {SessionID: "s1"}} {
		if _, err := declare.Conversation(conv, o); !errors.Is(err, declare.ErrInvalid) {
			t.Errorf("%+v: %v", o, err)
		}
	}
}
