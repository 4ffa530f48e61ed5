package chat_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/internal/chatcheck"
	"github.com/contextasm/contextasm/internal/goldenfile"
)

var update = flag.Bool("update", false, "rewrite golden files")

// loan is a conversation with everything the encoders write: a system
// prompt in two parts (the first ends at a cache breakpoint), parallel tool
// calls answered out of order, an assistant turn with text and a call, a
// call without text, and a user turn after the results.
func loan() chat.Conversation {
	return chat.Conversation{
		System: []chat.SystemPart{
			{Text: "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:92b7542d4335730d]\n<rule id=\"apr\">Quote the APR & the term.</rule>\n", CacheBreakpoint: true},
			{Text: "<context id=\"app\">Applicant: u-ana.</context>\n"},
		},
		Messages: []chat.Message{
			{Role: chat.RoleUser, Content: "What would I pay for EUR 18,000 over 60 months?", BlockIDs: []string{"t1-user"}},
			{Role: chat.RoleAssistant, Content: "Let me look that up.", BlockIDs: []string{"t1-agent"}, ToolCalls: []chat.ToolCall{
				{ID: "call_rate", Name: "get_rate", Arguments: `{"product": "car-loan", "term_months": 60}`},
				{ID: "call_credit", Name: "get_credit_file", Arguments: `{"applicant":"u-ana"}`},
			}},
			{Role: chat.RoleTool, ToolCallID: "call_credit", Content: `{"score":712}`, BlockIDs: []string{"t1-credit"}},
			{Role: chat.RoleTool, ToolCallID: "call_rate", Content: `{"apr":6.9}`, BlockIDs: []string{"t1-rate"}},
			{Role: chat.RoleUser, Content: "And over 48 months?", BlockIDs: []string{"t2-user"}, CacheBreakpoint: true},
			{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "call_rate_48", Name: "get_rate", Arguments: "{}"}}, BlockIDs: []string{"t2-call"}},
			{Role: chat.RoleTool, ToolCallID: "call_rate_48", Content: "6.7", BlockIDs: []string{"t2-rate"}},
			{Role: chat.RoleAssistant, Content: "At 6.7% APR: EUR 428 a month.\n", BlockIDs: []string{"t2-answer"}},
		},
	}
}

// formats are every format, in order.
var formats = []chat.Format{chat.FormatOpenAI, chat.FormatAnthropic, chat.FormatResponses}

// thinking, redacted and rs are reasoning items of the three types, as
// their providers return them.
var (
	thinking = reasoning(`{"type": "thinking", "thinking": "The 48-month rate is needed; call get_rate.", "signature": "EqQBCkYIARgCIkC3"}`)
	redacted = reasoning(`{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}`)
	rs       = reasoning(`{"type":"reasoning","id":"rs_68af","summary":[{"type":"summary_text","text":"Look up the rate."}],"encrypted_content":"gAAAAABo"}`)
)

func reasoning(s string) chat.Reasoning {
	var r chat.Reasoning
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		panic(err)
	}
	return r
}

// toolTurn is loan's conversation up to a tool call the model is to go on
// from: the turn that made it carries reasoning of every type, its call id
// is one that Anthropic does not take as it is, and the cache lives an
// hour.
func toolTurn() chat.Conversation {
	c := loan()
	c.Messages = c.Messages[:len(c.Messages)-1]
	call := &c.Messages[len(c.Messages)-2]
	call.ToolCalls = []chat.ToolCall{{ID: "functions.get_rate:2", Name: "get_rate", Arguments: `{"term_months":48}`}}
	call.Reasoning = []chat.Reasoning{thinking, redacted, rs}
	c.Messages[len(c.Messages)-1].ToolCallID = "functions.get_rate:2"
	c.CacheTTL = chat.TTL1h
	return c
}

func TestEncodeGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    chat.Conversation
	}{{"loan", loan()}, {"tool-turn", toolTurn()}} {
		for _, f := range formats {
			t.Run(tt.name+"."+f.String(), func(t *testing.T) {
				body, err := chat.Encode(f, tt.c)
				if err != nil {
					t.Fatal(err)
				}
				wire(t, f, body, chatcheck.Options{})
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, body, "", "  "); err != nil {
					t.Fatal(err)
				}
				pretty.WriteByte('\n')
				goldenfile.Check(t, tt.name+"."+f.String()+".json", pretty.String(), *update)
			})
		}
	}
}

// wire checks a body with the independent checker of the APIs' rules.
func wire(t *testing.T, f chat.Format, body []byte, opt chatcheck.Options) {
	t.Helper()
	if err := wireErr(f, body, opt); err != nil {
		t.Fatalf("%v\nbody: %s", err, body)
	}
}

func wireErr(f chat.Format, body []byte, opt chatcheck.Options) error {
	switch f {
	case chat.FormatAnthropic:
		return chatcheck.Anthropic(body, opt)
	case chat.FormatResponses:
		return chatcheck.Responses(body, opt)
	}
	return chatcheck.OpenAI(body, opt)
}

func TestAnthropicMerges(t *testing.T) {
	body, err := chat.Anthropic(loan())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		System []struct {
			Text         string          `json:"text"`
			CacheControl json.RawMessage `json:"cache_control"`
		}
		Messages []struct {
			Role    string
			Content []struct {
				Type string `json:"type"`
			}
		}
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	roles := make([]string, len(got.Messages))
	for i, m := range got.Messages {
		roles[i] = fmt.Sprintf("%s:%d", m.Role, len(m.Content))
	}
	// user | assistant text+2 calls | 2 results+user text | call | result | answer
	if want := "user:1 assistant:3 user:3 assistant:1 user:1 assistant:1"; strings.Join(roles, " ") != want {
		t.Errorf("messages = %s, want %s", strings.Join(roles, " "), want)
	}
	if len(got.System) != 2 || string(got.System[0].CacheControl) != `{"type":"ephemeral"}` || got.System[1].CacheControl != nil {
		t.Errorf("system = %+v", got.System)
	}
	if !bytes.HasSuffix(body, []byte(`"text":"At 6.7% APR: EUR 428 a month."}]}]}`)) {
		t.Errorf("the final assistant text keeps its trailing white space: %s", body[len(body)-80:])
	}
	if bytes.Contains(body, []byte(`\u003c`)) || bytes.Contains(body, []byte(`\u0026`)) {
		t.Error("HTML escaping in the body")
	}
}

func TestOpenAIShape(t *testing.T) {
	c := loan()
	body, err := chat.OpenAI(c)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []map[string]json.RawMessage
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != len(c.Messages)+1 {
		t.Fatalf("%d messages, want the system message and %d", len(got.Messages), len(c.Messages))
	}
	var sys string
	_ = json.Unmarshal(got.Messages[0]["content"], &sys)
	if sys != c.SystemText() || string(got.Messages[0]["role"]) != `"system"` {
		t.Errorf("system message = %v", got.Messages[0])
	}
	if _, ok := got.Messages[6]["content"]; ok {
		t.Errorf("an assistant message with only calls writes content: %s", got.Messages[6]["content"])
	}
	if want := `[{"id":"call_rate_48","type":"function","function":{"name":"get_rate","arguments":"{}"}}]`; string(got.Messages[6]["tool_calls"]) != want {
		t.Errorf("tool_calls = %s, want %s", got.Messages[6]["tool_calls"], want)
	}
	// Without a system prompt there is no system message.
	c.System = nil
	body, _ = chat.OpenAI(c)
	if bytes.Contains(body, []byte(`"system"`)) {
		t.Errorf("a system message without a system prompt: %s", body)
	}
}

func TestCheck(t *testing.T) {
	user := func(s string) chat.Message { return chat.Message{Role: chat.RoleUser, Content: s} }
	asst := func(s string, ids ...string) chat.Message {
		m := chat.Message{Role: chat.RoleAssistant, Content: s}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: id, Name: "f", Arguments: "{}"})
		}
		return m
	}
	tool := func(id string) chat.Message { return chat.Message{Role: chat.RoleTool, ToolCallID: id, Content: "ok"} }
	bad := func(f func(*chat.Message)) chat.Message {
		m := asst("x", "c1")
		f(&m)
		return m
	}
	tests := []struct {
		name    string
		c       chat.Conversation
		openai  string // "" = valid; else the error contains it
		anthrop string
	}{
		{name: "empty conversation", c: chat.Conversation{}},
		{name: "system only", c: chat.Conversation{System: []chat.SystemPart{{Text: "s"}}}},
		{name: "a call and its result", c: chat.Conversation{Messages: []chat.Message{user("q"), asst("", "c1"), tool("c1")}}},
		{name: "parallel calls answered in any order", c: chat.Conversation{Messages: []chat.Message{user("q"), asst("", "c1", "c2"), tool("c2"), tool("c1"), user("more")}}},
		{name: "assistant first", c: chat.Conversation{Messages: []chat.Message{asst("hello")}},
			anthrop: "messages[0].role: the first message must be a user turn"},
		{name: "result without its call", c: chat.Conversation{Messages: []chat.Message{user("q"), tool("c1")}},
			openai: "messages[1]: tool result for call \"c1\" does not follow", anthrop: "does not follow"},
		{name: "result first", c: chat.Conversation{Messages: []chat.Message{tool("c1")}}, openai: "does not follow", anthrop: "does not follow"},
		{name: "call without its result", c: chat.Conversation{Messages: []chat.Message{user("q"), asst("", "c1", "c2"), tool("c1")}},
			openai: `messages[1]: calls ["c2"] are not answered`, anthrop: "not answered"},
		{name: "a user turn between call and result", c: chat.Conversation{Messages: []chat.Message{user("q"), asst("", "c1"), user("hm"), tool("c1")}},
			openai: "not answered", anthrop: "not answered"},
		{name: "result of another call", c: chat.Conversation{Messages: []chat.Message{user("q"), asst("", "c1"), tool("c9")}},
			openai: `messages[2].tool_call_id: answers "c9"`, anthrop: "answers"},
		{name: "a call answered twice", c: chat.Conversation{Messages: []chat.Message{user("q"), asst("", "c1", "c2"), tool("c1"), tool("c1")}},
			openai: "answers \"c1\", not a call of messages[1] still unanswered", anthrop: "still unanswered"},
		{name: "the same call id in two turns", c: chat.Conversation{Messages: []chat.Message{user("q"), asst("", "c1"), tool("c1"), asst("", "c1"), tool("c1")}},
			openai: "made twice", anthrop: "made twice"},
		{name: "bad call id", c: chat.Conversation{Messages: []chat.Message{user("q"), bad(func(m *chat.Message) { m.ToolCalls[0].ID = "c 1" })}},
			openai: "messages[1].tool_calls[0].id", anthrop: "tool_calls[0].id"},
		{name: "bad tool name", c: chat.Conversation{Messages: []chat.Message{user("q"), bad(func(m *chat.Message) { m.ToolCalls[0].Name = "a.b" })}},
			openai: "tool_calls[0].name", anthrop: "tool_calls[0].name"},
		{name: "arguments not an object", c: chat.Conversation{Messages: []chat.Message{user("q"), bad(func(m *chat.Message) { m.ToolCalls[0].Arguments = "[]" })}},
			openai: "tool_calls[0].arguments", anthrop: "arguments"},
		{name: "calls on a user turn", c: chat.Conversation{Messages: []chat.Message{bad(func(m *chat.Message) { m.Role = chat.RoleUser })}},
			openai: "only an assistant message makes tool calls", anthrop: "only an assistant"},
		{name: "call id on a user turn", c: chat.Conversation{Messages: []chat.Message{{Role: chat.RoleUser, Content: "x", ToolCallID: "c1"}}},
			openai: "only a tool message answers", anthrop: "only a tool message"},
		{name: "unknown role", c: chat.Conversation{Messages: []chat.Message{{Role: "system", Content: "x"}}},
			openai: `must be user, assistant or tool (got "system")`, anthrop: "must be user"},
		{name: "empty user turn", c: chat.Conversation{Messages: []chat.Message{user("")}}, openai: "needs content", anthrop: "needs content"},
		{name: "empty assistant turn", c: chat.Conversation{Messages: []chat.Message{user("q"), asst("")}}, openai: "content or tool calls", anthrop: "content or tool calls"},
		{name: "empty result", c: chat.Conversation{Messages: []chat.Message{user("q"), asst("", "c1"), {Role: chat.RoleTool, ToolCallID: "c1"}}},
			openai: "a tool message needs content", anthrop: "needs content"},
		{name: "white space text", c: chat.Conversation{Messages: []chat.Message{user(" \n")}}, anthrop: "only white space"},
		{name: "empty system part", c: chat.Conversation{System: []chat.SystemPart{{Text: "a"}, {}}}, openai: "system[1]: empty text", anthrop: "empty text"},
		{name: "white space system", c: chat.Conversation{System: []chat.SystemPart{{Text: "\n"}, {Text: " "}}}, anthrop: "system: text is only white space"},
		{name: "white space system cut in a character", c: chat.Conversation{System: []chat.SystemPart{{Text: "\xe3"}, {Text: "\x80\x80"}}}, anthrop: "system: text is only white space"}, // U+3000 joined
		{name: "white space system part", c: chat.Conversation{System: []chat.SystemPart{{Text: " ", CacheBreakpoint: true}, {Text: "a"}, {Text: "\n \n", CacheBreakpoint: true}, {Text: "b"}}}},
		{name: "a Kimi call id", c: chat.Conversation{Messages: []chat.Message{user("q"), asst("", "functions.get_weather:0"), tool("functions.get_weather:0")}}},
		{name: "a call id with a space", c: chat.Conversation{Messages: []chat.Message{user("q"), asst("", "call 1"), tool("call 1")}},
			openai: "messages[1].tool_calls[0].id: must be 1 to 128 characters of printable ASCII", anthrop: "printable ASCII"},
		{name: "call ids written alike", c: chat.Conversation{Messages: []chat.Message{user("q"), asst("", "a.b", chat.WireID("a.b")), tool("a.b"), tool(chat.WireID("a.b"))}},
			openai: `messages[1].tool_calls[1].id: call "a_b_`, anthrop: "as call \"a.b\" is"},
		{name: "arguments not UTF-8", c: chat.Conversation{Messages: []chat.Message{user("q"), bad(func(m *chat.Message) { m.ToolCalls[0].Arguments = "{\"a\":\"\xff\"}" }), tool("c1")}},
			openai: "tool_calls[0].arguments", anthrop: "arguments"},
		{name: "reasoning", c: chat.Conversation{Messages: []chat.Message{user("q"), {Role: chat.RoleAssistant, Content: "a", Reasoning: []chat.Reasoning{thinking, rs}}}}},
		{name: "reasoning on a user turn", c: chat.Conversation{Messages: []chat.Message{{Role: chat.RoleUser, Content: "q", Reasoning: []chat.Reasoning{thinking}}}},
			openai: "messages[0].reasoning: only an assistant message", anthrop: "only an assistant"},
		{name: "a thinking block without signature", c: chat.Conversation{Messages: []chat.Message{user("q"), {Role: chat.RoleAssistant, Content: "a", Reasoning: []chat.Reasoning{reasoning(`{"type":"thinking","thinking":"x"}`)}}}},
			openai: "messages[1].reasoning[0].signature: must be a string", anthrop: "signature"},
		{name: "two OpenAI reasoning items", c: chat.Conversation{Messages: []chat.Message{user("q"), {Role: chat.RoleAssistant, Content: "a", Reasoning: []chat.Reasoning{rs, thinking, rs}}}},
			openai: "messages[1].reasoning[2]: a second reasoning item", anthrop: "a second reasoning item"},
		{name: "a reasoning item of no type", c: chat.Conversation{Messages: []chat.Message{user("q"), {Role: chat.RoleAssistant, Content: "a", Reasoning: []chat.Reasoning{reasoning(`{"type":"plan"}`)}}}},
			openai: "messages[1].reasoning[0].type", anthrop: "reasoning[0].type"},
		{name: "cache ttl", c: chat.Conversation{CacheTTL: "1d", Messages: []chat.Message{user("q")}}, openai: `cache_ttl: must be "5m" or "1h"`, anthrop: "cache_ttl"},
		{name: "four breakpoints", c: chat.Conversation{
			System:   []chat.SystemPart{{Text: "a", CacheBreakpoint: true}, {Text: "b", CacheBreakpoint: true}},
			Messages: []chat.Message{{Role: chat.RoleUser, Content: "q", CacheBreakpoint: true}, {Role: chat.RoleAssistant, Content: "a", CacheBreakpoint: true}}}},
		{name: "five breakpoints", c: chat.Conversation{
			System:   []chat.SystemPart{{Text: "a", CacheBreakpoint: true}, {Text: "b", CacheBreakpoint: true}, {Text: "c", CacheBreakpoint: true}},
			Messages: []chat.Message{user("q"), asst("", "c1"), {Role: chat.RoleTool, ToolCallID: "c1", Content: "r", CacheBreakpoint: true}, {Role: chat.RoleUser, Content: "q", CacheBreakpoint: true}}},
			anthrop: "5 cache breakpoints"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range formats {
				want := tt.openai // the Responses API's rules are Chat Completions'
				if f == chat.FormatResponses {
					want = strings.ReplaceAll(want, "chat: openai", "chat: responses")
				}
				if f == chat.FormatAnthropic {
					want = tt.anthrop
				}
				err := tt.c.Check(f)
				body, encErr := chat.Encode(f, tt.c)
				if (err == nil) != (encErr == nil) {
					t.Errorf("%v: Check = %v but Encode = %v", f, err, encErr)
				}
				if want == "" {
					if err != nil {
						t.Errorf("%v: %v", f, err)
					} else {
						wire(t, f, body, chatcheck.Options{AllowNoMessages: true})
					}
					continue
				}
				var ce *chat.Error
				if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, chat.ErrInvalid) || !errors.As(err, &ce) || ce.Format != f {
					t.Errorf("%v: Check = %v, want an *Error containing %q", f, err, want)
				}
				if body != nil {
					t.Errorf("%v: a body along with an error", f)
				}
			}
		})
	}
}

func TestFormat(t *testing.T) {
	for _, f := range formats {
		if g, err := chat.ParseFormat(f.String()); err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f, g, err)
		}
	}
	if _, err := chat.ParseFormat("text"); err == nil {
		t.Error(`ParseFormat("text"): no error`)
	}
	if _, err := chat.Encode(0, loan()); !errors.Is(err, chat.ErrInvalid) {
		t.Errorf("Encode(0) = %v", err)
	}
	if s := chat.Format(9).String(); s != "Format(9)" {
		t.Errorf("String = %q", s)
	}
}

// gen returns a random conversation. Most are valid by construction; with
// mess set, one random thing is broken in a way Check may or may not
// catch (the property below decides nothing from it).
func gen(r *rand.Rand, mess bool) chat.Conversation {
	var c chat.Conversation
	for range r.IntN(3) {
		c.System = append(c.System, chat.SystemPart{Text: pick(r, "rules\n", "<a>&</a>", "ctx "), CacheBreakpoint: r.IntN(4) == 0})
	}
	call := 0
	for len(c.Messages) < 2+r.IntN(10) {
		switch r.IntN(3) {
		case 0:
			c.Messages = append(c.Messages, chat.Message{Role: chat.RoleUser, Content: pick(r, "hi", "what now?", "a\nb ", "ünï")})
		case 1:
			c.Messages = append(c.Messages, chat.Message{Role: chat.RoleAssistant, Content: pick(r, "ok", "sure. ", "done\n")})
		default:
			m := chat.Message{Role: chat.RoleAssistant, Content: pick(r, "", "checking")}
			var ids []string
			for range 1 + r.IntN(3) {
				call++
				id := fmt.Sprintf("call_%d", call)
				if r.IntN(4) == 0 {
					id = pick(r, "functions.get_rate:", "toolu/", "x") + id
				}
				ids = append(ids, id)
				m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: id, Name: pick(r, "get_rate", "look-up"), Arguments: pick(r, "{}", `{"a":[1,"<x>"]}`, ` { "b" : null } `)})
			}
			for range r.IntN(3) {
				m.Reasoning = append(m.Reasoning, []chat.Reasoning{thinking, redacted}[r.IntN(2)])
			}
			if r.IntN(2) == 0 {
				m.Reasoning = append(m.Reasoning, rs)
			}
			c.Messages = append(c.Messages, m)
			r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			for _, id := range ids {
				c.Messages = append(c.Messages, chat.Message{Role: chat.RoleTool, ToolCallID: id, Content: pick(r, "42", `{"ok":true}`, "line\n")})
			}
		}
		if r.IntN(6) == 0 && breakpoints(c) < chat.MaxCacheBreakpoints {
			c.Messages[len(c.Messages)-1].CacheBreakpoint = true
		}
	}
	if mess {
		i := r.IntN(len(c.Messages))
		m := &c.Messages[i]
		switch r.IntN(6) {
		case 0:
			c.Messages = append(c.Messages[:i], c.Messages[i+1:]...) // may orphan a call or a result
		case 1:
			m.Role = []chat.Role{chat.RoleUser, chat.RoleAssistant, chat.RoleTool, "x"}[r.IntN(4)]
		case 2:
			m.Content = pick(r, "", " ", "x")
		case 3:
			m.ToolCallID = pick(r, "", "call_1", "call_99")
		case 4:
			j := r.IntN(len(c.Messages))
			c.Messages[i], c.Messages[j] = c.Messages[j], c.Messages[i]
		default:
			if len(m.ToolCalls) > 0 {
				m.ToolCalls[0].Arguments = pick(r, "", "[]", "{", "{}")
			}
		}
	}
	return c
}

func breakpoints(c chat.Conversation) int {
	n := 0
	for _, p := range c.System {
		if p.CacheBreakpoint {
			n++
		}
	}
	for _, m := range c.Messages {
		if m.CacheBreakpoint {
			n++
		}
	}
	return n
}

func pick(r *rand.Rand, s ...string) string { return s[r.IntN(len(s))] }

// Whatever the encoders accept, the independent checker of the APIs'
// rules accepts too; conversations built by the rules are accepted; the
// same conversation encodes to the same bytes.
func TestEncodePassesWireRules(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for i := range 2000 {
		mess := i%2 == 1
		c := gen(r, mess)
		for _, f := range formats {
			body, err := chat.Encode(f, c)
			if err != nil {
				if !mess && (f != chat.FormatAnthropic || c.Messages[0].Role == chat.RoleUser) {
					t.Fatalf("%v rejects a conversation built by the rules: %v", f, err)
				}
				continue
			}
			accepted++
			wire(t, f, body, chatcheck.Options{})
			again, _ := chat.Encode(f, c)
			if !bytes.Equal(body, again) {
				t.Fatalf("%v: two encodings differ", f)
			}
		}
	}
	if accepted < 3000 {
		t.Errorf("only %d of 6000 encodings accepted: the generator tests little", accepted)
	}
}

// The checker is not a rubber stamp: it refuses bodies that break each
// rule.
func TestWireCheckerRefuses(t *testing.T) {
	for _, tt := range []struct {
		f    chat.Format
		body string
		want string
	}{
		{chat.FormatOpenAI, `{"messages":[]}`, "empty"},
		{chat.FormatOpenAI, `{"messages":[{"role":"tool","content":"x","tool_call_id":"a"}]}`, "preceding message with 'tool_calls'"},
		{chat.FormatOpenAI, `{"messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"x"}]}`, `call "a" has no tool message`},
		{chat.FormatOpenAI, `{"messages":[{"role":"assistant"}]}`, "content is required"},
		{chat.FormatOpenAI, `{"messages":[{"role":"user","content":"x","extra":1}]}`, `key "extra"`},
		{chat.FormatOpenAI, `{"messages":[{"role":"assistant","tool_calls":[{"id":"` + strings.Repeat("a", 41) + `","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"x","tool_call_id":"` + strings.Repeat("a", 41) + `"}]}`, "1 to 40"},
		{chat.FormatAnthropic, `{"messages":[{"role":"assistant","content":"x"}]}`, "first message must use the user role"},
		{chat.FormatAnthropic, `{"messages":[{"role":"user","content":"x"},{"role":"user","content":"y"}]}`, "roles must alternate"},
		{chat.FormatAnthropic, `{"messages":[{"role":"user","content":[{"type":"text","text":" "}]}]}`, "non-whitespace"},
		{chat.FormatAnthropic, `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]},{"role":"user","content":[{"type":"text","text":"x"}]}]}`, "without tool_result blocks immediately after"},
		{chat.FormatAnthropic, `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]},{"role":"user","content":[{"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"a","content":"r"}]}]}`, "tool_result after text"},
		{chat.FormatAnthropic, `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"r"}]}]}`, "unexpected tool_use_id"},
		{chat.FormatAnthropic, `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a "}]}`, "trailing whitespace"},
		{chat.FormatAnthropic, `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":[]}]}]}`, "input: not an object"},
		{chat.FormatAnthropic, `{"system":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"q","cache_control":{"type":"ephemeral"}}]}]}`, "more than 4"},
		{chat.FormatAnthropic, `{"system":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"q","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]}`, "longer lifetimes come first"},
		{chat.FormatAnthropic, `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"thinking","thinking":"t","signature":"s"}]}]}`, "thinking blocks come first"},
		{chat.FormatResponses, `{"input":[]}`, "input: empty"},
		{chat.FormatResponses, `{"input":[{"type":"function_call_output","call_id":"a","output":"r"}]}`, "No tool call found"},
		{chat.FormatResponses, `{"input":[{"type":"function_call","call_id":"a","name":"f","arguments":"{}"}]}`, "No tool output found"},
		{chat.FormatResponses, `{"input":[{"type":"reasoning","id":"rs","summary":[]},{"type":"message","role":"user","content":"q"}]}`, "without its required following item"},
	} {
		if err := wireErr(tt.f, []byte(tt.body), chatcheck.Options{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v %s: %v, want %q", tt.f, tt.body, err, tt.want)
		}
	}
}

// FuzzEncode builds conversations from fuzzed strings: the encoders never
// panic, what they accept the wire checker accepts, and they write what
// encoding/json wrote (chat.ReferenceEncode), byte for byte, valid JSON.
func FuzzEncode(f *testing.F) {
	f.Add("q", "a", "call_1", "f", "{}", "call_1", "r", uint8(0), uint8(0))
	f.Add(" ", "", "c 1", "", "[", "x", "", uint8(255), uint8(255))
	f.Add("q", "a", "functions.f:0", "f", "{}", "functions.f:0", "r", uint8(0x40), uint8(1))
	f.Add("<q> & \"\\ \u2028\u2029 \x00\b\f\x1f\x7f", "é\xff\xe2\x80", "c", "f", `{ "a" : "\u2028 <&>" }`, "c", "\xa8\x80 \t", uint8(0x21), uint8(0x87))
	f.Fuzz(func(t *testing.T, user, answer, id, name, args, answers, result string, shape, more uint8) {
		var thought []chat.Reasoning
		if shape&0x40 != 0 {
			thought = []chat.Reasoning{thinking, redacted, rs}
		}
		// more's low bit makes the call one Check takes, whatever the
		// strings, so that the texts reach the encoders.
		if more&1 != 0 {
			id, name, args, answers = "call_1", "f", "{}", "call_1"
		}
		msgs := []chat.Message{
			{Role: chat.RoleUser, Content: user},
			{Role: chat.RoleAssistant, Content: answer, ToolCalls: []chat.ToolCall{{ID: id, Name: name, Arguments: args}}, Reasoning: thought},
			{Role: chat.RoleTool, ToolCallID: answers, Content: result},
			{Role: chat.RoleAssistant, Content: answer},
		}
		// shape's bits drop messages and set breakpoints.
		var c chat.Conversation
		c.System = []chat.SystemPart{{Text: user, CacheBreakpoint: shape&1 != 0}}
		// more's next bits cut the system prompt in two at a byte (in a
		// UTF-8 sequence, maybe) and add a part of the result's text.
		if cut := int(more>>2) & 0x1f; more&2 != 0 && cut > 0 && cut < len(user) {
			c.System = []chat.SystemPart{{Text: user[:cut]}, {Text: user[cut:], CacheBreakpoint: shape&1 != 0}}
		}
		if more&0x80 != 0 {
			c.System = append(c.System, chat.SystemPart{Text: result})
		}
		for i, m := range msgs {
			if shape&(2<<i) == 0 {
				m.CacheBreakpoint = shape&0x20 != 0
				c.Messages = append(c.Messages, m)
			}
		}
		if shape&0x80 != 0 {
			c.CacheTTL = chat.TTL1h
		}
		for _, f := range formats {
			body := same(t, f, c)
			if body == nil {
				if _, err := chat.Encode(f, c); !errors.Is(err, chat.ErrInvalid) {
					t.Fatalf("%v: %v does not wrap ErrInvalid", f, err)
				}
				continue
			}
			wire(t, f, body, chatcheck.Options{AllowNoMessages: true})
		}
	})
}
