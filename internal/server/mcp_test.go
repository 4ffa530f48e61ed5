package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds an API key to every request of an MCP client.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// connect opens an MCP session with the SDK's client over streamable
// HTTP on loopback.
func connect(t *testing.T, ts *testServer, key string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	return c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}, MaxRetries: -1}, nil)
}

// TestMCP: serve --mcp's tool and prompt through the official SDK's
// client, on a real loopback connection: the context of a session with
// the key's tenant and roles, an assembly id the HTTP API takes for the
// feedback, and a key's authority that holds as it does over HTTP.
func TestMCP(t *testing.T) {
	ts := start(t, Config{MCP: true})
	ts.declareFile(keyAcmeAll)
	ts.must(200, "POST", "/v1/declarations", keyBeta, `{"request_id":"beta-only","memory_type":"context","scope":"global","content":"Beta's own note."}`)
	cs, err := connect(t, ts, keyAcmeSupport)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != mcpTool {
		t.Fatalf("tools: %v %v", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpTool, Arguments: map[string]any{"template": "chat", "session": "s1", "user": "u-1", "now": testNow}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	for _, want := range []string{"[MODEL_CONTEXT_PROTOCOL", "Refunds above EUR 100", "Customer 42", "broken"} {
		if !strings.Contains(text, want) {
			t.Errorf("the tool's context lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Auditors see") || strings.Contains(text, "Beta's own") {
		t.Errorf("the tool's context shows what the key may not see:\n%s", text)
	}
	var out mcpResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || !strings.HasPrefix(out.AssemblyID, "asm_") {
		t.Fatalf("structured result %s: %v", b, err)
	}
	fb := ts.must(200, "POST", "/v1/feedback", keyAcmeSupport, map[string]any{"assembly_id": out.AssemblyID, "response": `<memory_ref id="cust-42"/>`})
	if len(fb.body["trust_changes"].([]any)) != 1 {
		t.Errorf("feedback for the tool's assembly: %s", fb.raw)
	}
	// Another tenant's key does not reach the assembly.
	ts.must(404, "GET", "/v1/assemblies/"+out.AssemblyID, keyBeta, nil)

	// A query, and the host's scores: the assembly is about them.
	for _, c := range []struct {
		args map[string]any
		from string
	}{
		{map[string]any{"query": "refund policy"}, "request"},
		{map[string]any{"relevance": map[string]any{"doc-policy": 0.8}}, "host"},
	} {
		args := map[string]any{"template": "chat", "session": "s1", "user": "u-1", "now": testNow}
		for k, v := range c.args {
			args[k] = v
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpTool, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("call with %v: %v %+v", c.args, err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var out mcpResult
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		d := ts.must(200, "GET", "/v1/assemblies/"+out.AssemblyID, keyAcmeSupport, nil)
		if q, _ := d.body["dump"].(map[string]any)["query"].(map[string]any); q["from"] != c.from {
			t.Errorf("the tool with %v: the dump's query is %v, want from %s", c.args, q, c.from)
		}
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpTool, Arguments: map[string]any{"template": "chat", "relevance": map[string]any{"doc-policy": 2}}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "relevance of \"doc-policy\"") {
		t.Errorf("a score above 1: %v %+v", err, res)
	}

	// A chat format's body, as JSON text.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpTool, Arguments: map[string]any{"template": "chat", "session": "s1", "format": "openai", "now": testNow}})
	if err != nil || res.IsError || !json.Valid([]byte(res.Content[0].(*mcp.TextContent).Text)) {
		t.Fatalf("openai: %v %+v", err, res)
	}

	// A role the key lacks: the tool fails, naming it.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpTool, Arguments: map[string]any{"template": "chat", "roles": []string{"auditor"}}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, codeRoleNotAllowed) {
		t.Errorf("a role the key lacks: %v %+v", err, res)
	}

	// The prompt.
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpPrompt, Arguments: map[string]string{"template": "chat", "session": "s1"}})
	if err != nil || len(p.Messages) != 1 || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "Refund policy") {
		t.Fatalf("prompt: %v %+v", err, p)
	}

	// No key, or a wrong one: no session at all.
	for _, key := range []string{"", "wrong-key-0123456789"} {
		if cs, err := connect(t, ts, key); err == nil {
			cs.Close()
			t.Errorf("key %q: connected", key)
		}
	}
}
