package chat

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
)

// OpenAI returns the body of a Chat Completions request for c:
// {"messages":[...]}, the system prompt first as one "system" message. It
// returns an *Error wrapping ErrInvalid when c breaks a rule of the API
// (see [Conversation.Check]).
func OpenAI(c Conversation) ([]byte, error) {
	if err := c.Check(FormatOpenAI); err != nil {
		return nil, err
	}
	if err := c.checkTools(FormatOpenAI); err != nil {
		return nil, err
	}
	body := openaiBody{Messages: make([]openaiMessage, 0, len(c.Messages)+1), Tools: openaiTools(c.Tools)}
	if len(c.System) > 0 {
		body.Messages = append(body.Messages, openaiMessage{Role: "system", Content: c.SystemText()})
	}
	for _, m := range c.Messages {
		om := openaiMessage{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openaiCall{ID: tc.ID, Type: "function",
				Function: openaiFunction{Name: tc.Name, Arguments: tc.Arguments}})
		}
		body.Messages = append(body.Messages, om)
	}
	return marshal(body)
}

type openaiBody struct {
	Messages []openaiMessage `json:"messages"`
	Tools    []openaiTool    `json:"tools,omitempty"`
}

type openaiMessage struct {
	Role string `json:"role"`
	// Content is left out only for an assistant message that makes tool
	// calls and says nothing (Check holds every other message to content).
	Content    string       `json:"content,omitempty"`
	ToolCalls  []openaiCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type openaiCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function openaiFunction `json:"function"`
}

type openaiFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Anthropic returns the body of a Messages API request for c:
// {"system":[...],"messages":[...]}, with the system prompt as text blocks
// (cache_control on those that end at a cache breakpoint) and adjacent
// messages of one role merged. It returns an *Error wrapping ErrInvalid
// when c breaks a rule of the API (see [Conversation.Check]).
func Anthropic(c Conversation) ([]byte, error) {
	if err := c.Check(FormatAnthropic); err != nil {
		return nil, err
	}
	if err := c.checkTools(FormatAnthropic); err != nil {
		return nil, err
	}
	body := anthropicBody{Tools: anthropicTools(c.Tools)}
	for _, p := range c.System {
		body.System = append(body.System, anthropicBlock{Type: "text", Text: p.Text, CacheControl: ephemeral(p.CacheBreakpoint)})
	}
	body.Messages = make([]anthropicMessage, 0, len(c.Messages))
	for _, m := range c.Messages {
		role := "user"
		if m.Role == RoleAssistant {
			role = "assistant"
		}
		n := len(body.Messages)
		if n == 0 || body.Messages[n-1].Role != role {
			body.Messages = append(body.Messages, anthropicMessage{Role: role})
			n++
		}
		am := &body.Messages[n-1]
		start := len(am.Content)
		switch m.Role {
		case RoleTool:
			content := m.Content
			am.Content = append(am.Content, anthropicBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: &content})
		default:
			if m.Content != "" {
				am.Content = append(am.Content, anthropicBlock{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				am.Content = append(am.Content, anthropicBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: json.RawMessage(tc.Arguments)})
			}
		}
		if m.CacheBreakpoint && len(am.Content) > start {
			am.Content[len(am.Content)-1].CacheControl = ephemeral(true)
		}
	}
	// The API refuses a final assistant message (a prefill) whose text ends
	// in white space.
	if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == "assistant" {
		blocks := body.Messages[n-1].Content
		if last := &blocks[len(blocks)-1]; last.Type == "text" {
			last.Text = strings.TrimRightFunc(last.Text, unicode.IsSpace)
		}
	}
	return marshal(body)
}

type anthropicBody struct {
	System   []anthropicBlock   `json:"system,omitempty"`
	Messages []anthropicMessage `json:"messages"`
	Tools    []anthropicTool    `json:"tools,omitempty"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

// anthropicBlock is a content block of any of the types written: text,
// tool_use or tool_result; each leaves the others' fields empty.
type anthropicBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      *string         `json:"content,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

func ephemeral(on bool) *cacheControl {
	if !on {
		return nil
	}
	return &cacheControl{Type: "ephemeral"}
}

// marshal writes v as compact JSON without HTML escaping: a context is
// full of '<' and '>', and a body is read by an API, not a browser.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
