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
	tools, err := ResponsesTools(c.Tools)
	if err != nil {
		return nil, err
	}
	body := responsesBody{Input: make([]any, 0, len(c.Messages)+1), Tools: tools}
	if len(c.System) > 0 {
		body.Instructions = c.SystemText()
	}
	for _, m := range c.Messages {
		switch m.Role {
		case RoleTool:
			body.Input = append(body.Input, responsesOutput{Type: "function_call_output", CallID: WireID(m.ToolCallID), Output: m.Content})
			continue
		case RoleAssistant:
			for _, r := range m.Reasoning {
				if r.For(FormatResponses) {
					body.Input = append(body.Input, r.JSON)
				}
			}
		}
		if m.Content != "" {
			body.Input = append(body.Input, responsesMessage{Type: "message", Role: string(m.Role), Content: m.Content})
		}
		for _, tc := range m.ToolCalls {
			body.Input = append(body.Input, responsesCall{Type: "function_call", CallID: WireID(tc.ID), Name: tc.Name, Arguments: tc.Arguments})
		}
	}
	return marshal(body)
}

type responsesBody struct {
	Instructions string `json:"instructions,omitempty"`
	// Input holds responsesMessage, responsesCall, responsesOutput and
	// reasoning items (json.RawMessage).
	Input []any `json:"input"`
	// Tools are the tool definitions offered the model (chat/tools.go).
	Tools []ResponsesTool `json:"tools,omitempty"`
}

type responsesMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responsesCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type responsesOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}
