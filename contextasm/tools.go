package contextasm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/contextasm/internal/toolsel"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
)

// Tools (docs/tools.md): an Engine holds tool definitions beside its
// blocks; a chat request carries those its roles may see, chosen under the
// template's tools part, counted in its budget; Authorize decides again at
// call time.

// ErrToolRefused is wrapped by Authorize's refusals (a *ToolRefusal).
var ErrToolRefused = errors.New("contextasm: tool refused")

// ErrUnknownTool means Authorize was asked about a tool the Engine does
// not hold (never declared, or forgotten since).
var ErrUnknownTool = errors.New("contextasm: unknown tool")

// ToolRefusal is Authorize's refusal: it names both halves, the roles the
// request holds and the roles the tool needs (one of them).
type ToolRefusal struct {
	// Tool is the tool's name.
	Tool string
	// Roles are the request's roles.
	Roles []string
	// Needs are the roles the tool needs one of: its own roles, or the
	// template's role for a tool its hints mark destructive or open-world.
	Needs []string
	// Hint is "destructive" or "open_world" when the template's hint role
	// refused it, "" when the tool's own roles did.
	Hint string
}

// Error says who asked and what the tool needs.
func (r *ToolRefusal) Error() string {
	roles := "no role"
	if len(r.Roles) > 0 {
		roles = "roles " + strings.Join(r.Roles, ", ")
	}
	what := "one of the roles " + strings.Join(r.Needs, ", ")
	if len(r.Needs) == 1 {
		what = "the role " + r.Needs[0]
	}
	if r.Hint != "" {
		what += " (the template's role for " + strings.ReplaceAll(r.Hint, "_", "-") + " tools)"
	}
	return fmt.Sprintf("contextasm: tool %q refused: the request holds %s, which does not include %s", r.Tool, roles, what)
}

// Unwrap returns ErrToolRefused.
func (r *ToolRefusal) Unwrap() error { return ErrToolRefused }

// toolStore is the Engine's tools: an immutable set, replaced whole by
// DeclareTools and ForgetTools; and the previous tools of the
// conversation read last (sessionstate.go).
type toolStore struct {
	mu   sync.Mutex // serialises writers
	set  atomic.Pointer[toolsel.Set]
	last atomic.Pointer[previousTools]
}

func (s *toolStore) current() *toolsel.Set { return s.set.Load() }

// DeclareTools validates tools and adds them to the Engine, replacing
// tools of the same name. It applies all of them or, on any problem,
// none: the error is a *declare.ValidationError. Schemas are kept
// compact, so a body's bytes do not depend on how a schema was written.
func (e *Engine) DeclareTools(tools ...declare.Tool) error {
	if err := declare.ValidateTools(tools); err != nil {
		return err
	}
	incoming := declare.CloneTools(tools)
	for i := range incoming {
		var b bytes.Buffer
		if err := json.Compact(&b, incoming[i].InputSchema); err != nil {
			return fmt.Errorf("%w: tool %q: input_schema: %v", ErrInvalid, incoming[i].Name, err)
		}
		incoming[i].InputSchema = b.Bytes()
	}
	ts := &e.toolStore
	ts.mu.Lock()
	defer ts.mu.Unlock()
	byName := make(map[string]declare.Tool)
	if cur := ts.current(); cur != nil {
		for i := range cur.Len() {
			byName[cur.Tool(i).Name] = *cur.Tool(i)
		}
	}
	for _, t := range incoming {
		byName[t.Name] = t
	}
	if len(byName) > declare.MaxTools {
		return fmt.Errorf("%w: %d tools would exceed %d", ErrInvalid, len(byName), declare.MaxTools)
	}
	all := make([]declare.Tool, 0, len(byName))
	for _, t := range byName {
		all = append(all, t)
	}
	ts.set.Store(toolsel.NewSet(all))
	return nil
}

// ForgetTools removes the tools with the given names; unknown names are
// ignored. It returns how many it removed.
func (e *Engine) ForgetTools(names ...string) int {
	ts := &e.toolStore
	ts.mu.Lock()
	defer ts.mu.Unlock()
	cur := ts.current()
	if cur == nil {
		return 0
	}
	var keep []declare.Tool
	for i := range cur.Len() {
		if !slices.Contains(names, cur.Tool(i).Name) {
			keep = append(keep, *cur.Tool(i))
		}
	}
	n := cur.Len() - len(keep)
	if n > 0 {
		ts.set.Store(toolsel.NewSet(keep))
	}
	return n
}

// Tools returns the tools the Engine holds, in name order (copies).
func (e *Engine) Tools() []declare.Tool {
	cur := e.toolStore.current()
	out := make([]declare.Tool, cur.Len())
	for i := range out {
		out[i] = *cur.Tool(i)
	}
	return declare.CloneTools(out)
}

// Authorize decides, at call time, whether the request req may call the
// tool named name: it looks the tool up in the Engine's tools as they are
// now and resolves the request's roles (req.Roles, as the caller holds
// them now) against the tool's roles and the template's hint roles (its
// tools part). It returns nil, an error wrapping ErrUnknownTool, or a
// *ToolRefusal naming both halves. A tool left out of a request by the
// tools cap may still be called: the cap is about room, not permission.
// With Config.Audit, every refusal is logged (kind tool_refused).
func (e *Engine) Authorize(ctx context.Context, req Request, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if req.Template == nil {
		return fmt.Errorf("%w: Request.Template is nil", ErrInvalid)
	}
	if err := req.checkIdentity(); err != nil {
		return err
	}
	set := e.toolStore.current()
	i, ok := set.Find(name)
	if !ok {
		e.auditRefusal(ctx, req, name, "unknown_tool", nil)
		return fmt.Errorf("%w: %q", ErrUnknownTool, name)
	}
	t := set.Tool(i)
	ok, why, needs := toolsel.Access(t, req.Roles, req.Template.Tools())
	if ok {
		return nil
	}
	ref := &ToolRefusal{Tool: name, Roles: slices.Clone(req.Roles), Needs: slices.Clone(needs)}
	if why == toolsel.ReasonHintRole {
		ref.Hint = "open_world"
		if p := req.Template.Tools(); p != nil && p.DestructiveRole != "" && t.Destructive() && !slices.Contains(req.Roles, p.DestructiveRole) {
			ref.Hint = "destructive"
		}
	}
	e.auditRefusal(ctx, req, name, string(why), ref)
	return ref
}

// auditRefusal logs a refusal as an audit event, when the Engine has an
// audit logger.
func (e *Engine) auditRefusal(ctx context.Context, req Request, tool, reason string, ref *ToolRefusal) {
	if e.cfg.Audit == nil {
		return
	}
	attrs := []slog.Attr{slog.String("kind", "tool_refused"), slog.String("tool", tool), slog.String("reason", reason),
		slog.String("session_id", req.SessionID), slog.String("user_id", req.UserID), slog.Any("roles", req.Roles)}
	if ref != nil {
		attrs = append(attrs, slog.Any("needs", ref.Needs))
	}
	e.cfg.Audit.LogAttrs(ctx, slog.LevelInfo, "tool_refused", attrs...)
}

// toolsFor returns the tools req may carry, nil when the Engine holds
// none or the request is for the text format, which carries no tools.
func (e *Engine) toolsFor(req *Request) *toolsel.Set {
	set := e.toolStore.current()
	if set.Len() == 0 || req.Format == 0 {
		return nil
	}
	return set
}

// assembleTools returns the tools of req's assembly: set as this request
// selects from it, following the tools its conversation's previous call
// carried (conv; none with Fresh) and, for Anthropic, the margin learned
// from reported usage (usage.go). Neither is part of the output memo's
// key: the previous tools are in the previous decision (its digest is),
// and a report forgets the memo.
func (e *Engine) assembleTools(set *toolsel.Set, req *Request, conv convState) *assemble.Tools {
	if set == nil {
		return nil
	}
	var o toolsel.Options
	if conv.key != "" && conv.previous != nil && !req.Fresh {
		o.Previous = e.toolStore.previous(e.session(conv.key))
		o.Margin = e.cfg.Stickiness.WithDefaults().Margin
		if p := req.Template.Tools(); p != nil && p.StickyMargin != nil {
			o.Margin = *p.StickyMargin
		}
	}
	if req.Format == chat.FormatAnthropic {
		o.AnthropicScale = e.toolsMargin(req.Template.Encoding())
	}
	return &assemble.Tools{Set: set.With(o)}
}

// withTools sets res's tools part from out; the tools count in
// TotalTokens, as in the budget.
func withTools(res *Result, out *assemble.Output) {
	if res.Tools = toolsResultOf(out); res.Tools != nil {
		res.TotalTokens += res.Tools.Tokens
		res.toolDefs = out.Tools.Defs
	}
}

// withToolEvents returns an event for every tool out left out for the
// cap, then extra.
func withToolEvents(out *assemble.Output, extra []Event) []Event {
	tr := toolsResultOf(out)
	if tr == nil || len(tr.LeftOut) == 0 {
		return extra
	}
	return append(toolEvents(tr), extra...)
}

// ReasonToolsCap is the reason of a tool left out for the tools cap, in
// Result.Events (section "tools", the tool's name as request_id).
const ReasonToolsCap outcome.Reason = outcome.Reason(toolsel.ReasonToolsCap)

// ReasonToolSticky is the reason of a tool a fresh selection would carry
// but that the tools the conversation's previous call carried kept out:
// it outranks them by no more than Config.Stickiness.Margin.
const ReasonToolSticky outcome.Reason = outcome.Reason(toolsel.ReasonSticky)

// Aliases for the tools part of a Result (package outcome's).
type (
	// ToolsResult is a chat request's tools part (Result.Tools).
	ToolsResult = outcome.Tools
	// ToolKept is a tool a request carries.
	ToolKept = outcome.ToolKept
	// ToolLeftOut is a tool a request could see but does not carry.
	ToolLeftOut = outcome.ToolLeftOut
)

// toolsResultOf returns out's tools part for a Result, nil without one.
func toolsResultOf(out *assemble.Output) *ToolsResult {
	if out.Tools == nil {
		return nil
	}
	set := out.Tools.Set
	sel := out.Tools.Selection
	tr := &ToolsResult{Kept: []ToolKept{}, Tokens: sel.Tokens, Cap: sel.Cap, Method: sel.Method, Approximate: sel.Approximate}
	for _, k := range sel.Kept {
		t := set.Tool(k.Index)
		tr.Kept = append(tr.Kept, ToolKept{Name: t.Name, Source: t.SourceOf(), Tokens: k.Tokens, Relevance: k.Relevance, Required: k.Required})
	}
	for _, l := range sel.Left {
		t := set.Tool(l.Index)
		tr.LeftOut = append(tr.LeftOut, ToolLeftOut{Name: t.Name, Source: t.SourceOf(), Tokens: l.Tokens, Relevance: l.Relevance, Reason: string(l.Reason)})
	}
	for r, n := range sel.Hidden {
		if tr.Hidden == nil {
			tr.Hidden = make(map[string]int)
		}
		tr.Hidden[string(r)] = n
	}
	return tr
}

// toolEvents returns an event for every tool of tr left out for the cap.
func toolEvents(tr *ToolsResult) []Event {
	var ev []Event
	for _, l := range tr.LeftOut {
		ev = append(ev, Event{Kind: outcome.KindDropped, Section: "tools", RequestID: l.Name, Reason: outcome.Reason(l.Reason), Tokens: l.Tokens})
	}
	return ev
}

// toolDefs returns the tools a conversation carries, the last marked as a
// cache breakpoint (tools come first in Anthropic's cache order).
func toolDefs(defs []chat.Tool) []chat.Tool {
	if len(defs) == 0 {
		return nil
	}
	out := slices.Clone(defs)
	out[len(out)-1].CacheBreakpoint = true
	return out
}
