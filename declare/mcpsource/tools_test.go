package mcpsource_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/declare/mcpsource"
	"github.com/contextasm/contextasm/internal/chatcheck"
	"github.com/contextasm/contextasm/template"
)

// recSink takes tools too: it is the Engine's.
func (s *recSink) DeclareTools(tools ...declare.Tool) error { return s.eng.DeclareTools(tools...) }
func (s *recSink) ForgetTools(names ...string) int          { return s.eng.ForgetTools(names...) }

func toolNames(e *contextasm.Engine) []string {
	var names []string
	for _, t := range e.Tools() {
		names = append(names, t.Name)
	}
	return names
}

const toolsTpl = `{"budget": 20000, "tools": {"max_tokens": 15000},
  "sections": [{"name": "DOCS", "priority": 1, "memory_types": ["external", "history"], "max_tokens": 4000, "render": "{content}"}]}`

// everything returns the command that starts the MCP reference server
// over stdio, skipping the test when it is not installed (npm ci in
// testdata/everything), and failing it in CI.
func everything(t *testing.T) []string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("testdata", "everything", "node_modules", ".bin", "mcp-server-everything"))
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the MCP reference server is missing in CI (npm ci in declare/mcpsource/testdata/everything): %v", err)
		}
		t.Skipf("SKIP: the MCP reference server is not installed (run `npm ci` in declare/mcpsource/testdata/everything): %v", err)
	}
	return []string{bin, "stdio"}
}

// TestToolsFromEverything: the reference server's tools reach the OpenAI,
// Anthropic and Responses bodies, named with its prefix, untrusted; a
// request without the server's role gets none of the restricted ones.
func TestToolsFromEverything(t *testing.T) {
	cmd := everything(t)
	sink := newSink(t)
	defer sink.eng.Close()
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{
		Name: "everything", Command: cmd, Tools: true,
		Roles:     []string{"ops"},
		ToolRoles: map[string][]string{"echo": nil}, // echo for everyone
	})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the server's tools", func() bool { return len(sink.eng.Tools()) > 3 })
	tools := sink.eng.Tools()
	t.Logf("%d tools from the reference server", len(tools))
	for _, tl := range tools {
		if !strings.HasPrefix(tl.Name, "everything__") || tl.Source != "mcp:everything" || !tl.Untrusted {
			t.Errorf("tool %+v: want the server's prefix, source and untrusted", tl)
		}
	}
	tpl, err := template.Parse([]byte(toolsTpl), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, f := range []chat.Format{chat.FormatOpenAI, chat.FormatAnthropic} {
		for _, roles := range [][]string{{"ops"}, {"viewer"}} {
			res, err := sink.eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, Roles: roles, Format: f})
			if err != nil {
				t.Fatal(err)
			}
			conv := res.Messages()
			conv.Messages = append(conv.Messages, chat.Message{Role: chat.RoleUser, Content: "hi"})
			body, err := chat.Encode(f, conv)
			if err != nil {
				t.Fatal(err)
			}
			check := chatcheck.OpenAI
			if f == chat.FormatAnthropic {
				check = chatcheck.Anthropic
			}
			if err := check(body, chatcheck.Options{}); err != nil {
				t.Errorf("%v %v: %v", f, roles, err)
			}
			var names []string
			for _, k := range res.Tools.Kept {
				names = append(names, k.Name)
			}
			if roles[0] == "ops" {
				if len(names) != len(tools) || !strings.Contains(string(body), `"everything__echo"`) {
					t.Errorf("%v: ops gets %v of %d tools", f, names, len(tools))
				}
				continue
			}
			if !slices.Equal(names, []string{"everything__echo"}) || res.Tools.Hidden["role"] != len(tools)-1 {
				t.Errorf("%v: a viewer gets %v, %v hidden", f, names, res.Tools.Hidden)
			}
			if strings.Contains(string(body), "everything__get") {
				t.Errorf("%v: a restricted tool reached a viewer's body", f)
			}
		}
	}
	res, err := sink.eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, Roles: []string{"ops"}, Format: chat.FormatOpenAI})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := chat.ResponsesTools(res.Messages().Tools)
	if err != nil || len(rt) != len(tools) || rt[0].Type != "function" {
		t.Errorf("Responses tools: %d (%v)", len(rt), err)
	}
}

// TestToolsListChanged: a tool the server adds or removes is reflected
// after notifications/tools/list_changed (no periodic re-sync here), the
// list is read page by page, and bounded by MaxResources.
func TestToolsListChanged(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ServerOptions{PageSize: 2})
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	yes := true
	for _, n := range []string{"alpha", "beta", "gamma"} {
		srv.AddTool(&mcp.Tool{Name: n, Description: "Tool " + n + ".", InputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &yes}}, handler)
	}
	p := serve(srv)
	sink := newSink(t)
	defer sink.eng.Close()
	col := start(t, sink, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "t", Transport: p.transport, Tools: true, Trusted: true})}})
	if err := col.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "three tools over two pages", func() bool { return slices.Equal(toolNames(sink.eng), []string{"t__alpha", "t__beta", "t__gamma"}) })
	if tl := sink.eng.Tools()[0]; tl.Untrusted || !*tl.Annotations.ReadOnly || !*tl.Annotations.OpenWorld || tl.Destructive() {
		t.Errorf("hints or trust lost: %+v", tl)
	}
	srv.RemoveTools("beta")
	srv.AddTool(&mcp.Tool{Name: "delta", InputSchema: json.RawMessage(`{"type":"object"}`)}, handler)
	eventually(t, "the changed list", func() bool { return slices.Equal(toolNames(sink.eng), []string{"t__alpha", "t__delta", "t__gamma"}) })

	// Bounded like resources: MaxResources tools.
	sink2 := newSink(t)
	defer sink2.eng.Close()
	col2 := start(t, sink2, mcpsource.Config{Servers: []mcpsource.Server{fast(mcpsource.Server{Name: "t", Transport: p.transport, Tools: true, MaxResources: 2})}})
	if err := col2.WaitSynced(bounded(t)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "two tools", func() bool { return len(sink2.eng.Tools()) == 2 })

	// A server that goes away takes its tools with it.
	p.setRefuse(true)
	p.drop()
	eventually(t, "the tools forgotten", func() bool { return len(sink.eng.Tools()) == 0 })
}
