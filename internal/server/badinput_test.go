package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBadInput: every endpoint's bad input gets its documented status,
// code and field (docs/server.md), in the one error shape.
func TestBadInput(t *testing.T) {
	ts := start(t, Config{MaxBodyBytes: 4096})
	ts.declareFile(keyAcmeAll)
	big := `{"text":"` + strings.Repeat("x", 5000) + `"}`
	for _, c := range []struct {
		name, method, path, key, body string
		status                        int
		code, field                   string
	}{
		// POST /v1/assemble
		{"assemble: malformed JSON", "POST", "/v1/assemble", keyAcmeSupport, `{"template":`, 400, codeMalformedJSON, ""},
		{"assemble: text after the object", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat"} {}`, 400, codeMalformedJSON, ""},
		{"assemble: not an object", "POST", "/v1/assemble", keyAcmeSupport, `["chat"]`, 400, codeWrongType, ""},
		{"assemble: empty", "POST", "/v1/assemble", keyAcmeSupport, ``, 400, codeMalformedJSON, ""},
		{"assemble: invalid UTF-8", "POST", "/v1/assemble", keyAcmeSupport, "{\"template\":\"chat\",\"session\":\"\xff\"}", 400, codeMalformedJSON, ""},
		{"assemble: unknown field", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","sesion":"s1"}`, 400, codeUnknownField, "sesion"},
		{"assemble: a field twice", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","session":"a","session":"b"}`, 400, codeUnknownField, "session"},
		{"assemble: a field in another case", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","Fresh":true}`, 400, codeUnknownField, "Fresh"},
		{"assemble: wrong type", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","fresh":"yes"}`, 400, codeWrongType, "fresh"},
		{"assemble: wrong type in a list", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","roles":[1]}`, 400, codeWrongType, "roles"},
		{"assemble: template of the wrong type", "POST", "/v1/assemble", keyAcmeSupport, `{"template":7}`, 400, codeWrongType, "template"},
		{"assemble: no template", "POST", "/v1/assemble", keyAcmeSupport, `{"session":"s1"}`, 400, codeInvalid, "template"},
		{"assemble: bad now", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","now":"yesterday"}`, 400, codeInvalid, "now"},
		{"assemble: bad format", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","format":"gemini"}`, 400, codeInvalid, "format"},
		{"assemble: negative budget", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","budget":-1}`, 400, codeInvalid, "budget"},
		{"assemble: a control character", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","session":"a\u0000b"}`, 400, codeInvalid, "session"},
		{"assemble: query of the wrong type", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","query":["refund"]}`, 400, codeWrongType, "query"},
		{"assemble: no_query of the wrong type", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","no_query":"yes"}`, 400, codeWrongType, "no_query"},
		{"assemble: query and no_query", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","query":"refund","no_query":true}`, 400, codeInvalid, "no_query"},
		{"assemble: relevance and query", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","query":"refund","relevance":{"doc-policy":1}}`, 400, codeInvalid, "relevance"},
		{"assemble: relevance and no_query", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","no_query":true,"relevance":{}}`, 400, codeInvalid, "relevance"},
		{"assemble: relevance not an object", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","relevance":[1]}`, 400, codeWrongType, "relevance"},
		{"assemble: a relevance that is no number", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","relevance":{"doc-policy":"high"}}`, 400, codeWrongType, "relevance"},
		{"assemble: a relevance above 1", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","relevance":{"cust-42":0.5,"doc-policy":1.5}}`, 400, codeInvalid, "relevance.doc-policy"},
		{"assemble: a relevance below 0", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","relevance":{"doc-policy":-0.1}}`, 400, codeInvalid, "relevance.doc-policy"},
		{"assemble: a relevance twice", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","relevance":{"doc-policy":0.1,"doc-policy":0.2}}`, 400, codeUnknownField, "relevance.doc-policy"},
		{"assemble: oversized", "POST", "/v1/assemble", keyAcmeSupport, big, 413, codeTooLarge, ""},
		{"assemble: unknown tenant", "POST", "/v1/assemble", "nobody-knows-this-key", `{"template":"chat"}`, 401, codeUnauthorized, ""},
		{"assemble: no key", "POST", "/v1/assemble", "", `{"template":"chat"}`, 401, codeUnauthorized, ""},
		{"assemble: a role the key lacks", "POST", "/v1/assemble", keyAcmeSupport, `{"template":"chat","roles":["auditor"]}`, 403, codeRoleNotAllowed, "roles[0]"},
		{"assemble: a query parameter", "POST", "/v1/assemble?debug=1", keyAcmeSupport, `{"template":"chat"}`, 400, codeUnknownField, "?debug"},
		{"assemble: GET", "GET", "/v1/assemble", keyAcmeSupport, ``, 405, codeMethod, ""},

		// POST /v1/declarations
		{"declare: malformed JSON", "POST", "/v1/declarations", keyAcmeSupport, `[{"request_id":`, 400, codeMalformedJSON, ""},
		{"declare: malformed JSONL", "POST", "/v1/declarations", keyAcmeSupport, `{"request_id":`, 400, codeInvalidDecl, "declarations[0]"},
		{"declare: unknown field", "POST", "/v1/declarations", keyAcmeSupport, `[{"request_id":"x","memory_type":"context","scope":"global","content":"c","colour":"red"}]`, 400, codeInvalidDecl, "declarations[0].colour"},
		{"declare: wrong type", "POST", "/v1/declarations", keyAcmeSupport, `[{"request_id":"x","memory_type":"context","scope":"global","content":7}]`, 400, codeInvalidDecl, "declarations[0].content"},
		{"declare: not an object", "POST", "/v1/declarations", keyAcmeSupport, `["x"]`, 400, codeInvalidDecl, "declarations[0]"},
		{"declare: empty", "POST", "/v1/declarations", keyAcmeSupport, ``, 400, codeMalformedJSON, ""},
		{"declare: oversized", "POST", "/v1/declarations", keyAcmeSupport, "[" + big + "]", 413, codeTooLarge, ""},
		{"declare: unknown tenant", "POST", "/v1/declarations", "nobody-knows-this-key", `[]`, 401, codeUnauthorized, ""},
		{"declare: empty replace_prefix", "POST", "/v1/declarations?replace_prefix=", keyAcmeSupport, `[]`, 400, codeInvalid, "?replace_prefix"},
		{"declare: DELETE's parameter", "POST", "/v1/declarations?prefix=a", keyAcmeSupport, `[]`, 400, codeUnknownField, "?prefix"},
		{"declare: PUT", "PUT", "/v1/declarations", keyAcmeSupport, `[]`, 405, codeMethod, ""},

		// DELETE /v1/declarations and /v1/declarations/{id}
		{"forget prefix: none", "DELETE", "/v1/declarations", keyAcmeSupport, ``, 400, codeInvalid, "?prefix"},
		{"forget prefix: POST's parameter", "DELETE", "/v1/declarations?replace_prefix=a", keyAcmeSupport, ``, 400, codeUnknownField, "?replace_prefix"},
		{"forget prefix: unknown tenant", "DELETE", "/v1/declarations?prefix=a", "nobody-knows-this-key", ``, 401, codeUnauthorized, ""},
		{"forget: unknown id", "DELETE", "/v1/declarations/nope", keyAcmeSupport, ``, 404, codeNotFound, ""},
		{"forget: a query parameter", "DELETE", "/v1/declarations/rule-tone?prefix=x", keyAcmeSupport, ``, 400, codeUnknownField, "?prefix"},
		{"forget: unknown tenant", "DELETE", "/v1/declarations/rule-tone", "nobody-knows-this-key", ``, 401, codeUnauthorized, ""},
		{"forget: GET", "GET", "/v1/declarations/rule-tone", keyAcmeSupport, ``, 405, codeMethod, ""},

		// POST /v1/feedback
		{"feedback: malformed JSON", "POST", "/v1/feedback", keyAcmeSupport, `{"assembly_id"`, 400, codeMalformedJSON, ""},
		{"feedback: unknown field", "POST", "/v1/feedback", keyAcmeSupport, `{"assembly_id":"a","answer":"x"}`, 400, codeUnknownField, "answer"},
		{"feedback: unknown nested field", "POST", "/v1/feedback", keyAcmeSupport, `{"assembly_id":"a","usage":{"input":3}}`, 400, codeUnknownField, "usage.input"},
		{"feedback: wrong type", "POST", "/v1/feedback", keyAcmeSupport, `{"assembly_id":"a","cited":[{"id":"x","offset":"3"}]}`, 400, codeWrongType, "cited.offset"},
		{"feedback: no assembly_id", "POST", "/v1/feedback", keyAcmeSupport, `{"response":"x"}`, 400, codeInvalid, "assembly_id"},
		{"feedback: a citation off the text", "POST", "/v1/feedback", keyAcmeSupport, `{"assembly_id":"a","response":"ab","cited":[{"id":"x","offset":9}]}`, 400, codeInvalid, "cited[0].offset"},
		{"feedback: a citation without id", "POST", "/v1/feedback", keyAcmeSupport, `{"assembly_id":"a","cited":[{"offset":0}]}`, 400, codeInvalid, "cited[0].id"},
		{"feedback: usage that does not add up", "POST", "/v1/feedback", keyAcmeSupport, `{"assembly_id":"a","usage":{"input_tokens":5,"cached_tokens":6}}`, 400, codeInvalid, "usage"},
		{"feedback: unknown assembly", "POST", "/v1/feedback", keyAcmeSupport, `{"assembly_id":"asm_nope"}`, 404, codeNotFound, ""},
		{"feedback: oversized", "POST", "/v1/feedback", keyAcmeSupport, big, 413, codeTooLarge, ""},
		{"feedback: unknown tenant", "POST", "/v1/feedback", "nobody-knows-this-key", `{"assembly_id":"a"}`, 401, codeUnauthorized, ""},

		// POST /v1/sessions/{id}/end
		{"end: unknown session", "POST", "/v1/sessions/nope/end", keyAcmeSupport, ``, 404, codeNotFound, ""},
		{"end: oversized", "POST", "/v1/sessions/s1/end", keyAcmeSupport, big, 413, codeTooLarge, ""},
		{"end: unknown tenant", "POST", "/v1/sessions/s1/end", "nobody-knows-this-key", ``, 401, codeUnauthorized, ""},
		{"end: GET", "GET", "/v1/sessions/s1/end", keyAcmeSupport, ``, 405, codeMethod, ""},

		// POST /v1/count
		{"count: malformed JSON", "POST", "/v1/count", keyAcmeSupport, `{"text":"a`, 400, codeMalformedJSON, ""},
		{"count: unknown field", "POST", "/v1/count", keyAcmeSupport, `{"txt":"a"}`, 400, codeUnknownField, "txt"},
		{"count: wrong type", "POST", "/v1/count", keyAcmeSupport, `{"texts":"a"}`, 400, codeWrongType, "texts"},
		{"count: both", "POST", "/v1/count", keyAcmeSupport, `{"text":"a","texts":["b"]}`, 400, codeInvalid, "texts"},
		{"count: neither", "POST", "/v1/count", keyAcmeSupport, `{}`, 400, codeInvalid, "text"},
		{"count: a file", "POST", "/v1/count", keyAcmeSupport, `{"encoding":"../../go.mod","text":"a"}`, 400, codeInvalid, "encoding"},
		{"count: oversized", "POST", "/v1/count", keyAcmeSupport, big, 413, codeTooLarge, ""},
		{"count: unknown tenant", "POST", "/v1/count", "nobody-knows-this-key", `{"text":"a"}`, 401, codeUnauthorized, ""},

		// GET /v1/assemblies/{id}
		{"assembly: unknown", "GET", "/v1/assemblies/asm_nope", keyAcmeSupport, ``, 404, codeNotFound, ""},
		{"assembly: unknown tenant", "GET", "/v1/assemblies/asm_nope", "nobody-knows-this-key", ``, 401, codeUnauthorized, ""},
		{"assembly: POST", "POST", "/v1/assemblies/asm_nope", keyAcmeSupport, `{}`, 405, codeMethod, ""},

		// Elsewhere
		{"unknown endpoint", "POST", "/v1/assembl", keyAcmeSupport, `{}`, 404, codeNotFound, ""},
		{"probe: POST", "POST", "/healthz", "", ``, 405, codeMethod, ""},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		r := ts.do(c.method, c.path, c.key, body)
		code, field, msg := r.err()
		if r.status != c.status || code != c.code || field != c.field {
			t.Errorf("%s: %d %s field %q, want %d %s field %q\n%s", c.name, r.status, code, field, c.status, c.code, c.field, r.raw)
			continue
		}
		if msg == "" {
			t.Errorf("%s: no message", c.name)
		}
		if c.status == 405 && r.header.Get("Allow") == "" {
			t.Errorf("%s: 405 without Allow", c.name)
		}
	}
}

// TestOverloaded: past --max-concurrent assemblies and the queue wait, a
// request is refused with 503 and Retry-After, not queued without bound.
func TestOverloaded(t *testing.T) {
	ts := start(t, Config{MaxConcurrent: 1, QueueWait: 20 * time.Millisecond})
	ts.declareFile(keyAcmeSupport)
	ts.slots <- struct{}{} // the one slot, taken
	r := ts.must(http.StatusServiceUnavailable, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(nil))
	if code, _, _ := r.err(); code != codeOverloaded || r.header.Get("Retry-After") != "1" {
		t.Errorf("%s %v", r.raw, r.header)
	}
	<-ts.slots
	ts.must(http.StatusOK, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(nil))
}

// TestDeadline: a request whose deadline passes while it waits for a
// slot answers 504.
func TestDeadline(t *testing.T) {
	ts := start(t, Config{MaxConcurrent: 1, QueueWait: time.Minute, RequestTimeout: 30 * time.Millisecond})
	ts.slots <- struct{}{}
	defer func() { <-ts.slots }()
	r := ts.must(http.StatusGatewayTimeout, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(nil))
	if code, _, _ := r.err(); code != codeDeadline {
		t.Errorf("%s", r.raw)
	}
}

// TestShutdown: Run stops taking requests, answers the one in flight,
// and flushes; after it the API says shutting_down and /readyz 503.
func TestShutdown(t *testing.T) {
	ts := start(t, Config{})
	ts.declareFile(keyAcmeSupport)
	ln, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ts.Run(ctx, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/readyz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("readyz before shutdown: %v %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/readyz"); err == nil {
		t.Errorf("the listener still answers after Run returned")
	}
	r := ts.must(http.StatusServiceUnavailable, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(nil))
	if code, _, _ := r.err(); code != codeShuttingDown {
		t.Errorf("%s", r.raw)
	}
	ts.must(http.StatusServiceUnavailable, "GET", "/readyz", "", nil)
}

// TestListen: no keys means loopback or a socket only.
func TestListen(t *testing.T) {
	if _, err := Listen("0.0.0.0:0", true); err == nil {
		t.Errorf("a server without keys listens on every interface")
	}
	ln, err := Listen("0.0.0.0:0", false)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	sock := t.TempDir() + "/s.sock"
	ln, err = Listen("unix:"+sock, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Listen("unix:"+sock, true); err == nil {
		t.Errorf("a second server took a live socket")
	}
	ln.Close()
}
