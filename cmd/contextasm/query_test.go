package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/outcome"
)

// TestParseRelevance: a scores file is a JSON object of numbers from 0 to
// 1; anything else is refused naming the file and the field.
func TestParseRelevance(t *testing.T) {
	m, err := parseRelevance([]byte(`{"a": 0.5, "b": 1, "c": 0}`), "r.json")
	if err != nil || len(m) != 3 || m["a"] != 0.5 || m["b"] != 1 {
		t.Fatalf("got %v, %v", m, err)
	}
	for _, tt := range []struct{ in, want string }{
		{`[1, 2]`, "r.json: want a JSON object"},
		{`{"a": 1.5}`, `r.json: field "a": want a number from 0 to 1, got 1.5`},
		{`{"a": -0.1}`, `field "a": want a number from 0 to 1, got -0.1`},
		{`{"a": "0.5"}`, `field "a": want a number from 0 to 1, got a string`},
		{`{"a": 0.1, "a": 0.2}`, `field "a": given twice`},
		{`{"a": 0.1} {}`, "text after the object"},
		{`{"a": 0.1`, "r.json:"},
	} {
		if _, err := parseRelevance([]byte(tt.in), "r.json"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// TestRenderQuery: the demo's session is about its newest user turn by
// default (the dump says so, by hash); --query names another, --no-query
// none, and --relevance gives a host's scores; bad flags exit 2.
func TestRenderQuery(t *testing.T) {
	base := []string{"render", "-t", "demo/template.json", "-m", "demo/memories.jsonl", "--session", "sess-4711", "--user", "u-ana",
		"--role", "loan-agent", "--now", "2026-11-30T09:00:00Z", "--format", "json"}
	dump := func(args ...string) outcome.Dump {
		t.Helper()
		code, out, stderr := runCLI(t, append(append([]string{}, base...), args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var d outcome.Dump
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	def := dump()
	if q := def.Query; q == nil || q.From != outcome.QueryNewestUserTurn || q.Block != "turn-05-user" || !strings.HasPrefix(q.SHA256, "sha256:") {
		t.Errorf("default query %+v", def.Query)
	}
	if strings.Contains(mustJSON(t, def.Query), "credit card") {
		t.Error("the dump carries the query's text")
	}
	noQuery := dump("--no-query")
	if noQuery.Query != nil {
		t.Errorf("--no-query: query %+v", noQuery.Query)
	}
	asked := dump("--query", "What rate did the bureau report, and the score?")
	if q := asked.Query; q == nil || q.From != outcome.QueryRequest || q.Tokens == 0 {
		t.Errorf("--query: %+v", asked.Query)
	}
	scores := filepath.Join(t.TempDir(), "scores.json")
	if err := os.WriteFile(scores, []byte(`{"turn-01-user": 1, "turn-02-agent": 0.9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	hosted := dump("--relevance", scores)
	if q := hosted.Query; q == nil || q.From != outcome.QueryHost || q.Scores != 2 {
		t.Errorf("--relevance: %+v", hosted.Query)
	}
	// The turns the host scored are what the query recalled: written
	// after the rest of the history, the most relevant kept, and before
	// the question (the newest user turn), which ends the text.
	if !strings.HasSuffix(hosted.Text, "I am reviewing the numbers now.\nUSER: OK. I can pay off part of my credit card next month if that helps. What happens now?\n") ||
		hosted.Text == noQuery.Text {
		t.Errorf("--relevance: the scored turns are not written last before the question:\n%s", hosted.Text)
	}
	for _, bad := range [][]string{{"--query", "x", "--no-query"}, {"--relevance", filepath.Join(t.TempDir(), "missing.json")}} {
		if code, _, _ := runCLI(t, append(append([]string{}, base...), bad...)...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, exitUsage)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
