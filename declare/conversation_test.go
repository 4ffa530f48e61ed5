package declare_test

import (
	"errors"
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
		id       string
		mt       declare.MemoryType
		role     declare.Role
		at       time.Time
		required bool
	}{
		{"s1/system-0", declare.Constraint, "", time.Time{}, true},
		{"s1/msg-0", declare.History, chat.RoleUser, now.Add(-2 * time.Millisecond), false},
		{"s1/msg-1", declare.History, chat.RoleAssistant, now.Add(-time.Millisecond), false},
		{"s1/msg-2", declare.History, chat.RoleTool, now, true},
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
		if d.RequestID != w.id || d.MemoryType != w.mt || d.Role != w.role || !at.Equal(w.at) || d.Required != w.required || d.SessionID != "s1" || d.Scope != declare.ScopeSession {
			t.Errorf("declarations[%d] = %+v, want %+v", i, d, w)
		}
		if err := declare.Validate(&d); err != nil {
			t.Errorf("declarations[%d]: %v", i, err)
		}
	}
	if decls[2].ToolCalls[0] != conv.Messages[1].ToolCalls[0] || decls[3].ToolCallID != "c1" {
		t.Errorf("tool fields lost: %+v %+v", decls[2], decls[3])
	}
	decls[2].ToolCalls[0].ID = "changed"
	if conv.Messages[1].ToolCalls[0].ID != "c1" {
		t.Error("the declarations share the conversation's tool calls")
	}
	if decls, _ := declare.Conversation(conv, declare.ConversationOptions{SessionID: "s1", Prefix: "x:", Now: now}); decls[1].RequestID != "x:msg-0" {
		t.Errorf("prefix: %q", decls[1].RequestID)
	}
	for _, o := range []declare.ConversationOptions{{Now: now}, {SessionID: "s1"}} {
		if _, err := declare.Conversation(conv, o); !errors.Is(err, declare.ErrInvalid) {
			t.Errorf("%+v: %v", o, err)
		}
	}
}
