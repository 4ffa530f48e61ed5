package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
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

// Limits both APIs set on tool calls.
const (
	MaxToolCallIDLen = 40
	MaxToolNameLen   = 64
	// MaxCacheBreakpoints is the most cache_control blocks Anthropic takes
	// in one request.
	MaxCacheBreakpoints = 4
)

// Check reports the first rule of format f that c breaks (see the package
// documentation), or nil. With f zero it checks the rules both formats
// share.
func (c *Conversation) Check(f Format) error {
	fail := func(path, format string, args ...any) error {
		return &Error{Format: f, Path: path, Message: fmt.Sprintf(format, args...)}
	}
	breakpoints := 0
	made := make(map[string]bool) // every call id, once in a conversation
	for i, p := range c.System {
		if p.Text == "" {
			return fail(fmt.Sprintf("system[%d]", i), "empty text")
		}
		if f == FormatAnthropic && blank(p.Text) {
			return fail(fmt.Sprintf("system[%d]", i), "text is only white space")
		}
		if p.CacheBreakpoint {
			breakpoints++
		}
	}
	for i := 0; i < len(c.Messages); i++ {
		m := &c.Messages[i]
		at := fmt.Sprintf("messages[%d]", i)
		if m.CacheBreakpoint {
			breakpoints++
		}
		if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
			return fail(at+".tool_calls", "only an assistant message makes tool calls (role is %q)", m.Role)
		}
		if m.ToolCallID != "" && m.Role != RoleTool {
			return fail(at+".tool_call_id", "only a tool message answers a call (role is %q)", m.Role)
		}
		switch m.Role {
		case RoleUser:
			if m.Content == "" {
				return fail(at+".content", "a user message needs content")
			}
		case RoleAssistant:
			if m.Content == "" && len(m.ToolCalls) == 0 {
				return fail(at+".content", "an assistant message needs content or tool calls")
			}
		case RoleTool:
			// A result must directly follow the calls it answers: the loop
			// skips over every result that does.
			return fail(at, "tool result for call %q does not follow the assistant message that makes it", m.ToolCallID)
		default:
			return fail(at+".role", "must be user, assistant or tool (got %q)", m.Role)
		}
		if f == FormatAnthropic && m.Content != "" && blank(m.Content) {
			return fail(at+".content", "text is only white space")
		}
		if len(m.ToolCalls) == 0 {
			continue
		}
		calls := make(map[string]bool, len(m.ToolCalls))
		for j, tc := range m.ToolCalls {
			cat := fmt.Sprintf("%s.tool_calls[%d]", at, j)
			if !ValidID(tc.ID) {
				return fail(cat+".id", "must be 1 to %d characters of A-Z, a-z, 0-9, '_' and '-' (got %q)", MaxToolCallIDLen, tc.ID)
			}
			if !ValidToolName(tc.Name) {
				return fail(cat+".name", "must be 1 to %d characters of A-Z, a-z, 0-9, '_' and '-' (got %q)", MaxToolNameLen, tc.Name)
			}
			if !ValidArguments(tc.Arguments) {
				return fail(cat+".arguments", "must be a JSON object")
			}
			if made[tc.ID] {
				return fail(cat+".id", "call %q is made twice", tc.ID)
			}
			calls[tc.ID], made[tc.ID] = true, true
		}
		// The results follow at once, one per call.
		ai := i
		for range m.ToolCalls {
			i++
			if i == len(c.Messages) || c.Messages[i].Role != RoleTool {
				missing := []string{}
				for _, tc := range m.ToolCalls {
					if calls[tc.ID] {
						missing = append(missing, tc.ID)
					}
				}
				return fail(at, "calls %q are not answered by the tool messages that follow", missing)
			}
			r := &c.Messages[i]
			if r.CacheBreakpoint {
				breakpoints++
			}
			rat := fmt.Sprintf("messages[%d]", i)
			if !calls[r.ToolCallID] {
				return fail(rat+".tool_call_id", "answers %q, not a call of messages[%d] still unanswered", r.ToolCallID, ai)
			}
			calls[r.ToolCallID] = false
			if r.Content == "" {
				return fail(rat+".content", "a tool message needs content")
			}
			if len(r.ToolCalls) > 0 {
				return fail(rat+".tool_calls", "only an assistant message makes tool calls (role is %q)", r.Role)
			}
		}
	}
	if f == FormatAnthropic {
		if breakpoints > MaxCacheBreakpoints {
			return fail("", "%d cache breakpoints, more than the %d allowed", breakpoints, MaxCacheBreakpoints)
		}
		if len(c.Messages) > 0 && c.Messages[0].Role != RoleUser {
			return fail("messages[0].role", "the first message must be a user turn (got %q)", c.Messages[0].Role)
		}
	}
	return nil
}

// blank reports whether s has no character but white space.
func blank(s string) bool { return strings.TrimFunc(s, unicode.IsSpace) == "" }

// ValidID reports whether s is a tool call id both APIs accept: 1 to
// MaxToolCallIDLen characters of [A-Za-z0-9_-].
func ValidID(s string) bool { return toolToken(s, MaxToolCallIDLen) }

// ValidToolName reports whether s is a tool name both APIs accept: 1 to
// MaxToolNameLen characters of [A-Za-z0-9_-].
func ValidToolName(s string) bool { return toolToken(s, MaxToolNameLen) }

// ValidArguments reports whether s is a call's arguments as both APIs take
// them: one JSON object (Anthropic's tool_use input is an object).
func ValidArguments(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return strings.HasPrefix(t, "{") && json.Valid([]byte(s))
}

// toolToken reports whether s is 1 to max characters of [A-Za-z0-9_-].
func toolToken(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
