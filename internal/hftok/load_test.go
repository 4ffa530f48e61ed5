package hftok

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// tiny builds a small byte-level tokenizer.json around the given parts.
func tiny(normalizer, pre, model string) string {
	if normalizer == "" {
		normalizer = "null"
	}
	if pre == "" {
		pre = `{"type":"ByteLevel","add_prefix_space":false,"use_regex":true}`
	}
	if model == "" {
		model = `{"type":"BPE","vocab":{"a":0,"b":1,"ab":2,"Ġ":3},"merges":["a b"]}`
	}
	return `{"version":"1.0","added_tokens":[],"normalizer":` + normalizer + `,"pre_tokenizer":` + pre + `,"model":` + model + `}`
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name, json string
		want       error
		msg        string
	}{
		{"wordpiece", tiny("", "", `{"type":"WordPiece","vocab":{}}`), ErrUnsupported, `model.type: model "WordPiece" is not supported`},
		{"unigram", tiny("", "", `{"type":"Unigram","vocab":[]}`), ErrUnsupported, `model "Unigram"`},
		{"bert normalizer", tiny(`{"type":"BertNormalizer"}`, "", ""), ErrUnsupported, `normalizer: normalizer "BertNormalizer" is not supported`},
		{"nested normalizer", tiny(`{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Lowercase"}]}`, "", ""), ErrUnsupported, `normalizer.normalizers[1]: normalizer "Lowercase"`},
		{"whitespace pre", tiny("", `{"type":"Whitespace"}`, ""), ErrUnsupported, `pre_tokenizer: pre-tokenizer "Whitespace" is not supported`},
		{"after byte level", tiny("", `{"type":"Sequence","pretokenizers":[{"type":"ByteLevel"},{"type":"Digits"}]}`, ""), ErrUnsupported, `pre_tokenizer.pretokenizers[1]: a pre-tokenizer after ByteLevel`},
		{"bad regex", tiny("", `{"type":"Split","pattern":{"Regex":"(unclosed"},"behavior":"Isolated"}`, ""), ErrUnsupported, `pre_tokenizer.pattern: regex "(unclosed" does not compile`},
		{"bad behavior", tiny("", `{"type":"Split","pattern":{"String":" "},"behavior":"Sideways"}`, ""), ErrUnsupported, `split behavior "Sideways"`},
		{"dropout", tiny("", "", `{"type":"BPE","dropout":0.1,"vocab":{},"merges":[]}`), ErrUnsupported, `model.dropout`},
		{"prefix", tiny("", "", `{"type":"BPE","continuing_subword_prefix":"##","vocab":{},"merges":[]}`), ErrUnsupported, `continuing_subword_prefix`},
		{"merge out of vocab", tiny("", "", `{"type":"BPE","vocab":{"a":0},"merges":["a c"]}`), ErrInvalid, `model.merges[0]: merge "a" + "c"`},
		{"unk out of vocab", tiny("", "", `{"type":"BPE","unk_token":"<unk>","vocab":{"a":0},"merges":[]}`), ErrInvalid, `model.unk_token`},
		{"not json", `{"model":`, ErrInvalid, `not a tokenizer.json`},
		{"no model", `{"added_tokens":[]}`, ErrInvalid, `model: missing`},
		{"lstrip", strings.Replace(tiny("", "", ""), `"added_tokens":[]`, `"added_tokens":[{"id":9,"content":"<x>","lstrip":true}]`, 1), ErrUnsupported, `added_tokens[0]: added token "<x>": lstrip`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.json), "tok.json")
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "hftok: tok.json: ") {
			t.Errorf("%s: error %q lacks %q", c.name, err, c.msg)
		}
	}
}

func TestTinyByteLevel(t *testing.T) {
	tok, err := Parse([]byte(tiny("", "", "")), "tok.json")
	if err != nil {
		t.Fatal(err)
	}
	// Pieces "ab", " a", " b"; only "a b" merges.
	if got, want := appendIDs(t, tok, "ab a b"), []int{2, 3, 0, 3, 1}; !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
}

// FuzzParse holds Parse to its contract on any file: it never panics; an
// error is a *LoadError naming the file and wrapping ErrInvalid or
// ErrUnsupported; and a tokenizer it loads counts and cuts any text
// within its contract.
func FuzzParse(f *testing.F) {
	f.Add([]byte(tiny("", "", "")), "ab a b")
	f.Add([]byte(tiny(`{"type":"NFC"}`, `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\p{N}{1,3}"},"behavior":"Isolated"},{"type":"ByteLevel","add_prefix_space":true,"use_regex":false}]}`, "")), "ab 123\U00010D40")
	f.Add([]byte(tiny(`{"type":"Replace","pattern":{"String":" "},"content":"▁"}`, `{"type":"Metaspace","replacement":"▁","prepend_scheme":"first"}`,
		`{"type":"BPE","byte_fallback":true,"unk_token":"<unk>","fuse_unk":true,"vocab":{"<unk>":0,"a":1,"▁":2,"<0x62>":3},"merges":[["▁","a"]]}`)), "a b  c")
	f.Add([]byte(tiny("", `{"type":"Digits","individual_digits":true}`, "")), "x1234")
	f.Add([]byte(strings.Replace(tiny("", "", ""), `"added_tokens":[]`, `"added_tokens":[{"id":9,"content":"<x>","normalized":true}]`, 1)), "a<x>b")
	f.Add([]byte(tiny("", `{"type":"Split","pattern":{"Regex":"(a|b)+"},"behavior":"Isolated"}`, "")), "ab")
	f.Add([]byte(`{"model":`), "")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tok, err := Parse(data, "f.json")
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) || le.File != "f.json" || !(errors.Is(err, ErrInvalid) || errors.Is(err, ErrUnsupported)) {
				t.Fatalf("error %v (%T) is not a LoadError about f.json", err, err)
			}
			return
		}
		n := tok.Count(text)
		if n < 0 || n > tok.Factor()*len(text) {
			t.Fatalf("Count(%q) = %d, outside [0, %d]", text, n, tok.Factor()*len(text))
		}
		for _, m := range []int{0, 1, n / 2, n} {
			cut := tok.Cut(text, m)
			if !strings.HasPrefix(text, cut) || tok.Count(cut) > m {
				t.Fatalf("Cut(%q, %d) = %q counts %d", text, m, cut, tok.Count(cut))
			}
		}
	})
}
