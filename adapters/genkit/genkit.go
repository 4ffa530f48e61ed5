package genkitadapter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/firebase/genkit/go/ai"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/template"
)

// Engine is what the middleware needs of an engine: a *contextasm.Engine,
// or one instrumented by adapters/otel.
type Engine interface {
	ReplacePrefix(prefix string, decls ...declare.Declaration) error
	Assemble(ctx context.Context, req contextasm.Request) (*contextasm.Result, error)
	FeedbackResponse(ctx context.Context, res *contextasm.Result, r contextasm.Response) (*feedback.Result, error)
}

// Config configures a Middleware. Template and SessionID are required;
// each other zero field means its documented default.
type Config struct {
	// Template assembles the context. Required.
	Template *template.Template
	// SessionID is the conversation's session. Required: make a
	// Middleware per conversation (it is cheap).
	SessionID string
	// UserID and Roles are the request's (contextasm.Request).
	UserID string
	Roles  []string // the roles the request holds; see UserID
	// Format is the chat format assembled for: its rules and counting.
	// Zero means chat.FormatOpenAI.
	Format chat.Format
	// ContextRole is the role of the messages holding the system prompt;
	// empty means ai.RoleSystem.
	ContextRole ai.Role
	// CacheTTL, when positive, puts Genkit's cache marker, with this many
	// seconds to live, on the message ending at the last cache breakpoint.
	CacheTTL int
	// Clock is the assembly's now; nil means time.Now.
	Clock func() time.Time
	// ToolResultMaxTokens, when positive, clips the content of each tool
	// result it declares to that many tokens, with a marker
	// (declare.ConversationOptions); zero leaves that to the template
	// section's tool_result_max_tokens (by default half its cap).
	ToolResultMaxTokens int
	// ClearToolResults, when set, makes the template's history sections
	// clear older tool results for the middleware's requests
	// (clear_tool_results: keep, at_least; docs/chat.md), whatever the
	// template says (template.Template.WithClearToolResults); nil leaves
	// the template's own.
	ClearToolResults *template.ClearToolResults
}

// Middleware is an ai.Middleware (ai.WithUse) that assembles each model
// call's messages and documents with contextasm.
type Middleware struct {
	eng Engine
	cfg Config
}

var _ ai.Middleware = (*Middleware)(nil)

// New returns a Middleware assembling with eng as cfg says.
func New(eng Engine, cfg Config) (*Middleware, error) {
	switch {
	case eng == nil:
		return nil, errors.New("genkitadapter: New needs an Engine")
	case cfg.Template == nil:
		return nil, errors.New("genkitadapter: Config.Template is nil")
	case cfg.SessionID == "":
		return nil, errors.New("genkitadapter: Config.SessionID is empty")
	case cfg.CacheTTL < 0:
		return nil, fmt.Errorf("genkitadapter: Config.CacheTTL %d is negative", cfg.CacheTTL)
	}
	if cfg.ClearToolResults != nil {
		tpl, err := cfg.Template.WithClearToolResults(cfg.ClearToolResults)
		if err != nil {
			return nil, fmt.Errorf("genkitadapter: Config.ClearToolResults: %w", err)
		}
		cfg.Template = tpl
	}
	if cfg.Format == 0 {
		cfg.Format = chat.FormatOpenAI
	}
	if cfg.ContextRole == "" {
		cfg.ContextRole = ai.RoleSystem
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	return &Middleware{eng: eng, cfg: cfg}, nil
}

// Name names the middleware.
func (m *Middleware) Name() string { return "contextasm" }

// New returns the hooks of one generation: WrapModel.
func (m *Middleware) New(context.Context) (*ai.Hooks, error) {
	return &ai.Hooks{WrapModel: m.wrapModel}, nil
}

// Prefix is what the request_ids of the blocks the middleware declares
// start with: "genkit/", the session and "/".
func (m *Middleware) Prefix() string { return "genkit/" + m.cfg.SessionID + "/" }

func (m *Middleware) wrapModel(ctx context.Context, params *ai.ModelParams, next ai.ModelNext) (*ai.ModelResponse, error) {
	res, req, err := m.assemble(ctx, params.Request)
	if err != nil {
		return nil, err
	}
	resp, err := next(ctx, &ai.ModelParams{Request: req, Callback: params.Callback})
	if err != nil {
		return resp, err
	}
	if _, err := m.eng.FeedbackResponse(ctx, res, Response(resp)); err != nil {
		return resp, fmt.Errorf("genkitadapter: %w", err)
	}
	return resp, nil
}

// assemble declares req's messages and documents, assembles, and returns
// the Result and the request to send instead.
func (m *Middleware) assemble(ctx context.Context, req *ai.ModelRequest) (*contextasm.Result, *ai.ModelRequest, error) {
	conv, from, err := Conversation(req.Messages)
	if err != nil {
		return nil, nil, err
	}
	now := m.cfg.Clock()
	prefix := m.Prefix()
	decls, err := declare.Conversation(conv, declare.ConversationOptions{SessionID: m.cfg.SessionID, Prefix: prefix, Now: now, ToolResultMaxTokens: m.cfg.ToolResultMaxTokens})
	if err != nil {
		return nil, nil, fmt.Errorf("genkitadapter: %w", err)
	}
	original := make(map[string]source, len(from))
	for i, at := range from {
		src := source{at: at, content: conv.Messages[i].Content}
		if i > 0 && from[i-1] == at {
			src.part = original[decls[len(conv.System)+i-1].RequestID].part + 1
		}
		original[decls[len(conv.System)+i].RequestID] = src
	}
	for i, d := range req.Docs {
		decl, err := document(d, prefix, m.cfg.SessionID)
		if err != nil {
			return nil, nil, fmt.Errorf("genkitadapter: document %d: %w", i, err)
		}
		decls = append(decls, decl)
	}
	if err := m.eng.ReplacePrefix(prefix, decls...); err != nil {
		return nil, nil, fmt.Errorf("genkitadapter: declaring the request: %w", err)
	}
	res, err := m.eng.Assemble(ctx, contextasm.Request{Template: m.cfg.Template, Now: now, SessionID: m.cfg.SessionID,
		UserID: m.cfg.UserID, Roles: m.cfg.Roles, Format: m.cfg.Format})
	if err != nil {
		return nil, nil, fmt.Errorf("genkitadapter: %w", err)
	}
	out := *req
	out.Docs = nil // the kept ones are in the system prompt
	out.Messages = m.messages(res, req.Messages, original)
	if res.Tools != nil {
		// The Engine holds tools: they are what the model may see, for
		// this request's roles, under the template's cap.
		if out.Tools, err = Tools(res); err != nil {
			return nil, nil, err
		}
	}
	return res, &out, nil
}

// source is where a declared turn came from: the request's message at,
// its part-th turn (a tool message's part-th response), and the content
// declared.
type source struct {
	at, part int
	content  string
}

// messages returns the Result as Genkit's messages: a ContextRole message
// per system part, then each kept message (the request's own; a tool
// message with the results the Result clipped or cleared written so),
// with the cache marker on the one ending at the last breakpoint.
func (m *Middleware) messages(res *contextasm.Result, msgs []*ai.Message, original map[string]source) []*ai.Message {
	conv := res.Messages()
	out := make([]*ai.Message, 0, len(conv.System)+len(conv.Messages))
	marked := -1
	for _, p := range conv.System {
		if p.CacheBreakpoint {
			marked = len(out)
		}
		out = append(out, ai.NewTextMessage(m.cfg.ContextRole, p.Text))
	}
	for i := 0; i < len(conv.Messages); i++ {
		cm := conv.Messages[i]
		src, ok := source{}, false
		if len(cm.BlockIDs) == 1 {
			src, ok = original[cm.BlockIDs[0]]
		}
		var msg *ai.Message
		breakpoint := cm.CacheBreakpoint
		switch {
		case !ok:
			msg = message(cm)
		case cm.Role == chat.RoleTool:
			// The results of one tool message come one after another.
			j := i + 1
			for ; j < len(conv.Messages) && len(conv.Messages[j].BlockIDs) == 1 && original[conv.Messages[j].BlockIDs[0]].at == src.at; j++ {
				breakpoint = breakpoint || conv.Messages[j].CacheBreakpoint
			}
			msg = toolMessage(msgs[src.at], conv.Messages[i:j], original)
			i = j - 1
		case textOf(msgs[src.at]) != cm.Content:
			msg = cutMessage(msgs[src.at], cm.Content)
		default:
			msg = msgs[src.at]
		}
		if breakpoint {
			marked = len(out)
		}
		out = append(out, msg)
	}
	if m.cfg.CacheTTL > 0 && marked >= 0 {
		// WithCacheTTL writes into the message's metadata map: not the
		// caller's.
		msg := *out[marked]
		msg.Metadata = maps.Clone(msg.Metadata)
		out[marked] = msg.WithCacheTTL(m.cfg.CacheTTL)
	}
	return out
}

// Response returns what Genkit's response says for feedback: its text,
// and the usage the model reported (input tokens, and those served from a
// cache), unless the two do not add up.
func Response(resp *ai.ModelResponse) contextasm.Response {
	if resp == nil {
		return contextasm.Response{}
	}
	r := contextasm.Response{Text: resp.Text()}
	if u := resp.Usage; u != nil && u.InputTokens >= 0 && u.CachedContentTokens >= 0 && u.CachedContentTokens <= u.InputTokens {
		r.Usage = contextasm.Usage{InputTokens: u.InputTokens, CachedTokens: u.CachedContentTokens}
	}
	return r
}

// document returns the declaration of a request's document: an external
// block of the session, request_id prefix+"doc-"+the hash of its text.
func document(d *ai.Document, prefix, session string) (declare.Declaration, error) {
	if d == nil {
		return declare.Declaration{}, errors.New("nil document")
	}
	var text strings.Builder
	for _, p := range d.Content {
		if p.IsText() {
			text.WriteString(p.Text)
		}
	}
	sum := sha256.Sum256([]byte(text.String()))
	decl := declare.Declaration{RequestID: prefix + "doc-" + hex.EncodeToString(sum[:6]), MemoryType: declare.External,
		Scope: declare.ScopeSession, SessionID: session, Content: text.String()}
	for _, k := range [...]string{"uri", "url"} {
		if u, ok := d.Metadata[k].(string); ok && u != "" {
			decl.Provenance.URI = u
			break
		}
	}
	return decl, nil
}

// textOf returns a message's text parts joined.
func textOf(m *ai.Message) string {
	var b strings.Builder
	for _, p := range m.Content {
		if p.IsText() {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// cutMessage returns m with its text parts replaced by one holding text.
func cutMessage(m *ai.Message, text string) *ai.Message {
	out := &ai.Message{Role: m.Role, Metadata: m.Metadata, Content: []*ai.Part{ai.NewTextPart(text)}}
	for _, p := range m.Content {
		if !p.IsText() {
			out.Content = append(out.Content, p)
		}
	}
	return out
}

// toolMessage returns m, a tool message, with the results of run (its
// turns, as the Result wrote them) whose content is not what was declared
// (clipped, or cleared: docs/chat.md) written as the Result wrote them.
func toolMessage(m *ai.Message, run []chat.Message, original map[string]source) *ai.Message {
	var out *ai.Message
	for _, cm := range run {
		src := original[cm.BlockIDs[0]]
		if cm.Content == src.content {
			continue
		}
		if out == nil {
			out = &ai.Message{Role: m.Role, Metadata: m.Metadata, Content: slices.Clone(m.Content)}
		}
		k := -1
		for at, p := range m.Content {
			if p.IsToolResponse() {
				if k++; k == src.part {
					tr := *p.ToolResponse
					tr.Output = cm.Content
					out.Content[at] = ai.NewToolResponsePart(&tr)
					break
				}
			}
		}
	}
	if out == nil {
		return m
	}
	return out
}

// message returns a chat message as Genkit's.
func message(cm chat.Message) *ai.Message {
	switch cm.Role {
	case chat.RoleAssistant:
		msg := &ai.Message{Role: ai.RoleModel}
		if cm.Content != "" {
			msg.Content = append(msg.Content, ai.NewTextPart(cm.Content))
		}
		for _, tc := range cm.ToolCalls {
			msg.Content = append(msg.Content, ai.NewToolRequestPart(&ai.ToolRequest{Name: tc.Name, Ref: tc.ID, Input: json.RawMessage(tc.Arguments)}))
		}
		return msg
	case chat.RoleTool:
		return &ai.Message{Role: ai.RoleTool, Content: []*ai.Part{ai.NewToolResponsePart(&ai.ToolResponse{Ref: cm.ToolCallID, Output: cm.Content})}}
	}
	return ai.NewUserTextMessage(cm.Content)
}

// Conversation returns Genkit's messages as a chat.Conversation: system
// messages as system parts, user and model messages as turns with a
// model's tool requests as calls, each tool response as a result. For
// each turn, from[i] is the index in msgs of the message it came from.
func Conversation(msgs []*ai.Message) (conv chat.Conversation, from []int, err error) {
	// Requests without a ref get "call_<message>_<part>"; a response
	// without one answers the latest unanswered request of its name.
	pending := map[string][]string{}
	for i, m := range msgs {
		if m == nil {
			return conv, nil, fmt.Errorf("genkitadapter: message %d is nil", i)
		}
		switch m.Role {
		case ai.RoleSystem:
			conv.System = append(conv.System, chat.SystemPart{Text: textOf(m)})
		case ai.RoleUser:
			conv.Messages = append(conv.Messages, chat.Message{Role: chat.RoleUser, Content: textOf(m)})
			from = append(from, i)
		case ai.RoleModel:
			cm := chat.Message{Role: chat.RoleAssistant, Content: textOf(m)}
			for j, p := range m.Content {
				if !p.IsToolRequest() {
					continue
				}
				tr := p.ToolRequest
				id := tr.Ref
				if id == "" {
					id = fmt.Sprintf("call_%d_%d", i, j)
				}
				args, err := arguments(tr.Input)
				if err != nil {
					return conv, nil, fmt.Errorf("genkitadapter: message %d: tool request %q: %w", i, tr.Name, err)
				}
				cm.ToolCalls = append(cm.ToolCalls, chat.ToolCall{ID: id, Name: tr.Name, Arguments: args})
				pending[tr.Name] = append(pending[tr.Name], id)
			}
			conv.Messages = append(conv.Messages, cm)
			from = append(from, i)
		case ai.RoleTool:
			for _, p := range m.Content {
				if !p.IsToolResponse() {
					continue
				}
				tr := p.ToolResponse
				id := tr.Ref
				if q := pending[tr.Name]; id == "" && len(q) > 0 {
					id = q[0]
				}
				if q := pending[tr.Name]; len(q) > 0 && q[0] == id {
					pending[tr.Name] = q[1:]
				}
				out, err := output(tr.Output)
				if err != nil {
					return conv, nil, fmt.Errorf("genkitadapter: message %d: tool response %q: %w", i, tr.Name, err)
				}
				conv.Messages = append(conv.Messages, chat.Message{Role: chat.RoleTool, ToolCallID: id, Content: out})
				from = append(from, i)
			}
		default:
			return conv, nil, fmt.Errorf("genkitadapter: message %d: unknown role %q", i, m.Role)
		}
	}
	return conv, from, nil
}

// arguments returns a tool request's input as a JSON object's text.
func arguments(input any) (string, error) {
	if input == nil {
		return "{}", nil
	}
	data, err := json.Marshal(input)
	if err != nil {
		return "", err
	}
	if len(data) == 0 || data[0] != '{' {
		return "", fmt.Errorf("input %s is not a JSON object", data)
	}
	return string(data), nil
}

// output returns a tool response's output as text: a string as it is,
// anything else as JSON.
func output(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	data, err := json.Marshal(v)
	return string(data), err
}
