package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// TestAssembleAboutItsQuery: query, no_query and relevance reach the
// Engine as Request.Query, NoQuery and Relevance, and an inline
// template's relevance and recency its sections: each assembly over HTTP
// is the one the library makes of the same request, byte for byte, and
// its dump names the query the way the library's does.
func TestAssembleAboutItsQuery(t *testing.T) {
	ts := start(t, Config{})
	ts.declareFile(keyAcmeSupport)
	decls, err := declare.LoadFile("testdata/memories.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := contextasm.New(contextasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	if err := lib.Declare(decls...); err != nil {
		t.Fatal(err)
	}
	chat, err := template.LoadFile("testdata/templates/chat.json")
	if err != nil {
		t.Fatal(err)
	}
	var def map[string]any
	raw, err := os.ReadFile("testdata/templates/chat.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	history := def["sections"].([]any)[3].(map[string]any)
	history["relevance"], history["recency"], history["recency_half_age"] = 0.9, 0.1, "10m"
	tuned, err := template.Parse(mustJSON(t, def), "inline")
	if err != nil {
		t.Fatal(err)
	}
	now, _ := time.Parse(time.RFC3339, testNow)
	scores := map[string]float64{"doc-policy": 0.9, "s1-t1-tool": 1}
	for _, c := range []struct {
		name  string
		body  map[string]any
		req   contextasm.Request
		from  string // the dump's query.from; "" for none
		score string // a block whose relevance the host set
	}{
		{"the newest user turn", map[string]any{}, contextasm.Request{Template: chat}, "newest_user_turn", ""},
		{"a query", map[string]any{"query": "Order A-17 delivered"}, contextasm.Request{Template: chat, Query: "Order A-17 delivered"}, "request", ""},
		{"no query", map[string]any{"no_query": true}, contextasm.Request{Template: chat, NoQuery: true}, "", ""},
		{"the host's scores", map[string]any{"relevance": scores}, contextasm.Request{Template: chat, Relevance: scores}, "host", "doc-policy"},
		{"the host scores nothing", map[string]any{"relevance": map[string]float64{}}, contextasm.Request{Template: chat, Relevance: map[string]float64{}}, "host", ""},
		{"an inline template's weights", map[string]any{"template": def, "query": "broken order"}, contextasm.Request{Template: tuned, Query: "broken order"}, "request", ""},
	} {
		body := assembleBody(map[string]any{"session": "s1", "user": "u-1", "fresh": true, "dump": true})
		for k, v := range c.body {
			body[k] = v
		}
		r := ts.must(http.StatusOK, "POST", "/v1/assemble", keyAcmeSupport, body)
		req := c.req
		req.Now, req.SessionID, req.UserID, req.Roles, req.Fresh = now, "s1", "u-1", []string{"support"}, true
		res, err := lib.Assemble(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: the library: %v", c.name, err)
		}
		if r.body["text"] != res.Text || r.body["render_hash"] != res.RenderHash {
			t.Errorf("%s: the server assembled\n%s\nthe library\n%s", c.name, r.body["text"], res.Text)
		}
		dump := r.body["dump"].(map[string]any)
		q, _ := dump["query"].(map[string]any)
		if from, _ := q["from"].(string); from != c.from {
			t.Errorf("%s: the dump's query is %v, want from %q", c.name, dump["query"], c.from)
		}
		if want := res.Dump().Query; want != nil && q["sha256"] != want.SHA256 {
			t.Errorf("%s: the dump's query %v, the library's %+v", c.name, q, want)
		}
		if c.score != "" {
			if got := blockRelevance(dump, c.score); got != scores[c.score] {
				t.Errorf("%s: %s has relevance %v in the dump, want the host's %v", c.name, c.score, got, scores[c.score])
			}
		}
		if c.from == "" {
			for _, id := range []string{"s1-t1-user", "doc-policy"} {
				if got := blockRelevance(dump, id); got != 0 {
					t.Errorf("%s: %s has relevance %v without a query", c.name, id, got)
				}
			}
		}
	}
}

// blockRelevance returns a block's relevance in a dump (0 when absent).
func blockRelevance(dump map[string]any, id string) float64 {
	for _, sec := range dump["sections"].([]any) {
		for _, b := range sec.(map[string]any)["blocks"].([]any) {
			if b := b.(map[string]any); b["request_id"] == id {
				v, _ := b["relevance"].(float64)
				return v
			}
		}
	}
	return -1
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestQueryLimit: a query longer than a block's content may be is refused
// with the field, as the Engine would refuse it; one at the limit is not.
func TestQueryLimit(t *testing.T) {
	ts := start(t, Config{Engine: contextasm.Config{MaxContentBytes: 64}})
	ts.must(http.StatusOK, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(map[string]any{"query": strings.Repeat("é", 32)}))
	r := ts.must(http.StatusBadRequest, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(map[string]any{"query": strings.Repeat("é", 32) + "x"}))
	if code, field, msg := r.err(); code != codeInvalid || field != "query" || !strings.Contains(msg, "65 bytes") {
		t.Errorf("a 65-byte query: %s %s %q", code, field, msg)
	}
}
