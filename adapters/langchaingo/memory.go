package langchaingoadapter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/schema"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/template"
)

// Engine is what a Memory needs of an engine: a *contextasm.Engine, or one
// instrumented by adapters/otel.
type Engine interface {
	ReplacePrefix(prefix string, decls ...declare.Declaration) error
	Assemble(ctx context.Context, req contextasm.Request) (*contextasm.Result, error)
	FeedbackResponse(ctx context.Context, res *contextasm.Result, r contextasm.Response) (*feedback.Result, error)
}

// Config configures a Memory. Template and SessionID are required; each
// other zero field means its documented default.
type Config struct {
	// Template assembles the context. Required.
	Template *template.Template
	// SessionID is the conversation's session: its messages are declared
	// in it, and the context is assembled for it. Required.
	SessionID string
	// UserID and Roles are the request's (contextasm.Request).
	UserID string
	Roles  []string // the roles the request holds; see UserID
	// History keeps the messages; nil means a new in-memory history
	// (memory.NewChatMessageHistory).
	History schema.ChatMessageHistory
	// Clock is the assembly's now; nil means time.Now. (The Engine never
	// reads the clock; a test gives a fixed one.)
	Clock func() time.Time
	// MemoryKey names the memory variable; empty means "history".
	MemoryKey string
	// InputKey and OutputKey name the chain's input and output values that
	// SaveContext keeps; empty means the only value there is.
	InputKey, OutputKey string
	// HumanPrefix and AIPrefix start the user's and the model's messages in
	// the text format; empty means "Human" and "AI".
	HumanPrefix, AIPrefix string
	// ReturnMessages makes the memory variable a []llms.ChatMessage
	// assembled for a chat format, rather than the rendered text.
	ReturnMessages bool
	// ToolResultMaxTokens, when positive, clips the content of each tool
	// result it declares to that many tokens, with a marker
	// (declare.ConversationOptions); zero leaves that to the template
	// section's tool_result_max_tokens (by default half its cap).
	ToolResultMaxTokens int
	// ClearToolResults, when set, makes the template's history sections
	// clear older tool results for the memory's requests
	// (clear_tool_results: keep, at_least; docs/chat.md), whatever the
	// template says (template.Template.WithClearToolResults); nil leaves
	// the template's own.
	ClearToolResults *template.ClearToolResults
}

// Memory is a schema.Memory backed by a contextasm Engine. It is safe for
// concurrent use, though a chain calls it in turn.
type Memory struct {
	eng    Engine
	cfg    Config
	prefix string

	mu   sync.Mutex
	last *contextasm.Result // the context the next SaveContext answers
}

var _ schema.Memory = (*Memory)(nil)

// New returns a Memory assembling with eng as cfg says.
func New(eng Engine, cfg Config) (*Memory, error) {
	switch {
	case eng == nil:
		return nil, errors.New("langchaingoadapter: New needs an Engine")
	case cfg.Template == nil:
		return nil, errors.New("langchaingoadapter: Config.Template is nil")
	case cfg.SessionID == "":
		return nil, errors.New("langchaingoadapter: Config.SessionID is empty")
	}
	if cfg.ClearToolResults != nil {
		tpl, err := cfg.Template.WithClearToolResults(cfg.ClearToolResults)
		if err != nil {
			return nil, fmt.Errorf("langchaingoadapter: Config.ClearToolResults: %w", err)
		}
		cfg.Template = tpl
	}
	if cfg.History == nil {
		cfg.History = memory.NewChatMessageHistory()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.MemoryKey == "" {
		cfg.MemoryKey = "history"
	}
	if cfg.HumanPrefix == "" {
		cfg.HumanPrefix = "Human"
	}
	if cfg.AIPrefix == "" {
		cfg.AIPrefix = "AI"
	}
	return &Memory{eng: eng, cfg: cfg, prefix: "langchaingo/" + cfg.SessionID + "/"}, nil
}

// Prefix is what the request_ids of the blocks the memory declares start
// with: "langchaingo/", the session and "/".
func (m *Memory) Prefix() string { return m.prefix }

// GetMemoryKey returns the memory variable's name.
func (m *Memory) GetMemoryKey(context.Context) string { return m.cfg.MemoryKey }

// MemoryVariables returns the one variable the memory loads.
func (m *Memory) MemoryVariables(context.Context) []string { return []string{m.cfg.MemoryKey} }

// LoadMemoryVariables declares the chat history's messages as the
// session's history blocks and assembles the context: the memory variable
// is its text, or with Config.ReturnMessages its messages.
func (m *Memory) LoadMemoryVariables(ctx context.Context, _ map[string]any) (map[string]any, error) {
	msgs, err := m.cfg.History.Messages(ctx)
	if err != nil {
		return nil, err
	}
	conv, err := m.conversation(msgs)
	if err != nil {
		return nil, err
	}
	now := m.cfg.Clock()
	decls, err := declare.Conversation(conv, declare.ConversationOptions{SessionID: m.cfg.SessionID, Prefix: m.prefix, Now: now, ToolResultMaxTokens: m.cfg.ToolResultMaxTokens})
	if err != nil {
		return nil, fmt.Errorf("langchaingoadapter: %w", err)
	}
	if err := m.eng.ReplacePrefix(m.prefix, decls...); err != nil {
		return nil, fmt.Errorf("langchaingoadapter: declaring the chat history: %w", err)
	}
	req := contextasm.Request{Template: m.cfg.Template, Now: now, SessionID: m.cfg.SessionID, UserID: m.cfg.UserID, Roles: m.cfg.Roles}
	if m.cfg.ReturnMessages {
		req.Format = chat.FormatOpenAI
	}
	res, err := m.eng.Assemble(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("langchaingoadapter: %w", err)
	}
	m.mu.Lock()
	m.last = res
	m.mu.Unlock()
	if !m.cfg.ReturnMessages {
		return map[string]any{m.cfg.MemoryKey: res.Text}, nil
	}
	return map[string]any{m.cfg.MemoryKey: ChatMessages(res.Messages())}, nil
}

// SaveContext adds the chain's input and output to the chat history as a
// user and an AI message, and feeds the output back to the Engine as the
// response to the context the last LoadMemoryVariables assembled.
func (m *Memory) SaveContext(ctx context.Context, inputs, outputs map[string]any) error {
	in, err := memory.GetInputValue(inputs, m.cfg.InputKey)
	if err != nil {
		return err
	}
	out, err := memory.GetInputValue(outputs, m.cfg.OutputKey)
	if err != nil {
		return err
	}
	if err := m.cfg.History.AddUserMessage(ctx, in); err != nil {
		return err
	}
	if err := m.cfg.History.AddAIMessage(ctx, out); err != nil {
		return err
	}
	m.mu.Lock()
	res := m.last
	m.last = nil
	m.mu.Unlock()
	if res == nil {
		return nil
	}
	if _, err := m.eng.FeedbackResponse(ctx, res, contextasm.Response{Text: out}); err != nil {
		return fmt.Errorf("langchaingoadapter: %w", err)
	}
	return nil
}

// Clear empties the chat history and forgets the blocks the memory
// declared.
func (m *Memory) Clear(ctx context.Context) error {
	m.mu.Lock()
	m.last = nil
	m.mu.Unlock()
	if err := m.cfg.History.Clear(ctx); err != nil {
		return err
	}
	return m.eng.ReplacePrefix(m.prefix)
}

// conversation maps LangChainGo's messages to a chat.Conversation: system
// messages are system parts, human and generic messages user turns, AI
// messages assistant turns with their tool calls, tool messages tool
// results. In the text format (no Config.ReturnMessages) a message's
// content starts with its speaker's prefix.
func (m *Memory) conversation(msgs []llms.ChatMessage) (chat.Conversation, error) {
	var conv chat.Conversation
	text := !m.cfg.ReturnMessages
	say := func(prefix, content string) string {
		if !text {
			return content
		}
		if content == "" {
			return prefix + ":"
		}
		return prefix + ": " + content
	}
	for i, msg := range msgs {
		switch v := msg.(type) {
		case llms.SystemChatMessage:
			conv.System = append(conv.System, chat.SystemPart{Text: v.Content})
		case llms.HumanChatMessage:
			conv.Messages = append(conv.Messages, chat.Message{Role: chat.RoleUser, Content: say(m.cfg.HumanPrefix, v.Content)})
		case llms.GenericChatMessage:
			conv.Messages = append(conv.Messages, chat.Message{Role: chat.RoleUser, Content: say(v.Role, v.Content)})
		case llms.AIChatMessage:
			cm := chat.Message{Role: chat.RoleAssistant, Content: v.Content}
			for _, tc := range v.ToolCalls {
				if tc.FunctionCall == nil {
					return conv, fmt.Errorf("langchaingoadapter: message %d: tool call %q has no function", i, tc.ID)
				}
				cm.ToolCalls = append(cm.ToolCalls, chat.ToolCall{ID: tc.ID, Name: tc.FunctionCall.Name, Arguments: tc.FunctionCall.Arguments})
			}
			if cm.Content != "" || len(cm.ToolCalls) == 0 {
				cm.Content = say(m.cfg.AIPrefix, cm.Content)
			}
			conv.Messages = append(conv.Messages, cm)
		case llms.ToolChatMessage:
			conv.Messages = append(conv.Messages, chat.Message{Role: chat.RoleTool, ToolCallID: v.ID, Content: v.Content})
		default:
			return conv, fmt.Errorf("langchaingoadapter: message %d: %s messages are not supported (use tool messages)", i, msg.GetType())
		}
	}
	return conv, nil
}

// ChatMessages returns a conversation as LangChainGo's messages: the
// system prompt as one system message, then each message with its role,
// an assistant's tool calls and the tool results.
func ChatMessages(conv chat.Conversation) []llms.ChatMessage {
	out := make([]llms.ChatMessage, 0, len(conv.Messages)+1)
	if len(conv.System) > 0 {
		out = append(out, llms.SystemChatMessage{Content: conv.SystemText()})
	}
	for _, msg := range conv.Messages {
		switch msg.Role {
		case chat.RoleAssistant:
			ai := llms.AIChatMessage{Content: msg.Content}
			for _, tc := range msg.ToolCalls {
				ai.ToolCalls = append(ai.ToolCalls, llms.ToolCall{ID: tc.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
			}
			out = append(out, ai)
		case chat.RoleTool:
			out = append(out, llms.ToolChatMessage{ID: msg.ToolCallID, Content: msg.Content})
		default:
			out = append(out, llms.HumanChatMessage{Content: msg.Content})
		}
	}
	return out
}
