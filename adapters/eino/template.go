package einoadapter

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cloudwego/eino/components/prompt"
	"github.com/cloudwego/eino/schema"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/feedback"
)

// maxSessions bounds the Results a ChatTemplate keeps for Feedback: the
// last assembly of this many sessions, the oldest let go first.
const maxSessions = 1024

// ChatTemplate is a prompt.ChatTemplate for compose graphs: Format
// assembles the context of the conversation in its variables. It is safe
// for concurrent use.
type ChatTemplate struct {
	a assembler

	mu    sync.Mutex
	last  map[string]*contextasm.Result // each session's last assembly
	order []string                      // sessions, oldest first
}

var _ prompt.ChatTemplate = (*ChatTemplate)(nil)

// NewChatTemplate returns a ChatTemplate assembling with eng as cfg says.
func NewChatTemplate(eng Engine, cfg Config) (*ChatTemplate, error) {
	if eng == nil {
		return nil, errors.New("einoadapter: NewChatTemplate needs an Engine")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &ChatTemplate{a: assembler{eng: eng, cfg: cfg}, last: make(map[string]*contextasm.Result)}, nil
}

// Format assembles the context of the conversation in vs: the session
// (vs[SessionKey], a string), the messages so far (vs[HistoryKey], a
// []*schema.Message, optional) and the user's new turn (vs[QueryKey], a
// string, optional). It returns the system message and the kept messages.
func (t *ChatTemplate) Format(ctx context.Context, vs map[string]any, _ ...prompt.Option) ([]*schema.Message, error) {
	cfg := t.a.cfg
	session, _ := vs[cfg.SessionKey].(string)
	if session == "" {
		return nil, fmt.Errorf("einoadapter: variable %q is not a non-empty string", cfg.SessionKey)
	}
	var msgs []*schema.Message
	if v, ok := vs[cfg.HistoryKey]; ok && v != nil {
		h, ok := v.([]*schema.Message)
		if !ok {
			return nil, fmt.Errorf("einoadapter: variable %q is a %T, not []*schema.Message", cfg.HistoryKey, v)
		}
		msgs = h
	}
	if v, ok := vs[cfg.QueryKey]; ok && v != nil {
		q, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("einoadapter: variable %q is a %T, not a string", cfg.QueryKey, v)
		}
		msgs = append(msgs[:len(msgs):len(msgs)], schema.UserMessage(q))
	}
	res, out, err := t.a.assemble(ctx, session, msgs)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if _, seen := t.last[session]; !seen {
		t.order = append(t.order, session)
		if len(t.order) > maxSessions {
			delete(t.last, t.order[0])
			t.order = t.order[1:]
		}
	}
	t.last[session] = res
	t.mu.Unlock()
	return out, nil
}

// Tools returns the tools of the session's last assembly (Tools), to
// give the model with the messages Format returned (model.WithTools); nil
// when the template holds no assembly of the session, or it carried none.
func (t *ChatTemplate) Tools(session string) ([]*schema.ToolInfo, error) {
	t.mu.Lock()
	res := t.last[session]
	t.mu.Unlock()
	if res == nil {
		return nil, nil
	}
	return Tools(res)
}

// Feedback feeds a model's reply back to the Engine as the response to the
// session's last assembly. It returns nil and no error when the template
// holds no assembly of the session.
func (t *ChatTemplate) Feedback(ctx context.Context, session string, reply *schema.Message) (*feedback.Result, error) {
	t.mu.Lock()
	res := t.last[session]
	t.mu.Unlock()
	if res == nil || reply == nil {
		return nil, nil
	}
	return t.a.eng.FeedbackResponse(ctx, res, Response(reply))
}
