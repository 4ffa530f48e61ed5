package chat

// Responses returns the body of an OpenAI Responses API request for c:
// {"instructions":"...","input":[...]}, the system prompt (its parts
// joined) as instructions, then each message as input items: a user or
// assistant message as a "message" item with its text; an assistant's
// reasoning items (Reasoning.For) and then its calls as "function_call"
// items (call_id, name, arguments); a result as a "function_call_output"
// item (call_id, output), which follows the call it answers. It returns
// an *Error wrapping ErrInvalid when c breaks a rule of the API (see
// [Conversation.Check]).
func Responses(c Conversation) ([]byte, error) {
	if err := c.Check(FormatResponses); err != nil {
		return nil, err
	}
	rt, err := ResponsesTools(c.Tools)
	if err != nil {
		return nil, err
	}
	tools, err := marshalTools(rt)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, c.sizeHint(true)+len(tools))
	b = append(b, '{')
	if systemLen(c.System) > 0 {
		b = append(b, `"instructions":`...)
		b = appendParts(b, c.System)
		b = append(b, ',')
	}
	b = append(b, `"input":[`...)
	items := 0
	for i := range c.Messages {
		m := &c.Messages[i]
		switch m.Role {
		case RoleTool:
			b = appendComma(b, items)
			b = appendField(b, `{"type":"function_call_output","call_id":`, WireID(m.ToolCallID))
			b = appendField(b, `,"output":`, m.Content)
			b = append(b, '}')
			items++
			continue
		case RoleAssistant:
			for _, r := range m.Reasoning {
				if r.For(FormatResponses) {
					b = appendComma(b, items)
					b = appendCompact(b, r.JSON)
					items++
				}
			}
		}
		if m.Content != "" {
			b = appendComma(b, items)
			b = appendField(b, `{"type":"message","role":`, string(m.Role))
			b = appendField(b, `,"content":`, m.Content)
			b = append(b, '}')
			items++
		}
		for _, tc := range m.ToolCalls {
			b = appendComma(b, items)
			b = appendField(b, `{"type":"function_call","call_id":`, WireID(tc.ID))
			b = appendField(b, `,"name":`, tc.Name)
			b = appendField(b, `,"arguments":`, tc.Arguments)
			b = append(b, '}')
			items++
		}
	}
	b = append(b, ']')
	b = appendTools(b, tools)
	return append(b, '}'), nil
}
