package openaiadapter_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/openai/openai-go/v3"

	openaiadapter "github.com/contextasm/contextasm/adapters/openai"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// TestParamsTools: the tools a result carries reach the SDK's parameters
// as chat.OpenAI writes them, in its order, before the host's own.
func TestParamsTools(t *testing.T) {
	eng, _ := setup(t)
	if err := eng.DeclareTools(
		declare.Tool{Name: "get_rate", Description: "Today's rate.", InputSchema: json.RawMessage(`{"type":"object","properties":{"product":{"type":"string","enum":["car","home"]}},"required":["product"]}`)},
		declare.Tool{Name: "quote", InputSchema: json.RawMessage(`{"type":"object"}`)},
	); err != nil {
		t.Fatal(err)
	}
	tpl, err := template.Parse([]byte(tplSrc), "template.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, SessionID: "s1", Format: chat.FormatOpenAI})
	if err != nil {
		t.Fatal(err)
	}
	want, err := chat.OpenAI(res.Messages())
	if err != nil {
		t.Fatal(err)
	}
	p, err := openaiadapter.Params(res, openai.ChatCompletionNewParams{Model: openai.ChatModelGPT5_5,
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "host_tool"})}}, openaiadapter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Tools); n != 3 || p.Tools[2].GetFunction().Name != "host_tool" {
		t.Fatalf("%d tools: want the result's two, then the host's", len(p.Tools))
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
	if len(exp.Tools) != 2 || !reflect.DeepEqual(got.Tools, exp.Tools) {
		t.Errorf("tools\n%v\nwant\n%v", got.Tools, exp.Tools)
	}
}
