package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// call is one API request, authenticated: its tenant and key.
type call struct {
	w   http.ResponseWriter
	r   *http.Request
	t   *tenant
	key *Key
}

// endpoint handles a call: the status and body to send, or the error.
type endpoint func(c *call) (int, any, *apiError)

// route is one path's endpoints by method, and the query parameters they
// take.
type route struct {
	name    string // for metrics: the pattern
	methods map[string]endpoint
	query   []string
}

// routes returns the server's handler: the API under /v1 (authenticated),
// the probes and /metrics, and /mcp with Config.MCP. Every failure,
// routing's included, answers with the JSON error body.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern string, r route) {
		r.name = pattern
		mux.Handle(pattern, s.authenticated(r))
	}
	api("/v1/declarations", route{methods: map[string]endpoint{http.MethodPost: s.declare, http.MethodDelete: s.forgetPrefix}, query: []string{"replace_prefix", "prefix"}})
	api("/v1/declarations/{id...}", route{methods: map[string]endpoint{http.MethodDelete: s.forget}})
	api("/v1/assemble", route{methods: map[string]endpoint{http.MethodPost: s.assemble}})
	api("/v1/feedback", route{methods: map[string]endpoint{http.MethodPost: s.feedback}})
	api("/v1/sessions/{id}/end", route{methods: map[string]endpoint{http.MethodPost: s.endSession}})
	api("/v1/count", route{methods: map[string]endpoint{http.MethodPost: s.count}})
	api("/v1/assemblies/{id}", route{methods: map[string]endpoint{http.MethodGet: s.getAssembly}})
	mux.Handle("/healthz", s.probe("/healthz", func() (int, string) { return http.StatusOK, "ok" }))
	mux.Handle("/readyz", s.probe("/readyz", func() (int, string) {
		if s.ready.Load() {
			return http.StatusOK, "ready"
		}
		return http.StatusServiceUnavailable, "not_ready"
	}))
	mux.Handle("/metrics", s.metrics.handler())
	if s.cfg.MCP {
		mux.Handle("/mcp", s.mcpHandler())
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, "other", notFound("endpoint", r.Method+" "+r.URL.Path))
	})
	return mux
}

// authenticated runs a route's endpoint for a request with a valid key,
// under the request deadline, with its metrics.
func (s *Server) authenticated(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ep, ok := rt.methods[r.Method]
		if !ok {
			allow := make([]string, 0, len(rt.methods))
			for m := range rt.methods {
				allow = append(allow, m)
			}
			slices.Sort(allow)
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.fail(w, r, rt.name, newError(http.StatusMethodNotAllowed, codeMethod, "", "%s takes %s, not %s", r.URL.Path, strings.Join(allow, " or "), r.Method))
			return
		}
		key, aerr := s.authorize(r)
		if aerr != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="contextasm"`)
			s.fail(w, r, rt.name, aerr)
			return
		}
		if s.closed.Load() {
			s.fail(w, r, rt.name, newError(http.StatusServiceUnavailable, codeShuttingDown, "", "the server is shutting down"))
			return
		}
		for k := range r.URL.Query() {
			if !slices.Contains(rt.query, k) {
				s.fail(w, r, rt.name, badRequest(codeUnknownField, "?"+k, "unknown query parameter %q", k))
				return
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		c := &call{w: w, r: r.WithContext(ctx), t: s.tenants[key.Tenant], key: key}
		status, body, aerr := ep(c)
		if aerr != nil {
			s.fail(w, r, rt.name, aerr)
			return
		}
		writeJSON(w, status, body)
		s.metrics.request(rt.name, status, time.Since(start))
	})
}

// authorize returns the key of a request's bearer token.
func (s *Server) authorize(r *http.Request) (*Key, *apiError) {
	if s.cfg.Keys.open() {
		return openKey, nil
	}
	h := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || token == "" {
		return nil, newError(http.StatusUnauthorized, codeUnauthorized, "", "missing API key: send Authorization: Bearer KEY")
	}
	key, ok := s.cfg.Keys.lookup(strings.TrimSpace(token))
	if !ok {
		return nil, newError(http.StatusUnauthorized, codeUnauthorized, "", "unknown API key")
	}
	return key, nil
}

// probe answers a health probe, without authentication.
func (s *Server) probe(name string, status func() (int, string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			s.fail(w, r, name, newError(http.StatusMethodNotAllowed, codeMethod, "", "%s takes GET", name))
			return
		}
		code, text := status()
		writeJSON(w, code, statusResponse{Status: text})
	})
}

// fail writes err's status and JSON body.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, route string, err *apiError) {
	if err.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(err.retryAfter))
	}
	if err.status >= 500 {
		s.cfg.Log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", err.status, "code", err.body.Code, "message", err.body.Message)
	}
	writeJSON(w, err.status, struct {
		Error errorBody `json:"error"`
	}{err.body})
	s.metrics.request(route, err.status, 0)
}

// responseBuffers holds the buffers responses are encoded into: grown
// afresh for every response, a body was garbage twice its size, and the
// collections it caused are the round trip's tail.
var responseBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledResponse is the largest buffer kept for the next response: a
// rare huge one is left to the collector.
const maxPooledResponse = 4 << 20

// writeJSON writes v as the response, without HTML escapes (a context
// holds '<' and '>' aplenty).
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := responseBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledResponse {
			buf.Reset()
			responseBuffers.Put(buf)
		}
	}()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		enc.Encode(struct {
			Error errorBody `json:"error"`
		}{errorBody{Code: codeInternal, Message: "encoding the response: " + err.Error()}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// acquire takes a slot for an assembly, waiting at most QueueWait: past
// it the request is refused (503 overloaded) rather than queued without
// bound.
func (s *Server) acquire(ctx context.Context) (func(), *apiError) {
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	default:
	}
	timer := time.NewTimer(s.cfg.QueueWait)
	defer timer.Stop()
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	case <-timer.C:
		s.metrics.overloaded.Inc()
		e := newError(http.StatusServiceUnavailable, codeOverloaded, "", "%d assemblies are running, the limit (--max-concurrent); retry", cap(s.slots))
		e.retryAfter = 1
		return nil, e
	case <-ctx.Done():
		return nil, fromEngine(context.Cause(ctx), "")
	}
}
