package chat_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/chat"
)

// same encodes c in format f with the encoders and with the reference
// (encoding/json, reference_test.go) and fails unless both give the same
// bytes, or the same error; it returns the body, or nil for an error.
func same(t *testing.T, f chat.Format, c chat.Conversation) []byte {
	t.Helper()
	got, err := chat.Encode(f, c)
	want, werr := chat.ReferenceEncode(f, c)
	switch {
	case (err == nil) != (werr == nil):
		t.Fatalf("%v: error %v, reference error %v", f, err, werr)
	case err != nil:
		if err.Error() != werr.Error() {
			t.Fatalf("%v: error %q, reference error %q", f, err, werr)
		}
		return nil
	case !bytes.Equal(got, want):
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%v: bodies differ at byte %d\n got: %q\nwant: %q", f, i, got[max(0, i-40):min(len(got), i+40)], want[max(0, i-40):min(len(want), i+40)])
	case !json.Valid(got):
		t.Fatalf("%v: not JSON: %q", f, got)
	}
	return got
}

// nasty are pieces of text for the encoders' corner cases: what JSON
// escapes, what encoding/json escapes besides (U+2028, U+2029, bytes
// that are not UTF-8), what it leaves alone with HTML escaping off, white
// space Anthropic trims or refuses.
var nasty = []string{
	"a", "word ", "<", ">", "&", `"`, `\`, "/", "\n", "\r", "\t", "\b", "\f",
	"\x00", "\x01", "\x1f", "\x7f", " ", "\u00a0", "\u3000", "\u2028", "\u2029",
	"é", "€", "😀", "\ufffd", "\xff", "\xc3", "\xe2\x80", "\xa8", "\x80\x80",
	"\xed\xa0\x80", "\xf0\x9f\x98", "\\u2028", "</script>", "{\"k\":1}",
}

// text returns a string of up to n nasty pieces.
func text(r *rand.Rand, n int) string {
	var b strings.Builder
	for range r.IntN(n + 1) {
		if r.IntN(8) == 0 {
			b.WriteByte(byte(r.IntN(256)))
			continue
		}
		b.WriteString(nasty[r.IntN(len(nasty))])
	}
	return b.String()
}

// arguments returns a JSON object, in UTF-8, with white space here and
// there and strings of escapes and of characters a body escapes.
func arguments(r *rand.Rand) string {
	return pick(r, "{}", " {\n} ", `{"a":1}`,
		"{ \"q\" : \"<a & b>\" ,\n\t\"n\": [1, 2.5e3, true, null] }",
		`{"s":"quote \" back \\ nl \n u \u2028 \u00e9"}`,
		"{\"raw\":\"\u2028\u2029 é € 😀 \t\"}",
		`{"nested":{"x":[{},[],{"y":" spaced  out "}]}}`)
}

// genNasty returns a random conversation of nasty text, valid by
// construction but for what the text breaks (blank text, for Anthropic).
func genNasty(r *rand.Rand) chat.Conversation {
	var c chat.Conversation
	c.CacheTTL = pick(r, "", chat.TTL5m, chat.TTL1h)
	marks := 0
	mark := func() bool {
		if marks < chat.MaxCacheBreakpoints && r.IntN(4) == 0 {
			marks++
			return true
		}
		return false
	}
	for range r.IntN(5) {
		t := text(r, 6)
		switch r.IntN(5) {
		case 0:
			t = pick(r, " ", "\n\n", "\u3000", "\t \u00a0") // blank: joins its neighbour
		case 1:
			t = pick(r, "\xa8", "\x80z", "\xbf\xbd") + t // starts inside a UTF-8 sequence
		}
		if t == "" {
			t = "x"
		}
		c.System = append(c.System, chat.SystemPart{Text: t, CacheBreakpoint: mark()})
	}
	ids := []string{"call_1", "functions.get_rate:0", `a"b\c`, "toolu_" + strings.Repeat("x", 40), "<&>", "c-2"}
	call := 0
	for len(c.Messages) < 1+r.IntN(12) {
		switch r.IntN(4) {
		case 0:
			c.Messages = append(c.Messages, chat.Message{Role: chat.RoleUser, Content: text(r, 8) + "q"})
		case 1:
			c.Messages = append(c.Messages, chat.Message{Role: chat.RoleAssistant, Content: "a" + text(r, 8)})
		case 2:
			c.Messages = append(c.Messages, chat.Message{Role: chat.RoleUser, Content: pick(r, "q", " x \n", "\u2028")})
		default:
			m := chat.Message{Role: chat.RoleAssistant}
			if r.IntN(2) == 0 {
				m.Content = text(r, 4) + "a"
			}
			n := 1 + r.IntN(3)
			for range n {
				call++
				m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: fmt.Sprintf("%s%d", pick(r, ids...), call), Name: pick(r, "get_rate", "look-up", "F_9"), Arguments: arguments(r)})
			}
			for range r.IntN(3) {
				m.Reasoning = append(m.Reasoning, []chat.Reasoning{thinking, redacted, rs, spaced}[r.IntN(4)])
			}
			if m.Reasoning != nil && r.IntN(3) == 0 {
				m.Reasoning = m.Reasoning[:1] // at most one OpenAI item
			}
			c.Messages = append(c.Messages, m)
			for _, tc := range m.ToolCalls {
				c.Messages = append(c.Messages, chat.Message{Role: chat.RoleTool, ToolCallID: tc.ID, Content: "r" + text(r, 6)})
			}
		}
		c.Messages[len(c.Messages)-1].CacheBreakpoint = mark()
	}
	if r.IntN(3) == 0 {
		c.Messages = append(c.Messages, chat.Message{Role: chat.RoleAssistant, Content: "prefill" + pick(r, " ", "\n", "\u3000", "\u2028", "")})
	}
	if r.IntN(4) == 0 {
		c.Tools = loanTools()
		c.Tools[0].Description = text(r, 6)
		c.Tools[1].CacheBreakpoint = marks < chat.MaxCacheBreakpoints
	}
	return c
}

// spaced is a thinking block with white space between its tokens, as a
// host may build one without Reasoning's UnmarshalJSON: the body writes
// it compact.
var spaced = chat.Reasoning{Type: chat.ReasoningThinking, JSON: json.RawMessage("{ \"type\" : \"thinking\",\n \"thinking\": \"a \\\" b\\n <&> \u2028\", \"signature\" : \"EqQB\" }")}

// The encoders write what encoding/json wrote, byte for byte, and the
// same errors, for conversations of every corner the escaping has.
func TestEncodeMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	accepted := make(map[chat.Format]int)
	const n = 3000
	for i := range n {
		c := genNasty(r)
		if i%2 == 1 {
			c = gen(r, i%4 == 1)
		}
		for _, f := range formats {
			if same(t, f, c) != nil {
				accepted[f]++
			}
		}
	}
	for _, f := range formats {
		if accepted[f] < n/4 {
			t.Errorf("%v: only %d of %d conversations accepted: the test compares little", f, accepted[f], n)
		}
	}
	for _, c := range []chat.Conversation{loan(), toolTurn(), {}, {System: []chat.SystemPart{{Text: "s"}}}} {
		for _, f := range formats {
			same(t, f, c)
		}
	}
}

// big is a conversation as a host sends one: a system prompt of about
// 4 kB in two parts, then turns of a user question, an assistant call, its
// result (JSON) and an answer; 15 turns make 61 messages, about 34 kB
// in the OpenAI body.
func big(turns int) chat.Conversation {
	c := chat.Conversation{System: []chat.SystemPart{
		{Text: "[MODEL_CONTEXT_PROTOCOL v1.2]\n" + strings.Repeat("<rule id=\"r\">Quote the APR & the term; never guess a rate.</rule>\n", 40), CacheBreakpoint: true},
		{Text: strings.Repeat("<context id=\"app\">Applicant: u-ana, employed since 2019.</context>\n", 20)},
	}}
	for i := range turns {
		id := fmt.Sprintf("call_%08d", i)
		c.Messages = append(c.Messages,
			chat.Message{Role: chat.RoleUser, Content: fmt.Sprintf("Turn %d: what would I pay for EUR %d over %d months? I'd like the total cost, the APR and whether a shorter term is cheaper overall.", i, 10000+1000*i, 12*(1+i%5))},
			chat.Message{Role: chat.RoleAssistant, Content: "Let me look that up.", ToolCalls: []chat.ToolCall{{ID: id, Name: "get_rate", Arguments: fmt.Sprintf(`{"product":"car-loan","amount":%d,"term_months":%d}`, 10000+1000*i, 12*(1+i%5))}}},
			chat.Message{Role: chat.RoleTool, ToolCallID: id, Content: `{"apr":6.9,"fees":[` + strings.Repeat(`{"name":"arrangement","eur":150},{"name":"early repayment","pct":1.0},`, 8) + `{}],"valid_until":"2026-06-30","notes":"Rate depends on the credit file; \"u-ana\" scores 712."}`},
			chat.Message{Role: chat.RoleAssistant, Content: "At 6.9% APR over the term you'd pay EUR 356 a month.\n\n- Total: EUR 21,360\n- Fees: EUR 150 arrangement; 1% on early repayment\n\nA 48-month term costs EUR 2,100 less in interest overall, at EUR 430 a month.\n\n" + strings.Repeat("| term | monthly | total |\n", 10)},
		)
	}
	c.Messages = append(c.Messages, chat.Message{Role: chat.RoleUser, Content: "Thanks. Summarise the options <in a table> & recommend one."})
	return c
}

// BenchmarkEncode measures a host's body (big) written by the encoders
// ("new") and by encoding/json ("reference"), in each format.
func BenchmarkEncode(b *testing.B) {
	c := big(15)
	for _, f := range formats {
		body, _ := chat.Encode(f, c)
		b.Run(f.String(), func(b *testing.B) {
			for _, enc := range []struct {
				name string
				fn   func(chat.Format, chat.Conversation) ([]byte, error)
			}{{"new", chat.Encode}, {"reference", chat.ReferenceEncode}} {
				b.Run(enc.name, func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(len(body)))
					for b.Loop() {
						if _, err := enc.fn(f, c); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// The OpenAI body of a conversation costs a few allocations, however many
// messages it has: the body, once, and Check's maps.
func TestEncodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	small, large := big(15), big(60)
	if body, _ := chat.OpenAI(small); len(body) < 30000 {
		t.Fatalf("the body is %d bytes; the test wants a host's", len(body))
	}
	for _, f := range formats {
		n := testing.AllocsPerRun(20, func() { _, _ = chat.Encode(f, small) })
		m := testing.AllocsPerRun(20, func() { _, _ = chat.Encode(f, large) })
		if n > 8 || m > n {
			t.Errorf("%v: %v allocations for 61 messages, %v for 241; want at most 8 for either", f, n, m)
		}
	}
}
