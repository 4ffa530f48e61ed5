package einoadapter

import (
	"encoding/json"
	"fmt"

	"github.com/cloudwego/eino/schema"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
)

// ExtraSystem is the key, in the Extra of the system message the
// middleware writes, of the texts of the system messages it replaced: a
// JSON list of strings.
const ExtraSystem = "contextasm_system"

// Conversation returns Eino's messages as a chat.Conversation: system
// messages as system parts (a system message the middleware wrote as the
// parts it replaced), user, assistant and tool messages as turns. For each
// turn, from[i] is the index in msgs of the message it came from.
func Conversation(msgs []*schema.Message) (conv chat.Conversation, from []int, err error) {
	for i, m := range msgs {
		if m == nil {
			return conv, nil, fmt.Errorf("einoadapter: message %d is nil", i)
		}
		switch m.Role {
		case schema.System:
			if replaced, ok := m.Extra[ExtraSystem].(string); ok {
				var texts []string
				if err := json.Unmarshal([]byte(replaced), &texts); err != nil {
					return conv, nil, fmt.Errorf("einoadapter: message %d: Extra[%q]: %w", i, ExtraSystem, err)
				}
				for _, t := range texts {
					conv.System = append(conv.System, chat.SystemPart{Text: t})
				}
				continue
			}
			conv.System = append(conv.System, chat.SystemPart{Text: m.Content})
		case schema.User:
			conv.Messages = append(conv.Messages, chat.Message{Role: chat.RoleUser, Content: m.Content})
			from = append(from, i)
		case schema.Assistant:
			cm := chat.Message{Role: chat.RoleAssistant, Content: m.Content}
			for _, tc := range m.ToolCalls {
				if tc.Type != "" && tc.Type != "function" {
					return conv, nil, fmt.Errorf("einoadapter: message %d: tool call %q of type %q (want function)", i, tc.ID, tc.Type)
				}
				args := tc.Function.Arguments
				if args == "" {
					args = "{}"
				}
				cm.ToolCalls = append(cm.ToolCalls, chat.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
			}
			conv.Messages = append(conv.Messages, cm)
			from = append(from, i)
		case schema.Tool:
			conv.Messages = append(conv.Messages, chat.Message{Role: chat.RoleTool, ToolCallID: m.ToolCallID, Content: m.Content})
			from = append(from, i)
		default:
			return conv, nil, fmt.Errorf("einoadapter: message %d: unknown role %q", i, m.Role)
		}
	}
	return conv, from, nil
}

// Messages returns an assembled Result as Eino's messages: one system
// message with the system prompt (and, in its Extra under ExtraSystem, the
// system texts declared, when there are any), then each kept message. A
// message whose block came from original[id] (by request_id) is that
// message, or a copy with the content cut when the Result cut it; any
// other is made from the Result's message.
func Messages(res *contextasm.Result, system []string, original map[string]*schema.Message) []*schema.Message {
	conv := res.Messages()
	out := make([]*schema.Message, 0, len(conv.Messages)+1)
	sys := schema.SystemMessage(conv.SystemText())
	if len(system) > 0 {
		data, _ := json.Marshal(system) // a []string always marshals
		sys.Extra = map[string]any{ExtraSystem: string(data)}
	}
	out = append(out, sys)
	for _, cm := range conv.Messages {
		var m *schema.Message
		if len(cm.BlockIDs) == 1 {
			m = original[cm.BlockIDs[0]]
		}
		switch {
		case m == nil:
			m = message(cm)
		case m.Content != cm.Content:
			cut := *m
			cut.Content = cm.Content
			m = &cut
		}
		out = append(out, m)
	}
	return out
}

// message returns a chat message as Eino's.
func message(cm chat.Message) *schema.Message {
	switch cm.Role {
	case chat.RoleAssistant:
		var calls []schema.ToolCall
		for _, tc := range cm.ToolCalls {
			calls = append(calls, schema.ToolCall{ID: tc.ID, Type: "function", Function: schema.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
		return schema.AssistantMessage(cm.Content, calls)
	case chat.RoleTool:
		return schema.ToolMessage(cm.Content, cm.ToolCallID)
	}
	return schema.UserMessage(cm.Content)
}
