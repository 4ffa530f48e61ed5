package anthropicadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/feedback"
)

// Engine is what Feedback needs of an engine: a *contextasm.Engine, or
// one instrumented by adapters/otel.
type Engine interface {
	FeedbackResponse(ctx context.Context, res *contextasm.Result, r contextasm.Response) (*feedback.Result, error)
}

// Messages returns res's conversation (Result.Messages) as the Messages
// API's system blocks and messages. It returns an error wrapping
// chat.ErrInvalid for a conversation the API would refuse
// (chat.Conversation.Check).
func Messages(res *contextasm.Result) ([]anthropic.TextBlockParam, []anthropic.MessageParam, error) {
	body, err := chat.Anthropic(res.Messages())
	if err != nil {
		return nil, nil, fmt.Errorf("anthropicadapter: %w", err)
	}
	var b struct {
		System   []anthropic.TextBlockParam `json:"system"`
		Messages []anthropic.MessageParam   `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, nil, fmt.Errorf("anthropicadapter: the SDK does not read the request body: %w", err)
	}
	return b.System, b.Messages, nil
}

// Tools returns the tools res carries (Result.Tools, docs/tools.md) as
// the Messages API's tools, the last with its cache_control; nil for none.
func Tools(res *contextasm.Result) ([]anthropic.ToolUnionParam, error) {
	body, err := chat.Anthropic(res.Messages())
	if err != nil {
		return nil, fmt.Errorf("anthropicadapter: %w", err)
	}
	var b struct {
		Tools []anthropic.ToolUnionParam `json:"tools"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, fmt.Errorf("anthropicadapter: the SDK does not read the request body's tools: %w", err)
	}
	return b.Tools, nil
}

// Params returns p with res's system prompt, conversation and tools: its
// system blocks, then p's own; its messages, then p's own (a turn the host
// did not declare, say); its tools, then p's own.
func Params(res *contextasm.Result, p anthropic.MessageNewParams) (anthropic.MessageNewParams, error) {
	system, msgs, err := Messages(res)
	if err != nil {
		return p, err
	}
	tools, err := Tools(res)
	if err != nil {
		return p, err
	}
	p.System = append(system, p.System...)
	p.Messages = append(msgs, p.Messages...)
	if len(tools) > 0 {
		p.Tools = append(tools, p.Tools...)
	}
	return p, nil
}

// Response returns what a Message says about the context res rendered:
// its text blocks joined; each citation of a text block, named by the
// cited web page's URL, search result's source or document's title (in
// that order of preference), at the start of the block; and the usage.
func Response(res *contextasm.Result, m *anthropic.Message) contextasm.Response {
	var r contextasm.Response
	if m == nil {
		return r
	}
	var text strings.Builder
	for _, b := range m.Content {
		if b.Type != "text" {
			continue
		}
		at := text.Len()
		text.WriteString(b.Text)
		for _, c := range b.Citations {
			if name := citedName(c); name != "" {
				r.Cited = append(r.Cited, feedback.Tag{ID: name, Type: c.Type, Offset: at})
			}
		}
	}
	r.Text = text.String()
	u := m.Usage
	r.Usage = contextasm.Usage{InputTokens: int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
		CachedTokens: int(u.CacheReadInputTokens), CacheWriteTokens: int(u.CacheCreationInputTokens)}
	return r
}

// citedName returns what names the block a citation points at.
func citedName(c anthropic.TextCitationUnion) string {
	for _, s := range [...]string{c.URL, c.Source, c.DocumentTitle} {
		if s != "" {
			return s
		}
	}
	return ""
}

// Feedback hands eng what Message m says about the context res rendered
// (Response): its citations and usage.
func Feedback(ctx context.Context, eng Engine, res *contextasm.Result, m *anthropic.Message) (*feedback.Result, error) {
	return eng.FeedbackResponse(ctx, res, Response(res, m))
}

// Message returns the assistant's reply m as a chat.Message: its text
// blocks joined, its tool_use blocks as tool calls and its thinking and
// redacted_thinking blocks as reasoning, to declare as the conversation's
// next turn (declare.Conversation).
func Message(m *anthropic.Message) chat.Message {
	out := chat.Message{Role: chat.RoleAssistant}
	var text strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking", "redacted_thinking":
			// Sent back unchanged on the turn that made the pending calls
			// (docs/chat.md#reasoning).
			var r chat.Reasoning
			if json.Unmarshal([]byte(b.RawJSON()), &r) == nil {
				out.Reasoning = append(out.Reasoning, r)
			}
		case "tool_use":
			args := string(b.Input)
			if args == "" || args == "null" {
				args = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, chat.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Content = text.String()
	return out
}
