package server

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/contextasm/contextasm/template"
)

// endSession is POST /v1/sessions/{id}/end: the session's blocks, its
// conversations' decisions and its retained assemblies are released. A
// session holding none of them, the tenant's own or another's, is 404.
func (s *Server) endSession(c *call) (int, any, *apiError) {
	id := c.r.PathValue("id")
	if _, aerr := readBody(c.w, c.r, s.cfg.MaxBodyBytes); aerr != nil {
		return 0, nil, aerr
	}
	c.t.declMu.Lock()
	end, err := c.t.eng.EndSession(id)
	c.t.declMu.Unlock()
	if err != nil {
		return 0, nil, fromEngine(err, "")
	}
	n := c.t.asm.dropSession(id)
	if end.Blocks == 0 && end.Decisions == 0 && n == 0 {
		return 0, nil, notFound("session", id)
	}
	return http.StatusOK, endResponse{Blocks: end.Blocks, Decisions: end.Decisions, Assemblies: n, Stored: s.flush(c.r.Context(), c.t)}, nil
}

// count is POST /v1/count: the tokens of a text, or of each of several,
// in a built-in or approximate encoding.
func (s *Server) count(c *call) (int, any, *apiError) {
	var req countRequest
	if aerr := s.decodeBody(c, countSchema, &req); aerr != nil {
		return 0, nil, aerr
	}
	enc := req.Encoding
	if enc == "" {
		enc = template.DefaultEncoding
	}
	if !slices.Contains(template.Encodings(), enc) && !strings.HasPrefix(enc, template.ApproxPrefix) {
		return 0, nil, badRequest(codeInvalid, "encoding", "encoding %q: want %s or %sNAME", enc, strings.Join(template.Encodings(), ", "), template.ApproxPrefix)
	}
	var texts []string
	switch {
	case req.Text != nil && req.Texts != nil:
		return 0, nil, badRequest(codeInvalid, "texts", "give text or texts, not both")
	case req.Text != nil:
		texts = []string{*req.Text}
	case req.Texts != nil:
		texts = *req.Texts
	default:
		return 0, nil, badRequest(codeInvalid, "text", "missing: give text (one) or texts (several)")
	}
	out := countResponse{Encoding: enc}
	counts := make([]int, 0, len(texts))
	for _, t := range texts {
		n, approx, err := c.t.eng.Count(enc, t)
		if err != nil {
			return 0, nil, fromEngine(err, "encoding")
		}
		out.Tokens += n
		out.Approximate = approx
		counts = append(counts, n)
	}
	if req.Texts != nil {
		out.Counts = &counts
	}
	return http.StatusOK, out, nil
}

// getAssembly is GET /v1/assemblies/{id}: the dump of a retained
// assembly of the tenant.
func (s *Server) getAssembly(c *call) (int, any, *apiError) {
	id := c.r.PathValue("id")
	a, ok := c.t.asm.get(id, s.cfg.Clock())
	if !ok {
		return 0, nil, notFound("assembly", id)
	}
	s.explained(a)
	return http.StatusOK, assemblyResponse{AssemblyID: a.id, Session: a.session, Created: a.created.UTC().Format(time.RFC3339Nano),
		FedBack: a.fed.Load() == 2, Dump: a.res.Dump()}, nil
}
