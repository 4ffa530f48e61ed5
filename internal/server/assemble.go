package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/outcome"
)

// assemble is POST /v1/assemble.
func (s *Server) assemble(c *call) (int, any, *apiError) {
	var req assembleRequest
	if aerr := s.decodeBody(c, assembleSchema, &req); aerr != nil {
		return 0, nil, aerr
	}
	a, creq, aerr := s.run(c.r.Context(), c.t, c.key, &req)
	if aerr != nil {
		return 0, nil, aerr
	}
	out, aerr := s.response(a, creq, req.Dump, req.Blocks)
	if aerr != nil {
		return 0, nil, aerr
	}
	return http.StatusOK, out, nil
}

// run assembles for a tenant, in a slot, and retains the assembly.
func (s *Server) run(ctx context.Context, t *tenant, key *Key, req *assembleRequest) (*assembly, contextasm.Request, *apiError) {
	creq, aerr := s.request(key, req)
	if aerr != nil {
		return nil, creq, aerr
	}
	release, aerr := s.acquire(ctx)
	if aerr != nil {
		return nil, creq, aerr
	}
	start := time.Now()
	res, err := t.calls.Assemble(ctx, creq)
	took := time.Since(start)
	release()
	s.metrics.assembled(req.Format, res, err, took)
	if err != nil {
		return nil, creq, fromEngine(err, "")
	}
	a := &assembly{id: creq.ID, res: res, session: creq.SessionID, created: s.cfg.Clock()}
	t.asm.add(a)
	return a, creq, nil
}

// request turns an assemble request into the Engine's, with the key's
// roles narrowed to those asked.
func (s *Server) request(key *Key, req *assembleRequest) (contextasm.Request, *apiError) {
	var creq contextasm.Request
	roles, aerr := key.roles(req.Roles)
	if aerr != nil {
		return creq, aerr
	}
	for _, f := range []struct{ name, v string }{{"session", req.Session}, {"user", req.User}} {
		if strings.IndexFunc(f.v, unicode.IsControl) >= 0 {
			return creq, badRequest(codeInvalid, f.name, "%s %q holds a control character", f.name, f.v)
		}
	}
	for i, r := range roles {
		if strings.IndexFunc(r, unicode.IsControl) >= 0 {
			return creq, badRequest(codeInvalid, fmt.Sprintf("roles[%d]", i), "role %q holds a control character", r)
		}
	}
	tpl, aerr := s.tpls.resolve(req.Template, req.Budget)
	if aerr != nil {
		return creq, aerr
	}
	now := s.cfg.Clock().UTC()
	if req.Now != nil {
		t, err := time.Parse(time.RFC3339Nano, *req.Now)
		if err != nil {
			return creq, badRequest(codeInvalid, "now", "now %q is not an RFC 3339 time (2026-11-30T09:00:00Z)", *req.Now)
		}
		now = t
	}
	var format chat.Format
	if req.Format != "" && req.Format != "text" {
		f, err := chat.ParseFormat(req.Format)
		if err != nil {
			return creq, badRequest(codeInvalid, "format", "format %q: want text, openai, anthropic or responses", req.Format)
		}
		format = f
	}
	if aerr := s.checkQuery(req); aerr != nil {
		return creq, aerr
	}
	return contextasm.Request{Template: tpl, Now: now, SessionID: req.Session, UserID: req.User, Roles: roles,
		ID: newAssemblyID(), Format: format, Fresh: req.Fresh,
		Query: req.Query, NoQuery: req.NoQuery, Relevance: req.Relevance}, nil
}

// checkQuery refuses what the Engine would (a query longer than a block's
// content may be, a score outside 0 to 1) with the field at fault, and
// more than one of query, no_query and relevance: the Engine would read
// one and ignore the others, and a host that sent both should hear it.
func (s *Server) checkQuery(req *assembleRequest) *apiError {
	switch {
	case req.Relevance != nil && (req.Query != "" || req.NoQuery):
		return badRequest(codeInvalid, "relevance", "give one of query, no_query and relevance")
	case req.Query != "" && req.NoQuery:
		return badRequest(codeInvalid, "no_query", "give one of query, no_query and relevance")
	}
	limit := s.cfg.Engine.MaxContentBytes
	if limit <= 0 {
		limit = declare.DefaultMaxContentBytes
	}
	if len(req.Query) > limit {
		return badRequest(codeInvalid, "query", "query has %d bytes, more than a block's content may (%d)", len(req.Query), limit)
	}
	for _, id := range slices.Sorted(maps.Keys(req.Relevance)) {
		if v := req.Relevance[id]; !(v >= 0 && v <= 1) {
			return badRequest(codeInvalid, "relevance."+id, "relevance of %q is %v: want a number from 0 to 1", id, v)
		}
	}
	return nil
}

// response is what an assembly returns: the text or the provider's body,
// its figures, and with dump or blocks what it did with every block.
func (s *Server) response(a *assembly, req contextasm.Request, dump, blocks bool) (*assembleResponse, *apiError) {
	res := a.res
	out := &assembleResponse{
		AssemblyID: a.id, Format: formatName(res.Format), Text: res.Text, TotalTokens: res.TotalTokens,
		Budget: res.Budget, Encoding: res.Encoding, Fingerprint: res.Fingerprint, RenderHash: res.RenderHash,
		Now: res.Now.UTC().Format(time.RFC3339Nano), Roles: req.Roles, StateVersion: res.StateVersion,
		ExcludedCounts: res.ExcludedCounts, Prefix: res.Prefix, CacheBreakpoints: res.CacheBreakpoints,
		SummarizeCandidates: res.SummarizeCandidates, Approximate: res.Approximate,
	}
	if out.Roles == nil {
		out.Roles = []string{}
	}
	if res.Format != 0 {
		out.Body = res.Body()
	}
	if blocks {
		out.Blocks = []keptBlock{}
		for _, sec := range res.Sections() {
			for _, b := range sec.Blocks {
				if b.Status != outcome.StatusDropped {
					out.Blocks = append(out.Blocks, keptBlock{RequestID: b.RequestID, Section: sec.Name, Status: b.Status, Tokens: b.Tokens})
				}
			}
		}
	}
	if dump {
		d := res.Dump()
		out.Dump = &d
	}
	if dump || blocks {
		s.explained(a)
	}
	return out, nil
}

// explained counts an assembly's dropped blocks once its events were
// worked out (a dump, its blocks, a feedback): working them out for the
// metric alone would cost an incremental assembly a second, full one.
func (s *Server) explained(a *assembly) {
	if a.explained.Swap(true) {
		return
	}
	s.metrics.events(a.res.Events())
}

func formatName(f chat.Format) string {
	if f == 0 {
		return "text"
	}
	return f.String()
}

// feedback is POST /v1/feedback.
func (s *Server) feedback(c *call) (int, any, *apiError) {
	var req feedbackRequest
	if aerr := s.decodeBody(c, feedbackSchema, &req); aerr != nil {
		return 0, nil, aerr
	}
	if req.AssemblyID == "" {
		return 0, nil, badRequest(codeInvalid, "assembly_id", "missing: the assembly_id POST /v1/assemble returned")
	}
	resp, aerr := toResponse(&req)
	if aerr != nil {
		return 0, nil, aerr
	}
	a, ok := c.t.asm.get(req.AssemblyID, s.cfg.Clock())
	if !ok {
		return 0, nil, notFound("assembly", req.AssemblyID)
	}
	if !a.fed.CompareAndSwap(0, 1) {
		return 0, nil, newError(http.StatusConflict, codeFedBack, "assembly_id", "assembly %q has its feedback already: an assembly learns from one response, once", a.id)
	}
	fb, err := c.t.calls.FeedbackResponse(c.r.Context(), a.res, resp)
	if fb == nil || errors.Is(err, contextasm.ErrStateQueueFull) {
		a.fed.Store(0) // nothing learned: the host may send it again
		s.metrics.feedback("error")
		return 0, nil, fromEngine(err, "")
	}
	a.fed.Store(2)
	if err != nil && !errors.Is(err, feedback.ErrConstraintViolation) {
		// Learned; only reporting the usage of an approximate encoding
		// failed. Said in the log, not to the host, which can do nothing.
		s.cfg.Log.Warn("feedback: usage not reported", "tenant", c.t.name, "assembly", a.id, "err", err)
	}
	s.explained(a)
	out := feedbackResponse{Result: fb, Stored: s.flush(c.r.Context(), c.t)}
	normalise(out.Result)
	if len(fb.Violations) > 0 {
		s.metrics.feedback("violation")
	} else {
		s.metrics.feedback("ok")
	}
	return http.StatusOK, out, nil
}

// toResponse checks a feedback's citations and usage, naming the field at
// fault, and returns them as the Engine takes them.
func toResponse(req *feedbackRequest) (contextasm.Response, *apiError) {
	r := contextasm.Response{Text: req.Response}
	for i, ct := range req.Cited {
		switch {
		case ct.ID == "":
			return r, badRequest(codeInvalid, fmt.Sprintf("cited[%d].id", i), "missing: the request_id or uri of the block cited")
		case ct.Offset < 0 || ct.Offset > len(req.Response):
			return r, badRequest(codeInvalid, fmt.Sprintf("cited[%d].offset", i), "offset %d is outside the response's %d bytes", ct.Offset, len(req.Response))
		}
		r.Cited = append(r.Cited, feedback.Tag{ID: ct.ID, Type: ct.Type, Offset: ct.Offset})
	}
	if u := req.Usage; u != nil {
		switch {
		case u.InputTokens < 0, u.CachedTokens < 0, u.CacheWriteTokens < 0:
			return r, badRequest(codeInvalid, "usage", "token counts must be zero or more")
		case u.CachedTokens+u.CacheWriteTokens > u.InputTokens:
			return r, badRequest(codeInvalid, "usage", "cached_tokens (%d) and cache_write_tokens (%d) are part of input_tokens (%d), which is smaller", u.CachedTokens, u.CacheWriteTokens, u.InputTokens)
		}
		r.Usage = contextasm.Usage{InputTokens: u.InputTokens, CachedTokens: u.CachedTokens, CacheWriteTokens: u.CacheWriteTokens}
	}
	return r, nil
}

// normalise writes a feedback result's empty lists as [], not null.
func normalise(r *feedback.Result) {
	if r.Refs == nil {
		r.Refs = []feedback.Ref{}
	}
	if r.UnknownRefs == nil {
		r.UnknownRefs = []string{}
	}
	if r.TrustChanges == nil {
		r.TrustChanges = []feedback.TrustChange{}
	}
	if r.Violations == nil {
		r.Violations = []feedback.Violation{}
	}
}
