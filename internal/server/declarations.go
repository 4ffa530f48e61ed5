package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/contextasm/contextasm/declare"
)

// batchName names a request's declarations in the problems declare
// reports; the API reports indices, not it.
const batchName = "declarations"

// declare is POST /v1/declarations: a batch of declarations, a JSON array
// or JSONL, all or nothing; with ?replace_prefix=P they become the blocks
// whose request_id starts with P.
func (s *Server) declare(c *call) (int, any, *apiError) {
	body, aerr := readBody(c.w, c.r, s.cfg.MaxBodyBytes)
	if aerr != nil {
		return 0, nil, aerr
	}
	decls, aerr := s.parseDeclarations(body)
	if aerr != nil {
		return 0, nil, aerr
	}
	q := c.r.URL.Query()
	if q.Has("prefix") {
		return 0, nil, badRequest(codeUnknownField, "?prefix", "POST takes ?replace_prefix=P (DELETE takes ?prefix=P)")
	}
	prefix, replace := q.Get("replace_prefix"), q.Has("replace_prefix")
	if replace {
		if prefix == "" {
			return 0, nil, badRequest(codeInvalid, "?replace_prefix", "an empty prefix would forget every block")
		}
		var probs []problem
		for i := range decls {
			if !strings.HasPrefix(decls[i].RequestID, prefix) {
				probs = append(probs, indexed(i, decls[i].RequestID, "request_id", fmt.Sprintf("does not start with the replace_prefix %q", prefix)))
			}
		}
		if len(probs) > 0 {
			return 0, nil, declarationsError(probs)
		}
	}
	c.t.declMu.Lock()
	defer c.t.declMu.Unlock()
	var err error
	if replace {
		err = c.t.eng.ReplacePrefix(prefix, decls...)
	} else {
		err = c.t.eng.Declare(decls...)
	}
	if err != nil {
		var ve *declare.ValidationError
		if errors.As(err, &ve) {
			return 0, nil, declarationsError(engineProblems(ve, decls))
		}
		return 0, nil, fromEngine(err, "")
	}
	return http.StatusOK, declareResponse{Declared: len(decls), Blocks: c.t.eng.Len()}, nil
}

// parseDeclarations reads a batch: a JSON array (the first character
// '['), else JSONL, through declare's strict loader either way (exact
// keys, UTF-8, every field's rules). Every problem names its index.
func (s *Server) parseDeclarations(body []byte) ([]declare.Declaration, *apiError) {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 {
		return nil, badRequest(codeMalformedJSON, "", "the body is empty: want a JSON array of declarations, or JSONL")
	}
	lines := body
	var index []int // declaration index of each line, -1 for none
	if trimmed[0] == '[' {
		if aerr := syntaxCheck(trimmed); aerr != nil {
			return nil, aerr
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(trimmed, &elems); err != nil {
			return nil, badRequest(codeMalformedJSON, "", "invalid JSON: %v", err)
		}
		var buf bytes.Buffer
		var probs []problem
		for i, e := range elems {
			if e = bytes.TrimSpace(e); len(e) == 0 || e[0] != '{' {
				probs = append(probs, indexed(i, "", "", "wrong type: want a declaration (a JSON object)"))
				e = []byte("{}")
			}
			if err := json.Compact(&buf, e); err != nil {
				return nil, badRequest(codeMalformedJSON, fmt.Sprintf("declarations[%d]", i), "invalid JSON: %v", err)
			}
			buf.WriteByte('\n')
			index = append(index, i)
		}
		if len(probs) > 0 {
			return nil, declarationsError(probs)
		}
		lines = buf.Bytes()
	} else {
		n := 0
		for line := range bytes.SplitSeq(body, []byte("\n")) {
			if t := bytes.TrimSpace(line); len(t) == 0 || t[0] == '#' {
				index = append(index, -1)
				continue
			}
			index = append(index, n)
			n++
		}
	}
	cfg := declare.Config{MaxContentBytes: s.cfg.Engine.MaxContentBytes}
	decls, err := cfg.Load(bytes.NewReader(lines), batchName)
	if err == nil {
		return decls, nil
	}
	var ve *declare.ValidationError
	if !errors.As(err, &ve) {
		return nil, fromEngine(err, "")
	}
	probs := make([]problem, 0, len(ve.Problems))
	for _, p := range ve.Problems {
		i := -1
		if p.Line > 0 && p.Line <= len(index) {
			i = index[p.Line-1]
		}
		pr := indexed(i, p.RequestID, p.Field, p.Message)
		if trimmed[0] != '[' {
			pr.Line = p.Line
		}
		probs = append(probs, pr)
	}
	return nil, declarationsError(probs)
}

// engineProblems places the problems the Engine found against its store
// (a tool result without its call) at their declarations' indices.
func engineProblems(ve *declare.ValidationError, decls []declare.Declaration) []problem {
	at := make(map[string]int, len(decls))
	for i := range decls {
		at[decls[i].RequestID] = i
	}
	probs := make([]problem, 0, len(ve.Problems))
	for _, p := range ve.Problems {
		i, ok := at[p.RequestID]
		if !ok {
			i = -1
		}
		field := p.Field
		if rest, ok := strings.CutPrefix(field, "declarations["); ok { // already indexed by the Engine
			if _, f, ok := strings.Cut(rest, "]."); ok {
				field = f
			}
		}
		probs = append(probs, indexed(i, p.RequestID, field, p.Message))
	}
	return probs
}

// indexed is a problem of the declaration at index i (-1: of the batch).
func indexed(i int, requestID, field, msg string) problem {
	p := problem{RequestID: requestID, Message: msg}
	path := "declarations"
	if i >= 0 {
		p.Index = &i
		path = fmt.Sprintf("declarations[%d]", i)
	}
	if field != "" {
		path += "." + field
	}
	p.Field = path
	return p
}

// declarationsError is the 400 listing a batch's problems; nothing of the
// batch was applied.
func declarationsError(probs []problem) *apiError {
	first := probs[0]
	e := badRequest(codeInvalidDecl, first.Field, "%d problem(s), nothing declared; the first: %s: %s", len(probs), first.Field, first.Message)
	e.body.Problems = probs
	return e
}

// forget is DELETE /v1/declarations/{id}.
func (s *Server) forget(c *call) (int, any, *apiError) {
	id := c.r.PathValue("id")
	c.t.declMu.Lock()
	defer c.t.declMu.Unlock()
	if c.t.eng.Forget(id) == 0 {
		return 0, nil, notFound("block", id)
	}
	return http.StatusOK, forgetResponse{Forgotten: 1, Blocks: c.t.eng.Len()}, nil
}

// forgetPrefix is DELETE /v1/declarations?prefix=P: every block whose
// request_id starts with P. It counts what the store holds fewer after
// the call: the blocks forgotten, unless an idle session's end or another
// replica's announcement landed in the same instant.
func (s *Server) forgetPrefix(c *call) (int, any, *apiError) {
	q := c.r.URL.Query()
	if q.Has("replace_prefix") {
		return 0, nil, badRequest(codeUnknownField, "?replace_prefix", "DELETE takes ?prefix=P (POST takes ?replace_prefix=P)")
	}
	prefix := q.Get("prefix")
	if prefix == "" {
		return 0, nil, badRequest(codeInvalid, "?prefix", "missing: DELETE /v1/declarations?prefix=P forgets the blocks whose request_id starts with P (an empty one would forget every block)")
	}
	c.t.declMu.Lock()
	defer c.t.declMu.Unlock()
	before := c.t.eng.Len()
	if err := c.t.eng.ReplacePrefix(prefix); err != nil {
		return 0, nil, fromEngine(err, "?prefix")
	}
	after := c.t.eng.Len()
	return http.StatusOK, forgetResponse{Forgotten: max(before-after, 0), Blocks: after}, nil
}
