package openaiadapter

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/feedback"
)

// Engine is what Feedback needs of an engine: a *contextasm.Engine, or
// one instrumented by adapters/otel.
type Engine interface {
	FeedbackResponse(ctx context.Context, res *contextasm.Result, r contextasm.Response) (*feedback.Result, error)
}

// Options tunes Messages and Params. The zero value writes the Result's
// cache breakpoints.
type Options struct {
	// PlainContent writes every message's content as one string, without
	// prompt cache breakpoints: for a server that speaks the Chat
	// Completions API but refuses its cache breakpoints.
	PlainContent bool
}

// Messages returns res's conversation (Result.Messages) as Chat
// Completions messages. It returns an error wrapping chat.ErrInvalid for a
// conversation the API would refuse (chat.Conversation.Check).
func Messages(res *contextasm.Result, o Options) ([]openai.ChatCompletionMessageParamUnion, error) {
	conv := res.Messages()
	if err := conv.Check(chat.FormatOpenAI); err != nil {
		return nil, fmt.Errorf("openaiadapter: %w", err)
	}
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(conv.Messages)+1)
	if len(conv.System) > 0 {
		if parts, ok := o.parts(conv.System); ok {
			out = append(out, openai.SystemMessage(parts))
		} else {
			out = append(out, openai.SystemMessage(conv.SystemText()))
		}
	}
	for _, m := range conv.Messages {
		out = append(out, o.message(m))
	}
	return out, nil
}

// Params returns p with res's conversation as its messages, followed by
// the messages p already had (a turn the host did not declare, say), and
// res's tools before p's own.
func Params(res *contextasm.Result, p openai.ChatCompletionNewParams, o Options) (openai.ChatCompletionNewParams, error) {
	msgs, err := Messages(res, o)
	if err != nil {
		return p, err
	}
	tools, err := Tools(res)
	if err != nil {
		return p, err
	}
	p.Messages = append(msgs, p.Messages...)
	if len(tools) > 0 {
		p.Tools = append(tools, p.Tools...)
	}
	return p, nil
}

// Tools returns the tools res carries (Result.Tools, docs/tools.md) as
// Chat Completions function tools, in the result's order; nil for none.
func Tools(res *contextasm.Result) ([]openai.ChatCompletionToolUnionParam, error) {
	conv := res.Messages()
	var out []openai.ChatCompletionToolUnionParam
	for _, t := range conv.Tools {
		var params shared.FunctionParameters
		if err := json.Unmarshal(t.InputSchema, &params); err != nil {
			return nil, fmt.Errorf("openaiadapter: tool %q: %w", t.Name, err)
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
		if t.Description != "" {
			def.Description = param.NewOpt(t.Description)
		}
		out = append(out, openai.ChatCompletionFunctionTool(def))
	}
	return out, nil
}

// parts returns the system prompt as text parts, each ending at a cache
// breakpoint marked; false when there is no breakpoint to mark.
func (o Options) parts(system []chat.SystemPart) ([]openai.ChatCompletionContentPartTextParam, bool) {
	marked := false
	for _, p := range system {
		marked = marked || p.CacheBreakpoint
	}
	if !marked || o.PlainContent {
		return nil, false
	}
	parts := make([]openai.ChatCompletionContentPartTextParam, len(system))
	for i, p := range system {
		parts[i] = textPart(p.Text, p.CacheBreakpoint)
	}
	return parts, true
}

func textPart(text string, breakpoint bool) openai.ChatCompletionContentPartTextParam {
	part := openai.ChatCompletionContentPartTextParam{Text: text}
	if breakpoint {
		part.PromptCacheBreakpoint = openai.NewChatCompletionContentPartTextPromptCacheBreakpointParam()
	}
	return part
}

// message returns one message of a checked conversation.
func (o Options) message(m chat.Message) openai.ChatCompletionMessageParamUnion {
	marked := m.CacheBreakpoint && !o.PlainContent && m.Content != ""
	switch m.Role {
	case chat.RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		switch {
		case marked:
			part := textPart(m.Content, true)
			a.Content.OfArrayOfContentParts = []openai.ChatCompletionAssistantMessageParamContentArrayOfContentPartUnion{{OfText: &part}}
		case m.Content != "":
			a.Content.OfString = param.NewOpt(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments}}})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
	case chat.RoleTool:
		if marked {
			return openai.ToolMessage([]openai.ChatCompletionContentPartTextParam{textPart(m.Content, true)}, m.ToolCallID)
		}
		return openai.ToolMessage(m.Content, m.ToolCallID)
	}
	if marked {
		part := textPart(m.Content, true)
		return openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{{OfText: &part}})
	}
	return openai.UserMessage(m.Content)
}

// Response returns what a completion says about the context res rendered:
// the first choice's text; its url_citation annotations, each naming the
// block whose provenance uri (or request_id) is the URL, at the
// annotation's start in the text; and the usage. A completion without
// choices gives an empty text.
func Response(res *contextasm.Result, c *openai.ChatCompletion) contextasm.Response {
	var r contextasm.Response
	if c == nil {
		return r
	}
	if len(c.Choices) > 0 {
		m := c.Choices[0].Message
		r.Text = m.Content
		for _, a := range m.Annotations {
			if a.URLCitation.URL == "" {
				continue
			}
			r.Cited = append(r.Cited, feedback.Tag{ID: a.URLCitation.URL, Type: "url_citation", Offset: byteOffset(r.Text, a.URLCitation.StartIndex)})
		}
	}
	u := c.Usage
	r.Usage = contextasm.Usage{InputTokens: int(u.PromptTokens), CachedTokens: int(u.PromptTokensDetails.CachedTokens),
		CacheWriteTokens: int(u.PromptTokensDetails.CacheWriteTokens)}
	return r
}

// byteOffset returns the byte offset of the character at index i of s
// (the API counts characters), within s.
func byteOffset(s string, i int64) int {
	if i <= 0 {
		return 0
	}
	n := int64(0)
	for off := range s {
		if n == i {
			return off
		}
		n++
	}
	return len(s)
}

// Feedback hands eng what completion c says about the context res
// rendered (Response): its citations and usage.
func Feedback(ctx context.Context, eng Engine, res *contextasm.Result, c *openai.ChatCompletion) (*feedback.Result, error) {
	return eng.FeedbackResponse(ctx, res, Response(res, c))
}

// Message returns the assistant's reply m as a chat.Message: its text and
// its function tool calls, to declare as the conversation's next turn
// (declare.Conversation).
func Message(m openai.ChatCompletionMessage) chat.Message {
	out := chat.Message{Role: chat.RoleAssistant, Content: m.Content}
	for _, tc := range m.ToolCalls {
		if tc.Type != "function" {
			continue // a custom tool's free-form input has no place in a chat.ToolCall
		}
		out.ToolCalls = append(out.ToolCalls, chat.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return out
}
