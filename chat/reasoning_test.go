package chat_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/contextasm/contextasm/chat"
)

func TestValidReasoning(t *testing.T) {
	for _, tt := range []struct {
		item, key string // key "-": valid
	}{
		{`{"type":"thinking","thinking":"","signature":"s"}`, "-"},
		{`{"type":"redacted_thinking","data":"d"}`, "-"},
		{`{"type":"reasoning","id":"rs","summary":[],"encrypted_content":null,"status":"completed"}`, "-"},
		{`{"type":"thinking","thinking":1,"signature":"s"}`, "thinking"},
		{`{"type":"thinking","thinking":"t"}`, "signature"},
		{`{"type":"redacted_thinking"}`, "data"},
		{`{"type":"reasoning","summary":[]}`, "id"},
		{`{"type":"reasoning","id":"rs"}`, "summary"},
		{`{"type":"reasoning","id":"rs","summary":[{"type":"text","text":"x"}]}`, "summary"},
		{`{"type":"reasoning","id":"rs","summary":[],"encrypted_content":5}`, "encrypted_content"},
		{`{"type":"thinking","thinking":"t","signature":"s","cache_control":{}}`, "cache_control"},
		{`{"type":"plan"}`, "type"},
		{`[1]`, ""},
		{`"thinking"`, ""},
	} {
		var r chat.Reasoning
		if err := json.Unmarshal([]byte(tt.item), &r); err != nil {
			t.Fatal(err)
		}
		key, err := chat.ValidReasoning(r)
		if tt.key == "-" {
			if err != nil {
				t.Errorf("%s: %s: %v", tt.item, key, err)
			}
			continue
		}
		if err == nil || key != tt.key {
			t.Errorf("%s: key %q, %v; want a problem with %q", tt.item, key, err, tt.key)
		}
	}
}

// FuzzReasoning holds the decoder to its promises on any input: it never
// panics; what it accepts is compact JSON that encodes back to itself and
// decodes to the same item; a valid item is an object of one of the
// three types, which exactly one format writes.
func FuzzReasoning(f *testing.F) {
	for _, s := range []string{`{"type":"thinking","thinking":"t","signature":"s"}`, `{"type":"redacted_thinking","data":"d"}`,
		`{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"x"}],"encrypted_content":"e"}`,
		`{"type":"thinking","thinking":"a<b && \\u0026 \u0026 \u2028","signature":"s"}`,
		` { "type" : "thinking" , "thinking":"\u00e9", "signature":"s" } `, `[]`, `null`, `{"type":1}`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var r chat.Reasoning
		if err := json.Unmarshal(in, &r); err != nil {
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		var compact bytes.Buffer
		if json.Compact(&compact, out) != nil || !bytes.Equal(compact.Bytes(), out) {
			t.Fatalf("%q: writes %q, not compact JSON", in, out)
		}
		var again chat.Reasoning
		if err := json.Unmarshal(out, &again); err != nil || again.Type != r.Type || !bytes.Equal(again.JSON, r.JSON) {
			t.Fatalf("%q: %q reads back as %+v (%v)", in, out, again, err)
		}
		if _, err := chat.ValidReasoning(r); err == nil {
			n := 0
			for _, f := range []chat.Format{chat.FormatOpenAI, chat.FormatAnthropic, chat.FormatResponses} {
				if r.For(f) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%q: a valid item %d formats write", in, n)
			}
		}
	})
}
