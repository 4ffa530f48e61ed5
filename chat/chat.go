package chat

import "fmt"

// Role says who speaks a message.
type Role string

// The roles of messages. The system prompt is not a message here: it is
// Conversation.System.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // a tool's result, answering one call
)

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return r == RoleUser || r == RoleAssistant || r == RoleTool }

// ToolCall is one call of a tool that an assistant message makes.
// Its JSON form is the one memory declarations use (package declare).
type ToolCall struct {
	// ID names the call; the tool message that answers it has it as
	// ToolCallID. 1 to 128 characters of printable ASCII but the space
	// (ValidID); the encoders write it as WireID maps it.
	ID string `json:"id"`
	// Name is the tool's name: 1 to 64 characters of [A-Za-z0-9_-]
	// (ValidToolName).
	Name string `json:"name"`
	// Arguments is a JSON object, as UTF-8 text ("{}" for none;
	// ValidArguments).
	Arguments string `json:"arguments"`
}

// Message is one turn of a conversation.
type Message struct {
	// Role says who speaks the message: user, assistant or tool.
	Role Role
	// Content is the message's text. It may be empty for an assistant
	// message that makes tool calls.
	Content string
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall
	// ToolCallID is, for a tool message, the id of the call it answers.
	ToolCallID string
	// Reasoning are, on an assistant message, the reasoning items its
	// provider returned with it, sent back unchanged: Anthropic writes
	// the thinking and redacted_thinking blocks first in the message,
	// Responses the reasoning items before the message's items; the Chat
	// Completions format writes none (Reasoning.For).
	Reasoning []Reasoning
	// CacheBreakpoint marks the end of a prefix of the request worth
	// caching: Anthropic's body sets cache_control on the message's last
	// content block. OpenAI caches prefixes without being told.
	CacheBreakpoint bool
	// BlockIDs are the request_ids of the memory blocks the message was
	// made from (one, for a message of a contextasm Result). The encoders
	// do not write them.
	BlockIDs []string
}

// SystemPart is one stretch of the system prompt. Parts are joined as they
// are, without separators.
type SystemPart struct {
	// Text is the part's text.
	Text string
	// CacheBreakpoint marks the part as the end of a prefix worth caching:
	// Anthropic's body sets cache_control on it.
	CacheBreakpoint bool
}

// Conversation is a system prompt and messages, in the order a model reads
// them.
type Conversation struct {
	// System is the system prompt, in parts; empty when there is none.
	System []SystemPart
	// Messages are the turns, in the order the model reads them.
	Messages []Message
	// CacheTTL is how long Anthropic keeps the prompt cache written at
	// the breakpoints: "" or "5m" (the API's default, written as no ttl),
	// or "1h", written as "ttl":"1h" on every cache_control.
	CacheTTL string
	// Tools are the tool definitions offered the model, in the order
	// written (chat/tools.go); none: the body has no "tools".
	Tools []Tool
}

// SystemText returns the system prompt: the parts joined.
func (c *Conversation) SystemText() string {
	if len(c.System) == 1 {
		return c.System[0].Text
	}
	n := 0
	for _, p := range c.System {
		n += len(p.Text)
	}
	b := make([]byte, 0, n)
	for _, p := range c.System {
		b = append(b, p.Text...)
	}
	return string(b)
}

// Format is a chat API's request body.
type Format uint8

// The formats.
const (
	FormatOpenAI    Format = iota + 1 // Chat Completions: {"messages":[...]}
	FormatAnthropic                   // Messages: {"system":[...],"messages":[...]}
	FormatResponses                   // Responses: {"instructions":"...","input":[...]}
)

// String returns "openai", "anthropic" or "responses".
func (f Format) String() string {
	switch f {
	case FormatOpenAI:
		return "openai"
	case FormatAnthropic:
		return "anthropic"
	case FormatResponses:
		return "responses"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ParseFormat returns the format named "openai", "anthropic" or
// "responses".
func ParseFormat(name string) (Format, error) {
	switch name {
	case "openai":
		return FormatOpenAI, nil
	case "anthropic":
		return FormatAnthropic, nil
	case "responses":
		return FormatResponses, nil
	}
	return 0, fmt.Errorf("chat: unknown format %q (want openai, anthropic or responses)", name)
}

// Encode returns the request body of format f for c; see [OpenAI],
// [Anthropic] and [Responses].
func Encode(f Format, c Conversation) ([]byte, error) {
	switch f {
	case FormatOpenAI:
		return OpenAI(c)
	case FormatAnthropic:
		return Anthropic(c)
	case FormatResponses:
		return Responses(c)
	}
	return nil, fmt.Errorf("%w: unknown format %v", ErrInvalid, f)
}
