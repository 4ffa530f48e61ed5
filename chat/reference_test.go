package chat

// The encoders as they were before the hand-written appender (encode.go):
// structs filled and written by encoding/json, through marshal. They are
// the reference the appender must match byte for byte (export_test.go,
// encode_test.go); change them only to follow a deliberate change of the
// bodies.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// referenceEncode is Encode over the reference encoders.
func referenceEncode(f Format, c Conversation) ([]byte, error) {
	switch f {
	case FormatOpenAI:
		return referenceOpenAI(c)
	case FormatAnthropic:
		return referenceAnthropic(c)
	case FormatResponses:
		return referenceResponses(c)
	}
	return nil, fmt.Errorf("%w: unknown format %v", ErrInvalid, f)
}

// referenceOpenAI returns the body of a Chat Completions request for c:
// {"messages":[...]}, the system prompt first as one "system" message. It
// returns an *Error wrapping ErrInvalid when c breaks a rule of the API
// (see [Conversation.Check]).
func referenceOpenAI(c Conversation) ([]byte, error) {
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
		om := openaiMessage{Role: string(m.Role), Content: m.Content, ToolCallID: wireOf(m.ToolCallID)}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openaiCall{ID: WireID(tc.ID), Type: "function",
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

// referenceAnthropic returns the body of a Messages API request for c:
// {"system":[...],"messages":[...]}, with the system prompt as text blocks
// (cache_control on those that end at a cache breakpoint) and adjacent
// messages of one role merged. It returns an *Error wrapping ErrInvalid
// when c breaks a rule of the API (see [Conversation.Check]).
func referenceAnthropic(c Conversation) ([]byte, error) {
	if err := c.Check(FormatAnthropic); err != nil {
		return nil, err
	}
	if err := c.checkTools(FormatAnthropic); err != nil {
		return nil, err
	}
	cc := ephemeral(c.CacheTTL)
	body := anthropicBody{Tools: anthropicTools(c.Tools, cc)}
	body.System = anthropicSystem(c.System, cc)
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
			am.Content = append(am.Content, anthropicBlock{Type: "tool_result", ToolUseID: WireID(m.ToolCallID), Content: &content})
		default:
			if m.Content != "" {
				am.Content = append(am.Content, anthropicBlock{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				am.Content = append(am.Content, anthropicBlock{Type: "tool_use", ID: WireID(tc.ID), Name: tc.Name, Input: json.RawMessage(tc.Arguments)})
			}
		}
		if m.CacheBreakpoint && len(am.Content) > start {
			am.Content[len(am.Content)-1].CacheControl = cc
		}
		// Thinking blocks open their message, in their order, before any
		// text or tool_use of the turns merged into it.
		for _, r := range m.Reasoning {
			if r.For(FormatAnthropic) {
				am.Content = slices.Insert(am.Content, am.thinking, anthropicBlock{raw: r.JSON})
				am.thinking++
			}
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
	// thinking counts the thinking blocks that open Content.
	thinking int
}

// anthropicSystem returns the system prompt's text blocks: one a part,
// but a part that is only white space, which the API refuses, joins the
// part before it, the cache breakpoint of either at the end of the joined
// block; blank parts before the first that is not join that one, and
// their breakpoints, which cover nothing but white space, go.
func anthropicSystem(parts []SystemPart, cc *cacheControl) []anthropicBlock {
	var blocks []anthropicBlock
	lead := "" // blank text before the first part that is not
	for _, p := range parts {
		n := len(blocks)
		switch {
		case blank(p.Text) && n == 0:
			lead += p.Text
			continue
		case blank(p.Text):
			blocks[n-1].Text += p.Text
		default:
			blocks = append(blocks, anthropicBlock{Type: "text", Text: lead + p.Text})
			lead, n = "", n+1
		}
		if p.CacheBreakpoint {
			blocks[n-1].CacheControl = cc
		}
	}
	return blocks
}

// anthropicBlock is a content block of any of the types written: text,
// tool_use or tool_result; each leaves the others' fields empty. A
// thinking block is written as raw, as its provider returned it.
type anthropicBlock struct {
	raw          json.RawMessage
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      *string         `json:"content,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// MarshalJSON writes a thinking block as it came, any other by its fields.
func (b anthropicBlock) MarshalJSON() ([]byte, error) {
	if b.raw != nil {
		return b.raw, nil
	}
	type fields anthropicBlock
	return marshal(fields(b))
}

// referenceResponses returns the body of an OpenAI Responses API request for c:
// {"instructions":"...","input":[...]}, the system prompt (its parts
// joined) as instructions, then each message as input items: a user or
// assistant message as a "message" item with its text; an assistant's
// reasoning items (Reasoning.For) and then its calls as "function_call"
// items (call_id, name, arguments); a result as a "function_call_output"
// item (call_id, output), which follows the call it answers. It returns
// an *Error wrapping ErrInvalid when c breaks a rule of the API (see
// [Conversation.Check]).
func referenceResponses(c Conversation) ([]byte, error) {
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
