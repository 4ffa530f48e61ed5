package anthropicadapter_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"

	anthropicadapter "github.com/contextasm/contextasm/adapters/anthropic"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// TestParamsTools: the tools a result carries reach the SDK's parameters
// as chat.Anthropic writes them, cache_control on the last, before the
// host's own.
func TestParamsTools(t *testing.T) {
	eng, _ := setup(t)
	if err := eng.DeclareTools(
		declare.Tool{Name: "get_rate", Description: "Today's rate.", InputSchema: json.RawMessage(`{"type":"object","properties":{"product":{"type":"string"}}}`)},
		declare.Tool{Name: "quote", InputSchema: json.RawMessage(`{"type":"object"}`)},
	); err != nil {
		t.Fatal(err)
	}
	tpl, err := template.Parse([]byte(tplSrc), "template.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, SessionID: "s1", Format: chat.FormatAnthropic})
	if err != nil {
		t.Fatal(err)
	}
	want, err := chat.Anthropic(res.Messages())
	if err != nil {
		t.Fatal(err)
	}
	host := anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "host_tool", InputSchema: anthropic.ToolInputSchemaParam{}}}
	p, err := anthropicadapter.Params(res, anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 256, Tools: []anthropic.ToolUnionParam{host}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Tools); n != 3 || p.Tools[n-1].OfTool.Name != "host_tool" {
		t.Fatalf("tools %+v: want the result's two, then the host's", p.Tools)
	}
	p.Tools = p.Tools[:2]
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var got, exp struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &exp); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Tools, exp.Tools) || exp.Tools[1]["cache_control"] == nil {
		t.Errorf("tools\n%v\nwant\n%v", got.Tools, exp.Tools)
	}
}
