package declare

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/contextasm/contextasm/chat"
)

// ConversationOptions says how [Conversation] declares a conversation.
type ConversationOptions struct {
	// SessionID is the session every block is declared in (scope
	// session). Required.
	SessionID string
	// Prefix starts every request_id. Empty means SessionID and "/".
	Prefix string
	// Now is the last_modified of the last message; each earlier message
	// is a millisecond older, so that time order is the conversation's
	// order and the newest turns rank first. Required.
	Now time.Time
	// ToolResultMaxTokens, when positive, is the max_tokens of every tool
	// result declared: its content is clipped to that many tokens, with
	// a marker. Zero leaves them to the template section's
	// tool_result_max_tokens (by default half the section's cap).
	ToolResultMaxTokens int
}

// Conversation returns the declarations of a conversation as an agent
// framework holds it, for hosts that hand contextasm the framework's
// messages on every call (the adapters do):
//
//   - each system part is a required constraint block: the framework's
//     instructions are never dropped;
//   - each message is a history block with its role, tool calls and the
//     call it answers; the last one is required, as the turn the model is
//     to answer.
//
// A block's request_id is Prefix, "system-" or "msg-", and the first 12
// hex digits of the SHA-256 of what it says (role, content, tool calls,
// the call answered), with ".2", ".3"… for a repeat of the same message.
// An id depends on the message, not on its position: declaring the
// conversation again replaces its blocks with themselves, a longer one
// adds only its new turns, and one a framework trimmed or rewrote keeps
// the ids of the messages it kept, so that the sticky decisions of the
// conversation still know them. The declarations are not validated here:
// Engine.Declare does that.
func Conversation(c chat.Conversation, o ConversationOptions) ([]Declaration, error) {
	if o.SessionID == "" {
		return nil, fmt.Errorf("%w: ConversationOptions.SessionID is empty", ErrInvalid)
	}
	if o.Now.IsZero() {
		return nil, fmt.Errorf("%w: ConversationOptions.Now is zero", ErrInvalid)
	}
	prefix := o.Prefix
	if prefix == "" {
		prefix = o.SessionID + "/"
	}
	decls := make([]Declaration, 0, len(c.System)+len(c.Messages))
	seen := make(map[string]int, len(c.System)+len(c.Messages))
	id := func(kind string, fields ...string) string {
		h := sha256.New()
		for _, f := range fields {
			var n [8]byte
			binary.LittleEndian.PutUint64(n[:], uint64(len(f)))
			h.Write(n[:])
			h.Write([]byte(f))
		}
		id := prefix + kind + hex.EncodeToString(h.Sum(nil)[:6])
		seen[id]++
		if n := seen[id]; n > 1 {
			id += "." + strconv.Itoa(n)
		}
		return id
	}
	for _, p := range c.System {
		decls = append(decls, Declaration{RequestID: id("system-", p.Text), MemoryType: Constraint,
			Scope: ScopeSession, SessionID: o.SessionID, Content: p.Text, Required: true})
	}
	for i, m := range c.Messages {
		fields := []string{string(m.Role), m.Content, m.ToolCallID}
		for _, tc := range m.ToolCalls {
			fields = append(fields, tc.ID, tc.Name, tc.Arguments)
		}
		at := o.Now.Add(-time.Duration(len(c.Messages)-1-i) * time.Millisecond)
		decls = append(decls, Declaration{RequestID: id("msg-", fields...), MemoryType: History,
			Scope: ScopeSession, SessionID: o.SessionID, Content: m.Content, LastModified: &at,
			Role: m.Role, ToolCalls: slices.Clone(m.ToolCalls), ToolCallID: m.ToolCallID, Reasoning: slices.Clone(m.Reasoning),
			Required: i == len(c.Messages)-1})
		if m.ToolCallID != "" && o.ToolResultMaxTokens > 0 {
			n := o.ToolResultMaxTokens
			decls[len(decls)-1].MaxTokens = &n
		}
	}
	return decls, nil
}
