package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// Keys of the tests' keys document: two tenants, keys of several scopes.
const (
	keyAcmeSupport = "acme-support-key-0001"
	keyAcmeAuditor = "acme-auditor-key-0002"
	keyAcmeAll     = "acme-everything-0003"
	keyBeta        = "beta-support-key-0004"
)

const testKeys = `{"keys": [
 {"key": "` + keyAcmeSupport + `", "tenant": "acme", "roles": ["support"]},
 {"key": "` + keyAcmeAuditor + `", "tenant": "acme", "roles": ["auditor"]},
 {"key": "` + keyAcmeAll + `", "tenant": "acme", "roles": ["*"]},
 {"key": "` + keyBeta + `", "tenant": "beta", "roles": ["support", "auditor"]}
]}`

// testNow is the instant the tests assemble at.
const testNow = "2026-11-30T09:00:00Z"

// testServer is a Server on a real loopback port, every response checked
// against the OpenAPI document.
type testServer struct {
	*Server
	t   testing.TB
	url string
}

// start starts a server with cfg: the tests' keys and templates unless
// cfg sets its own (keys "none" for none).
func start(t testing.TB, cfg Config) *testServer {
	t.Helper()
	return serve(t, cfg, true)
}

// serve is start, with the responses checked against the document or
// not (benchmarks measure the server, not the check).
func serve(t testing.TB, cfg Config, check bool) *testServer {
	t.Helper()
	if cfg.Keys == nil {
		keys, err := ParseKeys([]byte(testKeys))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Keys = keys
	}
	if cfg.Templates == nil {
		tpls, err := LoadTemplates("testdata/templates")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Templates = tpls
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	if check {
		h = checked(t, h)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.Close()
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &testServer{Server: srv, t: t, url: hs.URL}
}

// reply is a response: its status and JSON body.
type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

// errCode returns the error body's code, field and message.
func (r reply) err() (code, field, msg string) {
	e, _ := r.body["error"].(map[string]any)
	code, _ = e["code"].(string)
	field, _ = e["field"].(string)
	msg, _ = e["message"].(string)
	return
}

// do sends a request: body is a string sent as is, or a value sent as
// JSON; key "" sends none.
func (ts *testServer) do(method, path, key string, body any) reply {
	ts.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, ts.url+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	r := reply{status: resp.StatusCode, header: resp.Header, raw: raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			ts.t.Fatalf("%s %s: invalid JSON: %v\n%s", method, path, err, raw)
		}
	}
	return r
}

// must is do, failing the test unless the status is want.
func (ts *testServer) must(want int, method, path, key string, body any) reply {
	ts.t.Helper()
	r := ts.do(method, path, key, body)
	if r.status != want {
		ts.t.Fatalf("%s %s: status %d, want %d\n%s", method, path, r.status, want, r.raw)
	}
	return r
}

// declareFile declares testdata/memories.jsonl for key's tenant.
func (ts *testServer) declareFile(key string) {
	ts.t.Helper()
	b, err := os.ReadFile("testdata/memories.jsonl")
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.must(http.StatusOK, "POST", "/v1/declarations", key, b)
}

// assembleBody is an assemble request for the chat template at testNow.
func assembleBody(extra map[string]any) map[string]any {
	b := map[string]any{"template": "chat", "now": testNow}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// ids returns the request_ids of an assemble reply's blocks.
func (r reply) ids() []string {
	var out []string
	blocks, _ := r.body["blocks"].([]any)
	for _, b := range blocks {
		out = append(out, b.(map[string]any)["request_id"].(string))
	}
	return out
}
