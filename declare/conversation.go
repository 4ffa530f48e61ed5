package declare

import (
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
}

// Conversation returns the declarations of a conversation as an agent
// framework holds it, for hosts that hand contextasm the framework's
// messages on every call (the adapters do):
//
//   - each system part is a required constraint block, request_id
//     Prefix+"system-"+i: the framework's instructions are never dropped;
//   - each message is a history block, request_id Prefix+"msg-"+i, with
//     its role, tool calls and the call it answers; the last one is
//     required, as the turn the model is to answer.
//
// The ids depend only on positions, so declaring the same conversation
// again replaces its blocks, and a longer one adds only its new turns.
// The declarations are not validated here: Engine.Declare does that.
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
	for i, p := range c.System {
		decls = append(decls, Declaration{RequestID: prefix + "system-" + strconv.Itoa(i), MemoryType: Constraint,
			Scope: ScopeSession, SessionID: o.SessionID, Content: p.Text, Required: true})
	}
	for i, m := range c.Messages {
		at := o.Now.Add(-time.Duration(len(c.Messages)-1-i) * time.Millisecond)
		decls = append(decls, Declaration{RequestID: prefix + "msg-" + strconv.Itoa(i), MemoryType: History,
			Scope: ScopeSession, SessionID: o.SessionID, Content: m.Content, LastModified: &at,
			Role: m.Role, ToolCalls: slices.Clone(m.ToolCalls), ToolCallID: m.ToolCallID,
			Required: i == len(c.Messages)-1})
	}
	return decls, nil
}
