package template_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/contextasm/contextasm/template"
)

const goodSection = `{"name": "A", "priority": 1, "memory_types": ["context"], "max_tokens": 10, "render": "{content}"}`

// Keys encoding/json would take silently: a repeated one keeps the last
// value, a case variant is matched to the field. Both are refused.
func TestParseStrictKeys(t *testing.T) {
	tests := []struct {
		name, src string
		want      []template.Problem
	}{
		{"a repeated key", "{\"budget\": 10,\n \"budget\": 100000, \"sections\": [" + goodSection + "]}",
			[]template.Problem{{Line: 2, Field: "budget", Message: "given twice in one object; each field may appear once"}}},
		{"a case variant", "{\"budget\": 10, \"sections\": [" + goodSection + "],\n \"BUDGET\": 100000}",
			[]template.Problem{{Line: 2, Field: "BUDGET", Message: `unknown field: field names are case-sensitive (did you mean "budget"?)`}}},
		{"a case variant alone is one problem, not also a missing budget", `{"Budget": 10, "sections": [` + goodSection + `]}`,
			[]template.Problem{{Line: 1, Field: "Budget", Message: `unknown field: field names are case-sensitive (did you mean "budget"?)`}}},
		{"a repeated key in a section", `{"budget": 10, "sections": [` + goodSection + `, {"name": "B", "priority": 2, "memory_types": ["history"], "max_tokens": 10, "render": "{content}", "max_tokens": 99999}]}`,
			[]template.Problem{{Line: 1, Field: "sections[1].max_tokens", Message: "given twice in one object; each field may appear once"}}},
		{"a misspelt section field", `{"budget": 10, "sections": [{"name": "A", "priority": 1, "memory_types": ["context"], "max_tokens": 10, "rendr": "{content}"}]}`,
			[]template.Problem{{Line: 1, Field: "sections[0].rendr", Message: `unknown field (did you mean "render"?)`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := template.Parse([]byte(tt.src), "t.json")
			for i := range tt.want {
				tt.want[i].File = "t.json"
			}
			if got := problems(t, err); !slices.Equal(got, tt.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", list(got), list(tt.want))
			}
		})
	}
}

// Type errors no longer hide the other problems: every field that does
// not decode is reported with its path and line, and every rule the rest
// breaks, as for declarations.
func TestParseReportsTypeAndRuleProblemsTogether(t *testing.T) {
	src := `{
  "budget": "4096",
  "encoding": "gpt2",
  "sections": [
    {"name": "A", "priority": "high", "memory_types": ["context"], "max_tokens": 10, "render": "{title}"},
    "not a section",
    {"name": "C", "priority": 3, "memory_types": "history", "max_tokens": -5, "render": "{content}", "partial": "yes"}
  ]
}`
	_, err := template.Parse([]byte(src), "t.json")
	want := []template.Problem{
		{Line: 2, Field: "budget", Message: "wrong type: want integer, got JSON string"},
		{Line: 5, Field: "sections[0].priority", Message: "wrong type: want integer, got JSON string"},
		{Line: 6, Field: "sections[1]", Message: "wrong type: want object, got JSON string"},
		{Line: 7, Field: "sections[2].memory_types", Message: "wrong type: want array, got JSON string"},
		{Line: 7, Field: "sections[2].partial", Message: "wrong type: want boolean, got JSON string"},
		{Line: 3, Field: "encoding", Message: `must be o200k_base, cl100k_base, approx:NAME or a tokenizer file (got "gpt2", and there is no file gpt2)`},
		{Line: 5, Field: "sections[0].render", Message: "unknown placeholder {title} (want {content}, {request_id}, {memory_type} or {source_id})"},
		{Line: 7, Field: "sections[2].max_tokens", Message: "must be a positive number of tokens (got -5)"},
	}
	for i := range want {
		want[i].File = "t.json"
	}
	if got := problems(t, err); !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", list(got), list(want))
	}
}

// A UTF-8 byte-order mark is accepted; UTF-16 and invalid UTF-8 are named.
func TestParseTextEncodings(t *testing.T) {
	src := `{"budget": 10, "sections": [` + goodSection + `]}`
	plain := mustParse(t, src)
	withBOM, err := template.Parse([]byte("\xEF\xBB\xBF"+src), "t.json")
	if err != nil {
		t.Fatalf("UTF-8 with a byte-order mark: %v", err)
	}
	if withBOM.Fingerprint() != plain.Fingerprint() {
		t.Error("the byte-order mark changed the template")
	}
	var u16 []byte
	u16 = append(u16, 0xFF, 0xFE)
	for _, u := range utf16.Encode([]rune(src)) {
		u16 = append(u16, byte(u), byte(u>>8))
	}
	for _, tt := range []struct {
		name string
		in   []byte
		want template.Problem
	}{
		{"UTF-16", u16, template.Problem{File: "t.json", Line: 1,
			Message: "the file is UTF-16LE (byte-order mark FF FE); templates must be UTF-8 (with or without a byte-order mark)"}},
		{"invalid UTF-8", []byte("{\"budget\": 10,\n\"sections\": [{\"name\": \"caf\xe9\"}]}"), template.Problem{File: "t.json", Line: 2,
			Message: "invalid UTF-8 at byte 41"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := template.Parse(tt.in, "t.json")
			if got := problems(t, err); len(got) != 1 || got[0] != tt.want {
				t.Errorf("problems:\n%s\nwant:\n\t%s", list(got), tt.want)
			}
			if strings.Contains(err.Error(), "invalid character") {
				t.Errorf("the message should name the encoding, not a character: %v", err)
			}
		})
	}
}

// A template file is read up to MaxFileBytes, not whole whatever its size.
func TestLoadFileBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, append([]byte(`{"budget": 10, "x": "`), make([]byte, template.MaxFileBytes)...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := template.LoadFile(big)
	if got := problems(t, err); len(got) != 1 || got[0].File != big ||
		got[0].Message != "the file is larger than 1048576 bytes, the most a template may be (template.MaxFileBytes)" {
		t.Errorf("problems:\n%s", list(got))
	}
	ok := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(ok, []byte(`{"budget": 10, "sections": [`+goodSection+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := template.LoadFile(ok); err != nil {
		t.Error(err)
	}
}
