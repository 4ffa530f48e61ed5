package chatcheck

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/problems.golden")

// bodies are request bodies that keep or break each rule of each API,
// alone and together.
var bodies = []struct {
	api, name, body string
}{
	{"openai", "ok", `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":"a"}]}`},
	{"openai", "not an object", `[1]`},
	{"openai", "no messages", `{"messages":[]}`},
	{"openai", "null messages", `{"messages":null}`},
	{"openai", "extra top key", `{"messages":[{"role":"user","content":"u"}],"model":"x"}`},
	{"openai", "unknown role", `{"messages":[{"role":"robot","content":"u"}]}`},
	{"openai", "empty user content", `{"messages":[{"role":"user","content":""}]}`},
	{"openai", "user content not a string", `{"messages":[{"role":"user","content":[{"type":"text"}]}]}`},
	{"openai", "extra user key", `{"messages":[{"role":"user","content":"u","tool_calls":[]}]}`},
	{"openai", "assistant without content or calls", `{"messages":[{"role":"assistant"}]}`},
	{"openai", "assistant null content and calls", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`},
	{"openai", "empty tool calls", `{"messages":[{"role":"assistant","tool_calls":[]}]}`},
	{"openai", "bad call", `{"messages":[{"role":"assistant","tool_calls":[{"id":"bad id!","type":"fn","function":{"name":"a b","arguments":"[1]"}}]}]}`},
	{"openai", "call id too long", `{"messages":[{"role":"assistant","tool_calls":[{"id":"` + strings.Repeat("x", 41) + `","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"` + strings.Repeat("x", 41) + `","content":"r"}]}`},
	{"openai", "duplicate call", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`},
	{"openai", "unanswered call", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"user","content":"u"}]}`},
	{"openai", "orphan tool", `{"messages":[{"role":"user","content":"u"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`},
	{"openai", "tool answers another", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c9","content":"r"}]}`},
	{"openai", "tool twice", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`},
	{"openai", "tool missing fields", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool"}]}`},
	{"openai", "assistant not an object", `{"messages":["x"]}`},
	{"anthropic", "ok", `{"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"u"},{"role":"assistant","content":[{"type":"text","text":"a"}]}]}`},
	{"anthropic", "string system", `{"system":"s","messages":[{"role":"user","content":"u"}]}`},
	{"anthropic", "bad system", `{"system":[{"type":"image","text":" "},{"type":"text","text":"t","cache_control":{"type":"persistent","x":1}}],"messages":[{"role":"user","content":"u"}]}`},
	{"anthropic", "not an object", `"x"`},
	{"anthropic", "no messages", `{"messages":[]}`},
	{"anthropic", "first is assistant", `{"messages":[{"role":"assistant","content":"a"}]}`},
	{"anthropic", "bad role", `{"messages":[{"role":"system","content":"a"}]}`},
	{"anthropic", "no alternation", `{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`},
	{"anthropic", "blank content", `{"messages":[{"role":"user","content":"  "}]}`},
	{"anthropic", "empty block list", `{"messages":[{"role":"user","content":[]}]}`},
	{"anthropic", "blank text block", `{"messages":[{"role":"user","content":[{"type":"text","text":" \n"}]}]}`},
	{"anthropic", "unknown block", `{"messages":[{"role":"user","content":[{"type":"image"}]}]}`},
	{"anthropic", "tool use ok", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":[{"type":"text","text":"let me"},{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"},{"type":"text","text":"ok"}]}]}`},
	{"anthropic", "tool use in user", `{"messages":[{"role":"user","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]}]}`},
	{"anthropic", "bad tool use", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":[{"type":"tool_use","id":"a b","name":"bad name","input":[]}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a b"}]}]}`},
	{"anthropic", "duplicate tool use", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}},{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]}]}`},
	{"anthropic", "unanswered tool use", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":"no result"}]}`},
	{"anthropic", "last tool use unanswered", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]}]}`},
	{"anthropic", "result in assistant", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"t1"}]}]}`},
	{"anthropic", "result after text", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"text","text":"first"},{"type":"tool_result","tool_use_id":"t1"}]}]}`},
	{"anthropic", "unexpected result", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t9","content":[{"type":"text","text":"r"}]}]}]}`},
	{"anthropic", "result twice", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"},{"type":"tool_result","tool_use_id":"t1","content":5}]}]}`},
	{"anthropic", "trailing white space", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":"a "}]}`},
	{"anthropic", "trailing white space in block", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":[{"type":"text","text":"a\n"}]}]}`},
	{"anthropic", "five breakpoints", `{"system":[{"type":"text","text":"1","cache_control":{"type":"ephemeral"}},{"type":"text","text":"2","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"3","cache_control":{"type":"ephemeral"}},{"type":"text","text":"4","cache_control":{"type":"ephemeral"}},{"type":"text","text":"5","cache_control":{"type":"ephemeral"}}]}]}`},
	{"anthropic", "message not an object", `{"messages":[1]}`},
	{"anthropic", "thinking ok", `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"redacted_thinking","data":"d"},{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}]}`},
	{"anthropic", "bad thinking", `{"messages":[{"role":"user","content":[{"type":"thinking","thinking":"t","signature":""}]},{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"redacted_thinking","data":"","cache_control":{"type":"ephemeral"}},{"type":"thinking","signature":"s","x":1}]}]}`},
	{"anthropic", "ttl ok", `{"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1h"}},{"type":"text","text":"t","cache_control":{"type":"ephemeral","ttl":"5m"}}],"messages":[{"role":"user","content":[{"type":"text","text":"u","cache_control":{"type":"ephemeral"}}]}]}`},
	{"anthropic", "1h after 5m", `{"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}},{"type":"text","text":"t","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":[{"type":"text","text":"u","cache_control":{"type":"ephemeral","ttl":"2h"}}]}]}`},
	{"responses", "ok", `{"instructions":"s","input":[{"type":"message","role":"user","content":"u"},{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"x"}],"encrypted_content":"e"},{"type":"message","role":"assistant","content":"a"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"r"}]}`},
	{"responses", "no input", `{"input":[]}`},
	{"responses", "not an object", `[]`},
	{"responses", "bad top", `{"instructions":"","input":null,"model":"x"}`},
	{"responses", "unknown item", `{"input":[{"type":"image"},1]}`},
	{"responses", "bad message", `{"input":[{"type":"message","role":"tool","content":""},{"type":"message","role":"user","content":[],"name":"x"}]}`},
	{"responses", "bad call", `{"input":[{"type":"function_call","call_id":"bad id","name":"a.b","arguments":"[]"},{"type":"function_call_output","call_id":"bad id","output":"r"}]}`},
	{"responses", "call id too long", `{"input":[{"type":"function_call","call_id":"` + strings.Repeat("x", 41) + `","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"` + strings.Repeat("x", 41) + `","output":"r"}]}`},
	{"responses", "duplicate call", `{"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"r"}]}`},
	{"responses", "unanswered call", `{"input":[{"type":"message","role":"user","content":"u"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]}`},
	{"responses", "output before call", `{"input":[{"type":"function_call_output","call_id":"c1","output":"r"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]}`},
	{"responses", "output twice", `{"input":[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"r"},{"type":"function_call_output","call_id":"c1","output":5}]}`},
	{"responses", "reasoning alone", `{"input":[{"type":"message","role":"user","content":"u"},{"type":"reasoning","id":"rs_1","summary":[]}]}`},
	{"responses", "reasoning before a user turn", `{"input":[{"type":"reasoning","id":"","summary":[{"type":"text"}],"encrypted_content":1,"x":2},{"type":"message","role":"user","content":"u"}]}`},
}

var checks = map[string]func([]byte, Options) error{"openai": OpenAI, "anthropic": Anthropic, "responses": Responses}

// TestProblems checks every body's problems against the golden file: the
// rules, and the words each broken one is reported in.
func TestProblems(t *testing.T) {
	var b strings.Builder
	for _, c := range bodies {
		check := checks[c.api]
		for _, opt := range []Options{{}, {AllowNoMessages: true}} {
			err := check([]byte(c.body), opt)
			msg := "ok"
			if err != nil {
				msg = err.Error()
			}
			fmt.Fprintf(&b, "%s / %s / allow-empty %v:\n  %s\n", c.api, c.name, opt.AllowNoMessages, strings.ReplaceAll(msg, "; ", ";\n  "))
		}
	}
	path := filepath.Join("testdata", "problems.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("problems differ from %s (go test -update to rewrite it):\n%s", path, b.String())
	}
}

// FuzzCheck holds the checks to never panicking on any body, and to
// reporting a body they accept the same way twice.
func FuzzCheck(f *testing.F) {
	for _, c := range bodies {
		f.Add(c.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, check := range []func([]byte, Options) error{OpenAI, Anthropic, Responses} {
			a, b := check([]byte(body), Options{}), check([]byte(body), Options{})
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("%q: %v, then %v", body, a, b)
			}
		}
	})
}
