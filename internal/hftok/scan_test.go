package hftok

import (
	"encoding/json"
	"maps"
	"testing"
)

// FuzzScan checks the hand scanner of tokenizer.json against encoding/json:
// it never panics, and on input both accept, it reads the same vocabulary
// and merges.
func FuzzScan(f *testing.F) {
	f.Add(tiny("", "", ""))
	f.Add(tiny(`{"type":"NFC"}`, "", `{"type":"BPE","vocab":{"a\u0062":0,"\ud83d\ude00":1,"\"\\\/\b\f\n\r\t":2,"\ud800":3},"merges":[["a","b"],["\u00e9","x y"]]}`))
	f.Add(`{"model":{"vocab":{},"merges":null,"type":"BPE"},"added_tokens":[{"id":1,"content":"<s>"}]}`)
	f.Add(`{"model":{"type":"Unigram","vocab":[["a",-1.5]]}}`)
	f.Add(`{"model":{"vocab":{"a":1e3}}}`)
	f.Fuzz(func(t *testing.T, data string) {
		sc, err := scanFile([]byte(data))
		// Keys match exactly, as the library's serde matches them (not as
		// encoding/json's struct fields, which ignore case).
		var top, model map[string]json.RawMessage
		var want struct {
			Model struct {
				Vocab  map[string]int
				Merges json.RawMessage
			}
		}
		if err != nil || json.Unmarshal([]byte(data), &top) != nil || json.Unmarshal(top["model"], &model) != nil {
			return
		}
		if json.Unmarshal(model["vocab"], &want.Model.Vocab) != nil && model["vocab"] != nil {
			return
		}
		want.Model.Merges = model["merges"]
		got := make(map[string]int, len(sc.vocab))
		for k, v := range sc.vocab {
			got[k] = int(v)
		}
		if want.Model.Vocab != nil && !maps.Equal(got, want.Model.Vocab) {
			t.Fatalf("vocab %v, encoding/json reads %v", got, want.Model.Vocab)
		}
		var pairs [][2]string
		if json.Unmarshal(want.Model.Merges, &pairs) == nil && len(pairs) > 0 {
			for i := range pairs {
				if i >= len(sc.merges) || sc.merges[i] != pairs[i] {
					t.Fatalf("merges %q, encoding/json reads %q", sc.merges, pairs)
				}
			}
		}
	})
}
