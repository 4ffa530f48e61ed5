package chatcheck

import (
	"strings"
	"testing"
)

func TestTools(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		api, tools, want string // want "" for accepted
	}{
		{"openai", `[{"type":"function","function":{"name":"get_rate","description":"d","parameters":{"type":"object"}}}]`, ""},
		{"openai", `[{"type":"tool","function":{"name":"a","parameters":{"type":"object"}}}]`, `tools[0].type: "tool"`},
		{"openai", `[{"type":"function","function":{"name":"a b","parameters":{"type":"object"}}}]`, `tools[0].function.name: "a b" is not`},
		{"openai", `[{"type":"function","function":{"name":"a","parameters":[]}}]`, `tools[0].function.parameters: not an object`},
		{"openai", `[{"type":"function","function":{"name":"a","parameters":{"type":"string"}}}]`, `parameters.type: want "object"`},
		{"openai", `[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}},{"type":"function","function":{"name":"a","parameters":{"type":"object"}}}]`, `tools[1].function.name: "a" given twice`},
		{"anthropic", `[{"name":"a","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}]`, ""},
		{"anthropic", `[{"name":"a","parameters":{"type":"object"}}]`, `key "parameters" is not allowed`},
		{"anthropic", `[{"name":"` + strings.Repeat("x", 65) + `","input_schema":{"type":"object"}}]`, `is not 1 to 64`},
		{"anthropic", `[{"name":"a","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}},{"name":"b","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}},{"name":"c","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}},{"name":"d","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}},{"name":"e","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}]`, `5 blocks with cache_control`},
	} {
		check := OpenAI
		if tc.api == "anthropic" {
			check = Anthropic
		}
		err := check([]byte(`{`+msgs+`,"tools":`+tc.tools+`}`), Options{})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %s: %v", tc.api, tc.tools, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %s: got %v, want %q", tc.api, tc.tools, err, tc.want)
		}
	}
}
