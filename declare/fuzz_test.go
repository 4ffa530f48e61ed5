package declare_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/contextasm/contextasm/declare"
)

// FuzzLoad checks the loader's promises on any input: it never panics; it
// returns either declarations, all valid, one per declaration line, or a
// *ValidationError whose problems point at lines of the input; and what it
// returns writes back as JSON that loads to the same thing.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"valid.jsonl", "invalid.jsonl", "chat/valid.jsonl", "chat/invalid.jsonl", "chat/orphans.jsonl", "degrade/valid.jsonl", "degrade/invalid.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for l := range bytes.Lines(b) {
			f.Add(l)
		}
	}
	for _, s := range []string{
		"", "\n", "#\r\n", "\r", "null", "{}", "[]", `"x"`, "{", "}{",
		"{\"request_id\":\"a\",\"content\":\"\xff\"}",
		`{"request_id":"a","memory_type":"context","scope":"global","content":"x"}}`,
		`{"request_id":"a","valid_until":"x","valid_until":1,"memory_type":"context","scope":"global","content":"x"}`,
		`{"request_id":"a","memory_type":"context","scope":"global","content":"x","provenance":{"uri":1,"x":2}}`,
		`{"request_id":"a","memory_type":"context","scope":"global","content":"x","stale_after":1e300,"valid_until":-1e11}`,
		`{"request_id":"a","memory_type":"context","scope":"session","session_id":"s","content":"x","SCOPE":"global"}`,
		`{"request_id":"a","memory_type":"context","scope":"global","content":"x","\u0073cope":"user","sematic_weight":1,"source_id":"y"}`,
		"\xEF\xBB\xBF" + `{"request_id":"a","memory_type":"context","scope":"global","content":"x"}`,
		"\xFF\xFE{\x00\"\x00", "{\x00\"\x00a\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		decls, err := declare.Load(bytes.NewReader(in), "fuzz.jsonl")
		lines := bytes.Count(in, []byte("\n")) + 1
		if err != nil {
			if decls != nil {
				t.Fatalf("%d declarations returned with an error", len(decls))
			}
			var ve *declare.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, declare.ErrInvalid) {
				t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
			}
			if len(ve.Problems) == 0 {
				t.Fatal("ValidationError without problems")
			}
			for _, p := range ve.Problems {
				if p.Line < 1 || p.Line > lines || p.File != "fuzz.jsonl" || p.Message == "" {
					t.Fatalf("problem %+v outside the input's %d lines", p, lines)
				}
			}
			return
		}

		want := 0
		for l := range bytes.Lines(in) {
			if s := bytes.TrimSpace(l); len(s) > 0 && s[0] != '#' {
				want++
			}
		}
		if len(decls) != want {
			t.Fatalf("%d declarations from %d declaration lines", len(decls), want)
		}
		seen := make(map[string]bool)
		for i := range decls {
			if err := declare.Validate(&decls[i]); err != nil {
				t.Fatalf("Load returned an invalid declaration: %v", err)
			}
			if seen[decls[i].RequestID] {
				t.Fatalf("duplicate request_id %q loaded", decls[i].RequestID)
			}
			seen[decls[i].RequestID] = true
		}

		// Written back, it loads to the same JSON.
		var out bytes.Buffer
		for i := range decls {
			b, err := json.Marshal(&decls[i])
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			out.Write(b)
			out.WriteByte('\n')
		}
		again, err := declare.Load(bytes.NewReader(out.Bytes()), "again.jsonl")
		if err != nil {
			t.Fatalf("what Load returned does not load again: %v\n%s", err, out.Bytes())
		}
		var out2 bytes.Buffer
		for i := range again {
			b, _ := json.Marshal(&again[i])
			out2.Write(b)
			out2.WriteByte('\n')
		}
		if !bytes.Equal(out.Bytes(), out2.Bytes()) {
			t.Fatalf("round trip changed:\n%s\n%s", out.Bytes(), out2.Bytes())
		}
	})
}
