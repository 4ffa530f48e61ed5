package toolsel

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/truncate"
)

// OpenAI's published rule for function definitions (the OpenAI Cookbook's
// "How to count tokens with tiktoken", num_tokens_for_tools): per function
// funcInit and the count of "name:description" (a final '.' dropped);
// with parameters propInit, and per top-level property propKey and the
// count of "name:type:description", plus for an enum enumInit and per
// item enumItem and its count; funcEnd once for the list. The constants
// are the gpt-4o family's (o200k_base) and gpt-4's (cl100k_base, whose
// funcInit is 10).
const (
	openaiFuncInit      = 7
	openaiFuncInitCL100 = 10
	openaiPropInit      = 3
	openaiPropKey       = 3
	openaiEnumInit      = -3
	openaiEnumItem      = 3
	openaiFuncEnd       = 12
)

// AnthropicToolSystemPrompt is the tool-use system prompt Anthropic adds
// to a request with tools and tool_choice auto (or none), as its pricing
// page lists it for current models (346 tokens; 313 for any or tool).
// Anthropic publishes no rule for the definitions themselves: they count
// as their JSON, with the template's encoding, an estimate.
const AnthropicToolSystemPrompt = 346

// rule is a format's way of counting tools.
type rule struct {
	name   string
	fixed  int  // once for a request with tools
	approx bool // no exact rule for this format and encoding
	openai bool
	init   int
}

func ruleFor(f chat.Format, encoding string) rule {
	if f == chat.FormatAnthropic {
		return rule{name: "anthropic-tools", fixed: AnthropicToolSystemPrompt, approx: true}
	}
	r := rule{name: "openai-functions", fixed: openaiFuncEnd, openai: true, init: openaiFuncInit}
	switch encoding {
	case "o200k_base":
	case "cl100k_base":
		r.init = openaiFuncInitCL100
	default:
		r.approx = true // the constants are measured for OpenAI's own encodings
	}
	return r
}

// count returns t's tokens under r, and whether the count is approximate
// for this tool (a schema the published rule does not cover).
func (r rule) count(t *declare.Tool, props []string, c truncate.Counter) (int, bool) {
	if !r.openai {
		return c.Count(string(AnthropicTool(t))), true
	}
	n := r.init + c.Count(t.Name+":"+strings.TrimSuffix(t.Description, "."))
	if len(props) == 0 {
		return n, false
	}
	var schema struct {
		Properties map[string]map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(t.InputSchema, &schema) != nil {
		return n + c.Count(string(t.InputSchema)), true
	}
	approx := false
	n += openaiPropInit
	for _, key := range props {
		p := schema.Properties[key]
		n += openaiPropKey
		var typ, desc string
		if raw, ok := p["type"]; ok && json.Unmarshal(raw, &typ) != nil {
			typ, approx = compact(raw), true // ["string","null"] and the like
		}
		_ = json.Unmarshal(p["description"], &desc)
		if raw, ok := p["enum"]; ok {
			var items []json.RawMessage
			_ = json.Unmarshal(raw, &items)
			n += openaiEnumInit
			for _, it := range items {
				var s string
				if json.Unmarshal(it, &s) != nil {
					s, approx = compact(it), true
				}
				n += openaiEnumItem + c.Count(s)
			}
		}
		// Nested schemas are beyond the published rule: counted as their
		// JSON, an estimate.
		for _, k := range [...]string{"properties", "items", "anyOf", "oneOf", "allOf"} {
			if raw, ok := p[k]; ok {
				n += c.Count(compact(raw))
				approx = true
			}
		}
		n += c.Count(key + ":" + typ + ":" + strings.TrimSuffix(desc, "."))
	}
	return n, approx
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// AnthropicTool returns t as Anthropic's Messages API takes it, compact:
// {"name","description","input_schema"}.
func AnthropicTool(t *declare.Tool) []byte {
	b, _ := chat.AnthropicToolJSON(chat.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	return b
}
