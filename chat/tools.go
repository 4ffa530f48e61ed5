package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Tool is one tool definition a request offers the model.
type Tool struct {
	// Name is what the model calls it: 1 to 64 characters of
	// [A-Za-z0-9_-] (ValidToolName), unique in a conversation.
	Name string
	// Description tells the model what the tool does; may be empty.
	Description string
	// InputSchema is a JSON Schema object with "type":"object": the
	// arguments the tool takes.
	InputSchema json.RawMessage
	// CacheBreakpoint marks the end of a prefix worth caching: Anthropic's
	// body sets cache_control on the tool (tools come first in its cache
	// order, so the last tool's mark caches all of them).
	CacheBreakpoint bool
}

// checkTools holds c's tools to what both APIs take: valid, unique names,
// object schemas; and for Anthropic, the cache breakpoints of tools,
// system and messages at most MaxCacheBreakpoints together. It counts
// only what Check does not.
func (c *Conversation) checkTools(f Format) error {
	seen := make(map[string]bool, len(c.Tools))
	marks := 0
	for i := range c.Tools {
		t := &c.Tools[i]
		switch {
		case !ValidToolName(t.Name):
			return &Error{Format: f, Path: toolPath(i) + ".name", Message: fmt.Sprintf("%q is not 1 to %d characters of A-Z a-z 0-9 _ -", t.Name, MaxToolNameLen)}
		case seen[t.Name]:
			return &Error{Format: f, Path: toolPath(i) + ".name", Message: fmt.Sprintf("%q is offered twice", t.Name)}
		case !objectSchema(t.InputSchema):
			return &Error{Format: f, Path: toolPath(i) + ".input_schema", Message: `must be a JSON object with "type":"object"`}
		}
		seen[t.Name] = true
		if t.CacheBreakpoint {
			marks++
		}
	}
	if f != FormatAnthropic || marks == 0 {
		return nil
	}
	for _, p := range c.System {
		if p.CacheBreakpoint {
			marks++
		}
	}
	for _, m := range c.Messages {
		if m.CacheBreakpoint {
			marks++
		}
	}
	if marks > MaxCacheBreakpoints {
		return &Error{Format: f, Path: "tools", Message: fmt.Sprintf("%d cache breakpoints with the tools', more than the %d allowed", marks, MaxCacheBreakpoints)}
	}
	return nil
}

// toolPath is the Path of an error about tool i, made only for an error.
func toolPath(i int) string { return "tools[" + strconv.Itoa(i) + "]" }

// objectSchema reports whether s is a JSON object whose "type" is
// "object".
func objectSchema(s json.RawMessage) bool {
	var obj struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(s, &obj); err != nil || bytes.TrimSpace(s)[0] != '{' {
		return false
	}
	return obj.Type != nil && *obj.Type == "object"
}

// openaiTool is a Chat Completions tool: {"type":"function","function":{...}}.
type openaiTool struct {
	Type     string          `json:"type"`
	Function openaiToolFuncs `json:"function"`
}

type openaiToolFuncs struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

func openaiTools(tools []Tool) []openaiTool {
	if len(tools) == 0 {
		return nil
	}
	out := make([]openaiTool, len(tools))
	for i, t := range tools {
		out[i] = openaiTool{Type: "function", Function: openaiToolFuncs{Name: t.Name, Description: t.Description, Parameters: compactSchema(t.InputSchema)}}
	}
	return out
}

// anthropicTool is a Messages API tool: {"name","description","input_schema"}.
type anthropicTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

func anthropicTools(tools []Tool, cc *cacheControl) []anthropicTool {
	if len(tools) == 0 {
		return nil
	}
	out := make([]anthropicTool, len(tools))
	for i, t := range tools {
		out[i] = anthropicTool{Name: t.Name, Description: t.Description, InputSchema: compactSchema(t.InputSchema)}
		if t.CacheBreakpoint {
			out[i].CacheControl = cc
		}
	}
	return out
}

// ResponsesTool is a tool of OpenAI's Responses API:
// {"type":"function","name","description","parameters"}, flat where Chat
// Completions nests a "function".
type ResponsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ResponsesTools returns tools in the Responses API's shape, for its
// body's "tools"; nil for none. It checks them as [OpenAI] does.
func ResponsesTools(tools []Tool) ([]ResponsesTool, error) {
	c := Conversation{Tools: tools}
	if err := c.checkTools(FormatOpenAI); err != nil {
		return nil, err
	}
	if len(tools) == 0 {
		return nil, nil
	}
	out := make([]ResponsesTool, len(tools))
	for i, t := range tools {
		out[i] = ResponsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: compactSchema(t.InputSchema)}
	}
	return out, nil
}

// AnthropicToolJSON returns t as one entry of Anthropic's "tools",
// compact (its cache mark left out): what the tool costs to send.
func AnthropicToolJSON(t Tool) ([]byte, error) {
	return marshal(anthropicTool{Name: t.Name, Description: t.Description, InputSchema: compactSchema(t.InputSchema)})
}

// compactSchema writes a schema without white space, so that a body is
// the same bytes however the schema was declared.
func compactSchema(s json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, s) != nil {
		return s
	}
	return b.Bytes()
}
