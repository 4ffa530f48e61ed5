package einoadapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/template"
)

// Engine is what the middleware and the chat template need of an engine:
// a *contextasm.Engine, or one instrumented by adapters/otel.
type Engine interface {
	ReplacePrefix(prefix string, decls ...declare.Declaration) error
	Assemble(ctx context.Context, req contextasm.Request) (*contextasm.Result, error)
	FeedbackResponse(ctx context.Context, res *contextasm.Result, r contextasm.Response) (*feedback.Result, error)
}

// Config configures the middleware and the chat template. Template is
// required; each other zero field means its documented default.
type Config struct {
	// Template assembles the context. Required.
	Template *template.Template
	// SessionKey names the session: for the middleware an ADK session
	// value (adk.WithSessionValues), for the chat template a variable.
	// Empty means "session_id". Its value must be a non-empty string.
	SessionKey string
	// UserID and Roles are the request's (contextasm.Request).
	UserID string
	Roles  []string // the roles the request holds; see UserID
	// Format is the chat format assembled for: its rules (Anthropic's
	// first turn is a user's) and its counting. Zero means
	// chat.FormatOpenAI.
	Format chat.Format
	// Clock is the assembly's now; nil means time.Now.
	Clock func() time.Time
	// HistoryKey and QueryKey name the chat template's variables: the
	// conversation so far ([]*schema.Message) and the user's new turn (a
	// string, optional). Empty means "history" and "query".
	HistoryKey, QueryKey string
	// ToolResultMaxTokens, when positive, clips the content of each tool
	// result it declares to that many tokens, with a marker
	// (declare.ConversationOptions); zero leaves that to the template
	// section's tool_result_max_tokens (by default half its cap).
	ToolResultMaxTokens int
	// ClearToolResults, when set, makes the template's history sections
	// clear older tool results for the adapter's requests
	// (clear_tool_results: keep, at_least; docs/chat.md), whatever the
	// template says (template.Template.WithClearToolResults); nil leaves
	// the template's own.
	ClearToolResults *template.ClearToolResults
}

// withDefaults returns c with its defaults, or an error for a missing
// field.
func (c Config) withDefaults() (Config, error) {
	if c.Template == nil {
		return c, errors.New("einoadapter: Config.Template is nil")
	}
	if c.ClearToolResults != nil {
		tpl, err := c.Template.WithClearToolResults(c.ClearToolResults)
		if err != nil {
			return c, fmt.Errorf("einoadapter: Config.ClearToolResults: %w", err)
		}
		c.Template = tpl
	}
	if c.SessionKey == "" {
		c.SessionKey = "session_id"
	}
	if c.Format == 0 {
		c.Format = chat.FormatOpenAI
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.HistoryKey == "" {
		c.HistoryKey = "history"
	}
	if c.QueryKey == "" {
		c.QueryKey = "query"
	}
	return c, nil
}

// assembler does what the middleware and the chat template share: declare
// a session's messages and assemble.
type assembler struct {
	eng Engine
	cfg Config
}

// prefix is what the request_ids of a session's blocks start with.
func prefix(session string) string { return "eino/" + session + "/" }

// assemble declares msgs as session's conversation and assembles it,
// returning the Result and the messages to send.
func (a *assembler) assemble(ctx context.Context, session string, msgs []*schema.Message) (*contextasm.Result, []*schema.Message, error) {
	conv, from, err := Conversation(msgs)
	if err != nil {
		return nil, nil, err
	}
	now := a.cfg.Clock()
	decls, err := declare.Conversation(conv, declare.ConversationOptions{SessionID: session, Prefix: prefix(session), Now: now, ToolResultMaxTokens: a.cfg.ToolResultMaxTokens})
	if err != nil {
		return nil, nil, fmt.Errorf("einoadapter: %w", err)
	}
	if err := a.eng.ReplacePrefix(prefix(session), decls...); err != nil {
		return nil, nil, fmt.Errorf("einoadapter: declaring the conversation: %w", err)
	}
	res, err := a.eng.Assemble(ctx, contextasm.Request{Template: a.cfg.Template, Now: now, SessionID: session,
		UserID: a.cfg.UserID, Roles: a.cfg.Roles, Format: a.cfg.Format})
	if err != nil {
		return nil, nil, fmt.Errorf("einoadapter: %w", err)
	}
	system := make([]string, len(conv.System))
	for i, p := range conv.System {
		system[i] = p.Text
	}
	original := make(map[string]*schema.Message, len(from))
	for i, at := range from {
		original[decls[len(conv.System)+i].RequestID] = msgs[at]
	}
	return res, Messages(res, system, original), nil
}

// Middleware is an adk.ChatModelAgentMiddleware that assembles the
// agent's context before each model call and feeds the reply back after
// it.
type Middleware struct {
	*adk.BaseChatModelAgentMiddleware
	a assembler
}

var _ adk.ChatModelAgentMiddleware = (*Middleware)(nil)

// NewMiddleware returns a Middleware assembling with eng as cfg says.
func NewMiddleware(eng Engine, cfg Config) (*Middleware, error) {
	if eng == nil {
		return nil, errors.New("einoadapter: NewMiddleware needs an Engine")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Middleware{BaseChatModelAgentMiddleware: &adk.BaseChatModelAgentMiddleware{}, a: assembler{eng: eng, cfg: cfg}}, nil
}

// resultKey carries a model call's Result from BeforeModelRewriteState to
// AfterModelRewriteState.
type resultKey struct{}

// BeforeModelRewriteState assembles the context from the agent's messages
// and rewrites the persisted state to it.
func (m *Middleware) BeforeModelRewriteState(ctx context.Context, state *adk.ChatModelAgentState, _ *adk.ModelContext) (context.Context, *adk.ChatModelAgentState, error) {
	v, _ := adk.GetSessionValue(ctx, m.a.cfg.SessionKey)
	session, _ := v.(string)
	if session == "" {
		return ctx, state, fmt.Errorf("einoadapter: no session: the ADK session value %q is not a non-empty string (adk.WithSessionValues)", m.a.cfg.SessionKey)
	}
	res, msgs, err := m.a.assemble(ctx, session, state.Messages)
	if err != nil {
		return ctx, state, err
	}
	next := *state
	next.Messages = msgs
	if res.Tools != nil {
		// The Engine holds tools: they are what the model may see, for
		// this request's roles, under the template's cap.
		if next.ToolInfos, err = Tools(res); err != nil {
			return ctx, state, err
		}
	}
	return context.WithValue(ctx, resultKey{}, res), &next, nil
}

// AfterModelRewriteState feeds the model's reply, the state's last
// message, back to the Engine as the response to the context it was given.
func (m *Middleware) AfterModelRewriteState(ctx context.Context, state *adk.ChatModelAgentState, _ *adk.ModelContext) (context.Context, *adk.ChatModelAgentState, error) {
	res, _ := ctx.Value(resultKey{}).(*contextasm.Result)
	if res == nil || len(state.Messages) == 0 {
		return ctx, state, nil
	}
	reply := state.Messages[len(state.Messages)-1]
	if _, err := m.a.eng.FeedbackResponse(ctx, res, Response(reply)); err != nil {
		return ctx, state, fmt.Errorf("einoadapter: %w", err)
	}
	return ctx, state, nil
}

// Response returns what Eino's reply says for feedback: its text, and the
// usage its model reported (prompt tokens, and the cached ones), unless
// the two do not add up (a model component's bug should not stop a run).
func Response(reply *schema.Message) contextasm.Response {
	r := contextasm.Response{Text: reply.Content}
	if meta := reply.ResponseMeta; meta != nil && meta.Usage != nil {
		u := contextasm.Usage{InputTokens: meta.Usage.PromptTokens, CachedTokens: meta.Usage.PromptTokenDetails.CachedTokens}
		if u.InputTokens >= 0 && u.CachedTokens >= 0 && u.CachedTokens <= u.InputTokens {
			r.Usage = u
		}
	}
	return r
}
