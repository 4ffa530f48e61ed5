package chat_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/internal/chatcheck"
)

var anthropicID = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,40}$`)

func TestWireID(t *testing.T) {
	for _, id := range []string{"call_1", "toolu_01A09q90qw90lq917835lq9", strings.Repeat("a", 40)} {
		if got := chat.WireID(id); got != id {
			t.Errorf("WireID(%q) = %q, want it unchanged", id, got)
		}
	}
	seen := map[string]string{}
	for _, id := range []string{"functions.get_weather:0", "functions.get_weather:1", "functions_get_weather_0", "functions-get_weather:0",
		strings.Repeat("a", 41), strings.Repeat("a", 42), "call/1", "call#1", "~", strings.Repeat("x.", 64)} {
		w := chat.WireID(id)
		if !anthropicID.MatchString(w) {
			t.Errorf("WireID(%q) = %q: not 1 to 40 characters of [A-Za-z0-9_-]", id, w)
		}
		if w != chat.WireID(id) {
			t.Errorf("WireID(%q) differs between calls", id)
		}
		if other, dup := seen[w]; dup {
			t.Errorf("WireID(%q) = WireID(%q) = %q", id, other, w)
		}
		seen[w] = id
	}
	if w := chat.WireID("functions.get_weather:0"); !strings.HasPrefix(w, "functions_get_weather_0_") {
		t.Errorf("WireID keeps no trace of the id: %q", w)
	}
}

// A call with a Kimi id and its result carry the same mapped id in every
// body, which the APIs' rules accept.
func TestWireIDInBodies(t *testing.T) {
	const id = "functions.get_weather:0"
	c := chat.Conversation{Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "Weather?"},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: id, Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
		{Role: chat.RoleTool, ToolCallID: id, Content: "-3°C"},
	}}
	w := chat.WireID(id)
	for _, f := range formats {
		body, err := chat.Encode(f, c)
		if err != nil {
			t.Fatal(err)
		}
		wire(t, f, body, chatcheck.Options{})
		if strings.Contains(string(body), id) || strings.Count(string(body), `"`+w+`"`) != 2 {
			t.Errorf("%v: want %q twice and %q nowhere: %s", f, w, id, body)
		}
	}
}

// A section whose block is only white space, between two cache
// breakpoints, made a system part that Anthropic refuses ("text content
// blocks must contain non-whitespace text"): the encoder refused the whole
// conversation. The blank part now joins the part before it, which keeps
// its breakpoint at the end; a blank first part joins the next.
func TestAnthropicBlankSystemPart(t *testing.T) {
	for _, tt := range []struct {
		parts []chat.SystemPart
		want  string // text|ttl blocks
	}{
		{[]chat.SystemPart{{Text: "rules\n", CacheBreakpoint: true}, {Text: "   \n", CacheBreakpoint: true}, {Text: "tail\n"}}, `"rules\n   \n"+|"tail\n"`},
		{[]chat.SystemPart{{Text: "rules\n", CacheBreakpoint: true}, {Text: " \n"}}, `"rules\n \n"+`},
		{[]chat.SystemPart{{Text: "\n", CacheBreakpoint: true}, {Text: " "}, {Text: "rules"}}, `"\n rules"`}, // the blank lead's breakpoint covered white space only
		{[]chat.SystemPart{{Text: "a"}, {Text: "\t", CacheBreakpoint: true}, {Text: "b", CacheBreakpoint: true}}, `"a\t"+|"b"+`},
	} {
		c := chat.Conversation{System: tt.parts, Messages: []chat.Message{{Role: chat.RoleUser, Content: "q"}}}
		body, err := chat.Anthropic(c)
		if err != nil {
			t.Fatalf("%+v: %v", tt.parts, err)
		}
		wire(t, chat.FormatAnthropic, body, chatcheck.Options{})
		var got struct {
			System []struct {
				Text         string          `json:"text"`
				CacheControl json.RawMessage `json:"cache_control"`
			} `json:"system"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		var blocks []string
		joined := ""
		for _, b := range got.System {
			s := fmt.Sprintf("%q", b.Text)
			if b.CacheControl != nil {
				s += "+"
			}
			blocks = append(blocks, s)
			joined += b.Text
		}
		if g := strings.Join(blocks, "|"); g != tt.want {
			t.Errorf("%+v: system = %s, want %s", tt.parts, g, tt.want)
		}
		if joined != c.SystemText() {
			t.Errorf("%+v: the system text changed: %q", tt.parts, joined)
		}
	}
}
