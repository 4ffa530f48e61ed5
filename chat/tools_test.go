package chat_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/internal/chatcheck"
	"github.com/contextasm/contextasm/internal/goldenfile"
)

func loanTools() []chat.Tool {
	return []chat.Tool{
		{Name: "get_credit_file", Description: "The applicant's credit file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"applicant":{"type":"string"}}}`)},
		{Name: "get_rate", Description: "Today's rate for a loan product.", InputSchema: json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {\"product\": {\"type\": \"string\"}, \"term_months\": {\"type\": \"integer\"}}\n}"), CacheBreakpoint: true},
	}
}

func TestEncodeToolsGolden(t *testing.T) {
	for _, f := range []chat.Format{chat.FormatOpenAI, chat.FormatAnthropic} {
		t.Run(f.String(), func(t *testing.T) {
			c := loan()
			c.Messages[4].CacheBreakpoint = false // room for the tools' mark
			c.Tools = loanTools()
			body, err := chat.Encode(f, c)
			if err != nil {
				t.Fatal(err)
			}
			wire(t, f, body, chatcheck.Options{})
			if bytes.Contains(body, []byte("\n  \"type\"")) {
				t.Error("a schema's white space reached the body")
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, body, "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			goldenfile.Check(t, "loan-tools."+f.String()+".json", pretty.String(), *update)
		})
	}
}

func TestResponsesTools(t *testing.T) {
	got, err := chat.ResponsesTools(loanTools())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"function","name":"get_credit_file","description":"The applicant's credit file.","parameters":{"type":"object","properties":{"applicant":{"type":"string"}}}},` +
		`{"type":"function","name":"get_rate","description":"Today's rate for a loan product.","parameters":{"type":"object","properties":{"product":{"type":"string"},"term_months":{"type":"integer"}}}}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if _, err := chat.ResponsesTools([]chat.Tool{{Name: "x y", InputSchema: json.RawMessage(`{"type":"object"}`)}}); !errors.Is(err, chat.ErrInvalid) {
		t.Errorf("a bad name: got %v", err)
	}
}

func TestToolsRefused(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	for _, tc := range []struct {
		name  string
		tools []chat.Tool
		f     chat.Format
		want  string
	}{
		{"bad name", []chat.Tool{{Name: "a.b", InputSchema: obj}}, chat.FormatOpenAI, "tools[0].name"},
		{"twice", []chat.Tool{{Name: "a", InputSchema: obj}, {Name: "a", InputSchema: obj}}, chat.FormatAnthropic, `tools[1].name: "a" is offered twice`},
		{"schema", []chat.Tool{{Name: "a", InputSchema: json.RawMessage(`{"type":"array"}`)}}, chat.FormatOpenAI, "tools[0].input_schema"},
		{"no schema", []chat.Tool{{Name: "a"}}, chat.FormatAnthropic, "tools[0].input_schema"},
		{"five marks", []chat.Tool{{Name: "a", InputSchema: obj, CacheBreakpoint: true}}, chat.FormatAnthropic, "5 cache breakpoints"},
	} {
		c := loan()
		c.Messages[0].CacheBreakpoint, c.System[1].CacheBreakpoint = true, true
		c.Tools = tc.tools
		_, err := chat.Encode(tc.f, c)
		if !errors.Is(err, chat.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func ExampleResponsesTools() {
	tools, err := chat.ResponsesTools([]chat.Tool{{Name: "get_rate", Description: "Today's rate.", InputSchema: json.RawMessage(`{ "type": "object" }`)}})
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(tools)
	fmt.Println(string(b))
	// Output: [{"type":"function","name":"get_rate","description":"Today's rate.","parameters":{"type":"object"}}]
}
