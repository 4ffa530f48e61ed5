package mcpsource_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare/mcpsource"
	"github.com/contextasm/contextasm/template"
)

// A host collects an MCP server's resources into its engine; assembly
// reads what has been collected. (A real host sets Command or URL; this
// server runs in-process.)
func Example() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "rates", Version: "1"}, nil)
	srv.AddResource(&mcp.Resource{URI: "rates://today", Name: "today", MIMEType: "text/plain",
		Annotations: &mcp.Annotations{Priority: 0.9}},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "rates://today", Text: "Base rate: 3.25%."}}}, nil
		})
	inMemory := func() (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		_, err := srv.Connect(context.Background(), st, nil)
		return ct, err
	}

	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		panic(err)
	}
	col, err := mcpsource.Start(eng, mcpsource.Config{Servers: []mcpsource.Server{{Name: "rates", Transport: inMemory}}})
	if err != nil {
		panic(err)
	}
	defer col.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = col.WaitSynced(ctx)

	tpl, err := template.Parse([]byte(`{"budget": 100, "sections": [{"name": "SOURCES", "priority": 1,
		"memory_types": ["external"], "max_tokens": 80, "render": "<source id=\"{request_id}\">{content}</source>"}]}`), "t.json")
	if err != nil {
		panic(err)
	}
	res, err := eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)})
	if err != nil {
		panic(err)
	}
	_, body, _ := strings.Cut(res.Text, "\n") // after the header
	fmt.Println(strings.TrimSpace(body))
	fmt.Println(col.Status()[0].State)
	// Output:
	// <source id="mcp:rates:rates://today">Base rate: 3.25%.</source>
	// ready
}
