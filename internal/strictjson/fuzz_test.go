package strictjson_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contextasm/contextasm/internal/strictjson"
)

// FuzzCheck compares Check on valid JSON with a reference built on
// encoding/json's tokenizer: the same keys refused, at the same paths, in
// the same order. On invalid JSON Check must only not panic.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"request_id":"a","scope":"global"}`,
		`{"scope":"session","SCOPE":"global"}`,
		`{"scope":1,"\u0073cope":2}`,
		`{"provenance":{"sourceid":"x","uri":"u","uri":"v"}}`,
		`{"sections":[{"URI":1},{"uri":2,"uri":3}],"labels":{"a":1,"a":2}}`,
		`{"any":[{"x":{"y":1,"y":2}}],"meta":{"k":{"Uri":1}}}`,
		`{"at":{"x":1},"bogus":{"b":1,"b":1}}`,
		`[{"a":1},{"a":1,"a":1}]`,
		`{"a":`, `{"a" 1}`, `{"\u00`, `"x`, `{,}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := schema.Check(data)
		if !json.Valid(data) || !utf8.Valid(data) { // callers refuse invalid UTF-8 first
			return
		}
		for _, p := range got {
			if p.Offset < 0 || p.Offset >= len(data) || data[p.Offset] != '"' {
				t.Fatalf("%s: offset %d is not a key", p.Path, p.Offset)
			}
		}
		want := reference(t, data)
		var g []string
		for _, p := range got {
			g = append(g, fmt.Sprintf("%d %s", p.Kind, p.Path))
		}
		if !slices.Equal(g, want) {
			t.Fatalf("Check: %q\nreference: %q\non %s", g, want, data)
		}
	})
}

// reference walks data with json.Decoder.Token against the test type's
// shape, spelled out by hand.
func reference(t *testing.T, data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []string
	var walk func(shape, path string, skip bool)
	fields := map[string]map[string]string{ // shape -> field -> shape of its value
		"doc": {"flat": "", "request_id": "", "scope": "", "semantic_weight": "", "provenance": "inner",
			"sections": "[]inner", "labels": "map", "meta": "map inner", "any": "", "at": "opaque", "NoTag": ""},
		"inner": {"source_id": "", "uri": ""},
	}
	join := func(path, key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	walk = func(shape, path string, skip bool) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				key := k.(string)
				p := join(path, key)
				// The raw spelling is what Check reports; recover it.
				child, childSkip := "", skip
				if !skip && seen[key] {
					out = append(out, fmt.Sprintf("%d %s", strictjson.KindDuplicate, p))
					childSkip = true
				} else if fs, ok := fields[shape]; ok && !skip {
					if s, ok := fs[key]; ok {
						child = s
					} else {
						kind := strictjson.KindUnknown
						for name := range fs {
							if equalFold(name, key) {
								kind = strictjson.KindCase
							}
						}
						out = append(out, fmt.Sprintf("%d %s", kind, p))
						childSkip = true
					}
				} else if shape == "map inner" {
					child = "inner"
				}
				seen[key] = true
				walk(child, p, childSkip)
			}
			dec.Token()
		case json.Delim('['):
			elem := ""
			if len(shape) > 2 && shape[:2] == "[]" {
				elem = shape[2:]
			}
			for i := 0; dec.More(); i++ {
				walk(elem, fmt.Sprintf("%s[%d]", path, i), skip)
			}
			dec.Token()
		}
	}
	walk("doc", "", false)
	return out
}

func equalFold(a, b string) bool { return strings.EqualFold(a, b) }
