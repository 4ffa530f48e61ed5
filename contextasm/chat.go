package contextasm

import (
	"slices"

	"fmt"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/chatcheck"
)

// checkToolCalls holds the tool calls and results of decls, about to be
// declared, to the store's: a call id is declared once in a session, a call
// answered once, and a result answers a call in the store or among decls.
// A result declared before its call is refused: declare the assistant turn
// first, or both in one call. (A call whose block is later forgotten or
// re-declared without it leaves its results orphaned; assembly drops them,
// with an event.)
//
// It reads calls, the store's index of calls and results (callDecl of
// each block, kept in step by publish), through an index of decls' own:
// it costs what decls hold, not what the store or its sessions do.
func checkToolCalls(calls *declare.CallIndex, decls []declare.Declaration) error {
	if !slices.ContainsFunc(decls, func(d declare.Declaration) bool { return len(d.ToolCalls) > 0 || d.ToolCallID != "" }) {
		return nil
	}
	replaced := make(map[string]bool, len(decls))
	for i := range decls {
		replaced[decls[i].RequestID] = true
	}
	x := declare.Over(calls, func(id string) bool { return replaced[id] })
	var probs []declare.Problem
	for i := range decls {
		probs = append(probs, x.Add(&decls[i])...)
	}
	for i := range decls {
		if p, ok := x.Answers(&decls[i]); !ok {
			probs = append(probs, p)
		}
	}
	if len(probs) > 0 {
		return &declare.ValidationError{Problems: probs}
	}
	return nil
}

// callDecl is what the index of the store's calls reads of b, or nil for
// a block with no tool call or result.
func callDecl(b *assemble.Block) *declare.Declaration {
	if b == nil || len(b.ToolCalls()) == 0 && b.ToolCallID() == "" {
		return nil
	}
	return &declare.Declaration{RequestID: b.ID, MemoryType: b.Type, Scope: b.Scope, SessionID: b.SessionID,
		Role: b.Role, ToolCalls: b.ToolCalls(), ToolCallID: b.ToolCallID()}
}

// indexCalls keeps calls in step with a publish's changes.
func indexCalls(calls *declare.CallIndex, changes []change) {
	for _, c := range changes {
		if d := callDecl(c.old); d != nil {
			calls.Remove(d)
		}
	}
	for _, c := range changes {
		if d := callDecl(c.new); d != nil {
			calls.Add(d) // the store's are consistent: no problem to report
		}
	}
}

// ChatOverhead is what a request for a chat format (Request.Format) counts
// beyond its messages' text: PerMessage for every message, the system
// prompt's included, and Reply once, for the start of the model's reply.
// Each message also counts the tokens of its role's name and, for tool
// calls, of each call's id, name and arguments (and of a result's
// tool_call_id): the values OpenAI's published counting for chat messages
// adds up, where PerMessage and Reply are 3 with o200k_base and
// cl100k_base. Anthropic publishes no rule; the same count serves as its
// estimate (docs/chat.md).
type ChatOverhead struct {
	// PerMessage is added for every message. Zero means
	// DefaultPerMessageTokens; a negative value means none.
	PerMessage int
	// Reply is added once. Zero means DefaultReplyTokens; a negative value
	// means none.
	Reply int
}

// The default overheads of ChatOverhead.
const (
	DefaultPerMessageTokens = 3
	DefaultReplyTokens      = 3
)

// cost returns the assembler's counting for format f.
func (o ChatOverhead) cost(f chat.Format) assemble.ChatCost {
	if f == 0 {
		return assemble.ChatCost{}
	}
	pick := func(v, def int) int {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return assemble.ChatCost{Format: f, PerMessage: pick(o.PerMessage, DefaultPerMessageTokens), Reply: pick(o.Reply, DefaultReplyTokens)}
}

// conversation returns an assembly's output as a chat conversation.
func conversation(out *assemble.Output) chat.Conversation {
	var tools []chat.Tool
	if out.Tools != nil {
		tools = out.Tools.Defs
	}
	return conversationOf(out.Text, out.Breakpoints, out.Messages, out.CacheTTL, tools)
}

// conversationOf returns a text, its cache breakpoints and its messages as
// a chat conversation: the text as the system prompt, split at the
// breakpoints into parts that each end at one (the last ones, so that
// with a breakpoint on a message there are at most
// chat.MaxCacheBreakpoints in all), then the messages.
func conversationOf(text string, bps []Breakpoint, msgs []chat.Message, ttl string, tools []chat.Tool) chat.Conversation {
	tools = toolDefs(tools)
	room := chat.MaxCacheBreakpoints - min(len(tools), 1)
	for _, m := range msgs {
		if m.CacheBreakpoint {
			room--
		}
	}
	if len(bps) > room {
		bps = bps[len(bps)-max(room, 0):]
	}
	parts := make([]chat.SystemPart, 0, len(bps)+1)
	start := 0
	for _, bp := range bps {
		if bp.Offset > start && bp.Offset <= len(text) {
			parts = append(parts, chat.SystemPart{Text: text[start:bp.Offset], CacheBreakpoint: true})
			start = bp.Offset
		}
	}
	if start < len(text) {
		parts = append(parts, chat.SystemPart{Text: text[start:]})
	}
	return chat.Conversation{System: parts, Messages: msgs, CacheTTL: ttl, Tools: tools}
}

// Messages returns the result as a chat conversation: the system prompt
// (the header line and every section's text but the history blocks'),
// then, when the result was assembled for a chat format, each kept history
// block as a message, in the order of their last_modified (then of their
// declaration), each tool result right after the assistant turn that made
// its call. A result of the text format has all of its text as the system
// prompt and no messages. The result's slices are shared: treat them as
// read-only.
//
// The system prompt is split at the result's CacheBreakpoints, each part
// that ends at one marked as a cache breakpoint; in a conversation (a
// request with a session) of at least Stickiness.MinCachePrefix tokens,
// the last message is one too. chat.Anthropic writes them as
// cache_control; the whole is at most four.
//
// chat.OpenAI and chat.Anthropic encode it as a request body.
func (r *Result) Messages() chat.Conversation {
	return conversationOf(r.Text, r.CacheBreakpoints, r.messages, r.cacheTTL, r.toolDefs)
}

// checkBody holds body, of format f, to its API's documented message rules
// (Config.CheckBodies); the error wraps chat.ErrInvalid.
func checkBody(f chat.Format, body []byte) error {
	check := chatcheck.OpenAI
	switch f {
	case chat.FormatOpenAI:
	case chat.FormatAnthropic:
		check = chatcheck.Anthropic
	case chat.FormatResponses:
		check = chatcheck.Responses
	default:
		return fmt.Errorf("%w: no checker for the %v format", chat.ErrInvalid, f)
	}
	if err := check(body, chatcheck.Options{AllowNoMessages: true}); err != nil {
		return fmt.Errorf("%w: %w", chat.ErrInvalid, err)
	}
	return nil
}
