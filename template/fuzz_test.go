package template_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/template"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// FuzzParse: Parse never panics, fails only with ErrInvalid problems that
// name the file, and a template it accepts has a well-formed fingerprint
// that its canonical JSON reproduces.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		``, `{}`, `[]`, `null`, `{"budget": 1}`,
		`{"budget":10,"sections":[{"name":"a","priority":1,"memory_types":["context"],"max_tokens":5,"render":"{content}","separator":""}]}`,
		`{"budget":10,"sections":[{"name":"a","priority":1,"memory_types":["context"],"max_tokens":5,"render":"{{content}}{ x }{}{","separator":null}]} `,
		`{"budget":10,"sections":[{"name":"a","priority":1,"memory_types":["context","context"],"max_tokens":5,"render":"{title}"}]}`,
		`{"budget":1e3,"sections":[]}`,
		`{"Budget":10,"SECTIONS":[{"Name":"a","priority":1,"memory_types":["history"],"max_tokens":5,"render":"<a>{content}</a>"}]}`,
		`{"budget":10,"budget":20,"sections":[{"name":"a","priority":"1","memory_types":"history","max_tokens":5,"rendr":"{content}"},7]}`,
		"\xEF\xBB\xBF{\"budget\":10,\"sections\":[{\"name\":\"a\",\"priority\":1,\"memory_types\":[\"context\"],\"max_tokens\":5,\"render\":\"{content}\"}]}",
		"\xFE\xFF\x00{", "{\"budget\":\"caf\xe9\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tpl, err := template.Parse(data, "fuzz.json")
		if err != nil {
			var ve *template.ValidationError
			if !errors.Is(err, template.ErrInvalid) || !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("Parse error %v is not a ValidationError with problems", err)
			}
			for _, p := range ve.Problems {
				if p.File != "fuzz.json" || p.Message == "" {
					t.Fatalf("problem %+v lacks its file or message", p)
				}
			}
			return
		}
		fp := tpl.Fingerprint()
		if !fpPattern.MatchString(fp) {
			t.Fatalf("Fingerprint() = %q", fp)
		}
		canon := tpl.Canonical()
		again, err := template.Parse(canon, "canonical.json")
		if err != nil {
			t.Fatalf("re-parsing the canonical JSON %s: %v", canon, err)
		}
		if again.Fingerprint() != fp {
			t.Fatalf("canonical JSON %s has fingerprint %s, the template %s", canon, again.Fingerprint(), fp)
		}
		if string(again.Canonical()) != string(canon) {
			t.Fatalf("Canonical() is not a fixed point:\n%s\n%s", canon, again.Canonical())
		}
		compiled, err := template.Compile(tpl.Definition())
		if err != nil || compiled.Fingerprint() != fp {
			t.Fatalf("Compile(Definition()) = %v, %v; want fingerprint %s", compiled, err, fp)
		}
		if tpl.Header() == "" || len(tpl.Protected()) == 0 || tpl.NumSections() == 0 {
			t.Fatal("an accepted template lacks its header, protected strings or sections")
		}
		for k := range tpl.NumSections() {
			s := tpl.Section(tpl.ByPriority(k))
			out, _ := s.AppendRender(nil, template.Fields{Content: "\x00"})
			if !strings.Contains(string(out), "\x00") {
				t.Fatalf("section %s renders %q without its content", s.Name(), out)
			}
		}
	})
}
