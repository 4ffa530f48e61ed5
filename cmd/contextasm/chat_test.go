package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/chatcheck"
	"github.com/contextasm/contextasm/template"
)

// A session with tool calls (testdata/tools): parallel calls, a call whose
// result expired, a user writing before a result came back, a group.
const (
	toolsTemplate = "testdata/tools/template.json"
	toolsMemories = "testdata/tools/memories.jsonl"
)

var toolsRequest = []string{"--now", "2026-11-30T09:00:00Z", "--session", "sess-4711", "--user", "u-ana"}

func toolsArgs(extra ...string) []string {
	return append(append([]string{"render", "-t", toolsTemplate, "-m", toolsMemories}, toolsRequest...), extra...)
}

func TestChatGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"demo.openai.json", []string{"demo", "--format", "openai"}},
		{"demo.anthropic.json", []string{"demo", "--format", "anthropic"}},
		{"tools.openai.json", toolsArgs("--format", "openai")},
		{"tools.anthropic.json", toolsArgs("--format", "anthropic")},
		// A budget that drops a group whole; the report explains it (in the
		// text format's counting).
		{"tools-500.anthropic.json", toolsArgs("--format", "anthropic", "--budget", "500")},
		{"tools-500.report.txt", toolsArgs("--format", "report", "--budget", "500")},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			if code != exitOK {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			golden(t, tt.golden, out)
			if !strings.HasSuffix(tt.golden, ".json") {
				return
			}
			check := chatcheck.OpenAI
			if strings.Contains(tt.golden, "anthropic") {
				check = chatcheck.Anthropic
			}
			if err := check([]byte(out), chatcheck.Options{}); err != nil {
				t.Error(err)
			}
		})
	}
}

// toolsEngine returns the tools fixture's template and an engine holding
// its memories.
func toolsEngine(t *testing.T) (*template.Template, *contextasm.Engine) {
	t.Helper()
	tpl, err := template.LoadFile(toolsTemplate)
	if err != nil {
		t.Fatal(err)
	}
	decls, err := declare.LoadFile(toolsMemories)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Declare(decls...); err != nil {
		t.Fatal(err)
	}
	return tpl, eng
}

// The CLI prints the body the library's Result encodes to, indented.
func TestRenderChatIsTheLibrarysBody(t *testing.T) {
	tpl, eng := toolsEngine(t)
	for _, f := range []chat.Format{chat.FormatOpenAI, chat.FormatAnthropic} {
		res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
			SessionID: "sess-4711", UserID: "u-ana", Format: f})
		if err != nil {
			t.Fatal(err)
		}
		body, err := chat.Encode(f, res.Messages())
		if err != nil {
			t.Fatal(err)
		}
		_, out, _ := runCLI(t, toolsArgs("--format", f.String())...)
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(out)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(compact.Bytes(), body) {
			t.Errorf("%v: the CLI's body differs from the library's:\n%s\n%s", f, compact.Bytes(), body)
		}
	}
}

// Calls and results may sit in different files; a result without its call
// is refused with its file, line, request_id and field.
func TestRenderToolCallsAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	calls, results := filepath.Join(dir, "calls.jsonl"), filepath.Join(dir, "results.jsonl")
	write := func(name, s string) {
		if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(calls, `{"request_id":"q","memory_type":"history","scope":"session","session_id":"s","content":"Rate?","last_modified":"2026-11-30T08:00:00Z"}
{"request_id":"a","memory_type":"history","role":"assistant","scope":"session","session_id":"s","content":"","tool_calls":[{"id":"c1","name":"rate","arguments":"{}"}],"last_modified":"2026-11-30T08:00:01Z"}
`)
	write(results, `# the tool's answer, declared apart
{"request_id":"r","memory_type":"history","role":"tool","tool_call_id":"c1","scope":"session","session_id":"s","content":"6.9%","last_modified":"2026-11-30T08:00:02Z"}
`)
	args := []string{"render", "-t", toolsTemplate, "--now", "2026-11-30T09:00:00Z", "--session", "s", "--format", "openai", "-m", results, "-m", calls}
	code, out, stderr := runCLI(t, args...)
	if code != exitOK || !strings.Contains(out, `"tool_call_id": "c1"`) {
		t.Fatalf("exit %d, stderr %s\n%s", code, stderr, out)
	}
	code, _, stderr = runCLI(t, "validate", "-m", results)
	if code != exitUsage || !strings.Contains(stderr, results+`:2: request_id "r": tool_call_id: names call "c1", which no assistant block of session "s" declares`) {
		t.Errorf("a result without its call: exit %d, stderr %q", code, stderr)
	}
}

// askModel sends the context of one model call to a Messages API endpoint.
func askModel(ctx context.Context, eng *contextasm.Engine, tpl *template.Template, now time.Time, endpoint string) (*http.Response, error) {
	res, err := eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: now, SessionID: "sess-4711", Format: chat.FormatAnthropic})
	if err != nil {
		return nil, err
	}
	// res.Body() is {"system":[...],"messages":[...]}, encoded once by the
	// assembly: no tool result without its call.
	body := append([]byte(`{"model":"claude-sonnet-4-5","max_tokens":1024,`), res.Body()[1:]...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("content-type", "application/json") // and the API key and version headers
	return http.DefaultClient.Do(req)
}

// The README's chat snippet is askModel, and it sends a body the API's
// rules accept (to a local server that checks it).
func TestREADMEChatSnippet(t *testing.T) {
	readme := readDoc(t, "README.md")
	src, err := os.ReadFile("chat_test.go")
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(src, []byte("// askModel sends"))
	end := start + bytes.Index(src[start:], []byte("\n}\n")) + 2
	if got := codeBlockAfter(t, readme, "func askModel("); strings.TrimSpace(got) != strings.TrimSpace(string(src[start:end])) {
		t.Errorf("README.md's chat snippet differs from askModel in cmd/contextasm/chat_test.go; change both together.\nREADME:\n%s", got)
	}

	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	tpl, eng := toolsEngine(t)
	resp, err := askModel(context.Background(), eng, tpl, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var body map[string]json.RawMessage
	if err := json.Unmarshal(got, &body); err != nil || string(body["model"]) != `"claude-sonnet-4-5"` {
		t.Fatalf("the server got %s (%v)", got, err)
	}
	delete(body, "model")
	delete(body, "max_tokens")
	rest, _ := json.Marshal(body)
	if err := chatcheck.Anthropic(rest, chatcheck.Options{}); err != nil {
		t.Error(err)
	}
}
