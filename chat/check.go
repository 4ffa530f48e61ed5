package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every error about a conversation the APIs would
// refuse.
var ErrInvalid = errors.New("chat: invalid conversation")

// Error is one rule a conversation breaks. It wraps [ErrInvalid].
type Error struct {
	Format Format // the format whose rule it is; 0 for both
	// Path locates the problem: "system[1]", "messages[3].tool_calls[0].id".
	Path string
	// Message says what is wrong.
	Message string
}

// Error returns "chat: [format: ]path: message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("chat: ")
	if e.Format != 0 {
		b.WriteString(e.Format.String())
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Unwrap returns [ErrInvalid].
func (e *Error) Unwrap() error { return ErrInvalid }

// Limits on tool calls and cache breakpoints.
const (
	// MaxToolCallIDLen is the longest call id a conversation may hold
	// (ValidID); the encoders write at most MaxWireIDLen (WireID).
	MaxToolCallIDLen = 128
	// MaxToolNameLen is the longest tool name, as both APIs take it.
	MaxToolNameLen = 64
	// MaxCacheBreakpoints is the most cache_control blocks Anthropic takes
	// in one request.
	MaxCacheBreakpoints = 4
)

// The cache lifetimes of Conversation.CacheTTL.
const (
	TTL5m = "5m"
	TTL1h = "1h"
)

// Check reports the first rule of format f that c breaks (see the package
// documentation), or nil. With f zero it checks the rules both formats
// share.
func (c *Conversation) Check(f Format) error {
	calls := 0
	for i := range c.Messages {
		calls += len(c.Messages[i].ToolCalls)
	}
	k := &checker{conv: c, f: f, made: make(map[string]bool, calls), wire: make(map[string]string, calls), open: make(map[string]bool)}
	if c.CacheTTL != "" && c.CacheTTL != TTL5m && c.CacheTTL != TTL1h {
		return k.fail("cache_ttl", "must be %q or %q (got %q)", TTL5m, TTL1h, c.CacheTTL)
	}
	if err := k.system(); err != nil {
		return err
	}
	for i := 0; i < len(c.Messages); {
		next, err := k.message(i)
		if err != nil {
			return err
		}
		i = next
	}
	return k.anthropicLimits()
}

// checker walks a conversation for Check: the system parts, then each
// message with the tool results that answer it.
type checker struct {
	conv        *Conversation
	f           Format
	breakpoints int
	made        map[string]bool   // every call id, once in a conversation
	wire        map[string]string // every call's WireID, and the id it maps
	open        map[string]bool   // one message's calls, true till answered
}

// messagePath is the Path of an error about message i. The paths are made
// only for an error: a conversation that breaks no rule costs no strings.
func messagePath(i int) string { return "messages[" + strconv.Itoa(i) + "]" }

// callPath is the Path of an error about call j of message i.
func callPath(i, j int) string { return messagePath(i) + ".tool_calls[" + strconv.Itoa(j) + "]" }

func (k *checker) fail(path, format string, args ...any) error {
	return &Error{Format: k.f, Path: path, Message: fmt.Sprintf(format, args...)}
}

// system checks the system parts: text, and for Anthropic a system
// prompt that is not only white space (a part that is, Anthropic's
// encoder merges into the part before it, or the first into the next).
func (k *checker) system() error {
	for i, p := range k.conv.System {
		if p.Text == "" {
			return k.fail(fmt.Sprintf("system[%d]", i), "empty text")
		}
		if p.CacheBreakpoint {
			k.breakpoints++
		}
	}
	if k.f == FormatAnthropic && len(k.conv.System) > 0 && !asciiText(k.conv.System) && blank(k.conv.SystemText()) {
		return k.fail("system", "text is only white space")
	}
	return nil
}

// message checks message i and, when it makes tool calls, the results
// after it, and returns the index of the message after those.
func (k *checker) message(i int) (int, error) {
	m := &k.conv.Messages[i]
	if m.CacheBreakpoint {
		k.breakpoints++
	}
	if err := k.roleAndContent(m, i); err != nil {
		return 0, err
	}
	if len(m.ToolCalls) == 0 {
		return i + 1, nil
	}
	if err := k.calls(m, i); err != nil {
		return 0, err
	}
	return k.results(i)
}

// roleAndContent checks what the role of message i, m, allows and needs.
func (k *checker) roleAndContent(m *Message, i int) error {
	if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
		return k.fail(messagePath(i)+".tool_calls", "only an assistant message makes tool calls (role is %q)", m.Role)
	}
	if m.ToolCallID != "" && m.Role != RoleTool {
		return k.fail(messagePath(i)+".tool_call_id", "only a tool message answers a call (role is %q)", m.Role)
	}
	if len(m.Reasoning) > 0 && m.Role != RoleAssistant {
		return k.fail(messagePath(i)+".reasoning", "only an assistant message carries reasoning (role is %q)", m.Role)
	}
	openai := 0
	for j, r := range m.Reasoning {
		if key, err := ValidReasoning(r); err != nil {
			path := fmt.Sprintf("%s.reasoning[%d]", messagePath(i), j)
			if key != "" {
				path += "." + key
			}
			return k.fail(path, "%v", err)
		}
		if r.Type == ReasoningOpenAI {
			if openai++; openai > 1 {
				// The Responses API wants each reasoning item followed by
				// the item it produced: one a turn, before its message or
				// calls.
				return k.fail(fmt.Sprintf("%s.reasoning[%d]", messagePath(i), j), "a second reasoning item of type %q (a turn has one; declare a turn for each)", ReasoningOpenAI)
			}
		}
	}
	switch m.Role {
	case RoleUser:
		if m.Content == "" {
			return k.fail(messagePath(i)+".content", "a user message needs content")
		}
	case RoleAssistant:
		if m.Content == "" && len(m.ToolCalls) == 0 {
			return k.fail(messagePath(i)+".content", "an assistant message needs content or tool calls")
		}
	case RoleTool:
		// A result must directly follow the calls it answers: results
		// skips over every one that does.
		return k.fail(messagePath(i), "tool result for call %q does not follow the assistant message that makes it", m.ToolCallID)
	default:
		return k.fail(messagePath(i)+".role", "must be user, assistant or tool (got %q)", m.Role)
	}
	if k.f == FormatAnthropic && m.Content != "" && blank(m.Content) {
		return k.fail(messagePath(i)+".content", "text is only white space")
	}
	return nil
}

// calls checks the tool calls of message i, m, and holds them in k.open,
// each unanswered (true).
func (k *checker) calls(m *Message, i int) error {
	clear(k.open)
	for j, tc := range m.ToolCalls {
		if !ValidID(tc.ID) {
			return k.fail(callPath(i, j)+".id", "must be 1 to %d characters of printable ASCII but the space (got %q)", MaxToolCallIDLen, tc.ID)
		}
		if !ValidToolName(tc.Name) {
			return k.fail(callPath(i, j)+".name", "must be 1 to %d characters of A-Z, a-z, 0-9, '_' and '-' (got %q)", MaxToolNameLen, tc.Name)
		}
		if !ValidArguments(tc.Arguments) {
			return k.fail(callPath(i, j)+".arguments", "must be a JSON object")
		}
		if k.made[tc.ID] {
			return k.fail(callPath(i, j)+".id", "call %q is made twice", tc.ID)
		}
		w := WireID(tc.ID)
		if other, ok := k.wire[w]; ok {
			return k.fail(callPath(i, j)+".id", "call %q is written as %q, as call %q is", tc.ID, w, other)
		}
		k.open[tc.ID], k.made[tc.ID], k.wire[w] = true, true, tc.ID
	}
	return nil
}

// results checks the tool messages after message ai, which make the calls:
// they follow at once, one per call, and returns the index after them.
func (k *checker) results(ai int) (int, error) {
	msgs, calls := k.conv.Messages, k.open
	m := &msgs[ai]
	i := ai
	for range m.ToolCalls {
		i++
		if i == len(msgs) || msgs[i].Role != RoleTool {
			missing := []string{}
			for _, tc := range m.ToolCalls {
				if calls[tc.ID] {
					missing = append(missing, tc.ID)
				}
			}
			return 0, k.fail(messagePath(ai), "calls %q are not answered by the tool messages that follow", missing)
		}
		r := &msgs[i]
		if r.CacheBreakpoint {
			k.breakpoints++
		}
		if !calls[r.ToolCallID] {
			return 0, k.fail(messagePath(i)+".tool_call_id", "answers %q, not a call of messages[%d] still unanswered", r.ToolCallID, ai)
		}
		calls[r.ToolCallID] = false
		if r.Content == "" {
			return 0, k.fail(messagePath(i)+".content", "a tool message needs content")
		}
		if len(r.ToolCalls) > 0 {
			return 0, k.fail(messagePath(i)+".tool_calls", "only an assistant message makes tool calls (role is %q)", r.Role)
		}
	}
	return i + 1, nil
}

// anthropicLimits checks what only Anthropic asks of the whole: at most
// MaxCacheBreakpoints, and a user turn first.
func (k *checker) anthropicLimits() error {
	if k.f != FormatAnthropic {
		return nil
	}
	if k.breakpoints > MaxCacheBreakpoints {
		return k.fail("", "%d cache breakpoints, more than the %d allowed", k.breakpoints, MaxCacheBreakpoints)
	}
	if msgs := k.conv.Messages; len(msgs) > 0 && msgs[0].Role != RoleUser {
		return k.fail("messages[0].role", "the first message must be a user turn (got %q)", msgs[0].Role)
	}
	return nil
}

// asciiText reports whether a part has an ASCII character that is not
// white space, so the joined text is not blank: an ASCII byte is a
// character of its own wherever the parts join (where one ends inside a
// UTF-8 sequence the join may make a character that no part has, so
// blank asks the joined text).
func asciiText(parts []SystemPart) bool {
	for _, p := range parts {
		for i := 0; i < len(p.Text); i++ {
			switch c := p.Text[i]; c {
			case '\t', '\n', '\v', '\f', '\r', ' ':
			default:
				if c < utf8.RuneSelf {
					return true
				}
			}
		}
	}
	return false
}

// blank reports whether s has no character but white space.
func blank(s string) bool { return strings.TrimFunc(s, unicode.IsSpace) == "" }

// ValidToolName reports whether s is a tool name both APIs accept: 1 to
// MaxToolNameLen characters of [A-Za-z0-9_-].
func ValidToolName(s string) bool { return toolToken(s, MaxToolNameLen) }

// ValidArguments reports whether s is a call's arguments as the APIs take
// them: one JSON object (Anthropic's tool_use input is an object), in
// valid UTF-8.
func ValidArguments(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return strings.HasPrefix(t, "{") && utf8.ValidString(s) && json.Valid([]byte(s))
}

// toolToken reports whether s is 1 to max characters of [A-Za-z0-9_-].
func toolToken(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tokenByte(s[i]) {
			return false
		}
	}
	return true
}
