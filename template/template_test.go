package template_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/fingerprint"
	"github.com/contextasm/contextasm/template"
)

func mustParse(t testing.TB, src string) *template.Template {
	t.Helper()
	tpl, err := template.Parse([]byte(src), "test.json")
	if err != nil {
		t.Fatalf("Parse:\n%v\nsource: %s", err, src)
	}
	return tpl
}

func mustLoad(t testing.TB, name string) *template.Template {
	t.Helper()
	tpl, err := template.LoadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("LoadFile(%s): %v", name, err)
	}
	return tpl
}

func ptr[T any](v T) *T { return &v }

func TestLoadSpecExample(t *testing.T) {
	tpl := mustLoad(t, "spec_example.json")
	if tpl.Version() != "1.2" || tpl.Budget() != 4096 || tpl.Encoding() != "o200k_base" {
		t.Errorf("Version, Budget, Encoding = %q, %d, %q", tpl.Version(), tpl.Budget(), tpl.Encoding())
	}
	type want struct {
		name      string
		priority  int
		types     []declare.MemoryType
		maxTokens int
		sep       string
		fill      template.Fill
		order     template.Order
		partial   bool
		minPart   int
	}
	wants := []want{
		{"CORE_CONSTRAINTS", 1, []declare.MemoryType{declare.Constraint}, 512, "\n", template.FillStop, template.OrderRank, false, 32},
		{"USER_CONTEXT", 2, []declare.MemoryType{declare.Context, declare.External}, 1024, "\n", template.FillSkip, template.OrderRank, false, 32},
		{"HISTORY", 3, []declare.MemoryType{declare.History}, 2048, "\n", template.FillSkip, template.OrderTime, true, 32}, // the history default
	}
	if tpl.NumSections() != len(wants) {
		t.Fatalf("NumSections = %d, want %d", tpl.NumSections(), len(wants))
	}
	for i, w := range wants {
		s := tpl.Section(i)
		got := want{s.Name(), s.Priority(), s.MemoryTypes(), s.MaxTokens(), s.Separator(), s.Fill(), s.Order(), s.Partial(), s.MinPartialTokens()}
		if !slices.Equal(got.types, w.types) || got.name != w.name || got.priority != w.priority || got.maxTokens != w.maxTokens ||
			got.sep != w.sep || got.fill != w.fill || got.order != w.order || got.partial != w.partial || got.minPart != w.minPart {
			t.Errorf("Section(%d) = %+v\nwant %+v", i, got, w)
		}
		if s.Index() != i {
			t.Errorf("Section(%d).Index() = %d", i, s.Index())
		}
	}

	// Definition shows the defaults filled in.
	def := tpl.Definition()
	if def.TemplateVersion != "1.2" || def.Encoding != "o200k_base" || def.Budget != 4096 {
		t.Errorf("Definition = %+v", def)
	}
	for i, sd := range def.Sections {
		if sd.Separator == nil || *sd.Separator != "\n" {
			t.Errorf("Definition().Sections[%d].Separator = %v, want \"\\n\"", i, sd.Separator)
		}
		if sd.Fill != wants[i].fill || sd.Order != wants[i].order || sd.MinPartialTokens != 32 {
			t.Errorf("Definition().Sections[%d] = %+v", i, sd)
		}
	}
	if h, fp := tpl.Header(), tpl.Fingerprint(); h != fingerprint.Header(fp) {
		t.Errorf("Header = %q, want fingerprint.Header(%q)", h, fp)
	}
}

func TestDefaultsConstants(t *testing.T) {
	if template.DefaultVersion != "1.2" || template.DefaultEncoding != "o200k_base" || template.DefaultSeparator != "\n" ||
		template.DefaultFill != template.FillStop || template.DefaultOrder != template.OrderRank || template.DefaultMinPartialTokens != 32 {
		t.Error("the defaults differ from docs/templates.md")
	}
}

// Definition returns a copy: changing it does not change the template.
func TestDefinitionIsACopy(t *testing.T) {
	tpl := mustLoad(t, "spec_example.json")
	fp := tpl.Fingerprint()
	def := tpl.Definition()
	def.Budget = 1
	def.Sections[1].MemoryTypes[0] = declare.History
	*def.Sections[0].Separator = "MUTATED"
	def.Sections[0].Render = "{content}"
	types := tpl.Section(1).MemoryTypes()
	types[0] = declare.History

	if tpl.Budget() != 4096 || tpl.Section(0).Separator() != "\n" || tpl.Fingerprint() != fp {
		t.Error("changing Definition() changed the template")
	}
	if got := tpl.Definition(); *got.Sections[0].Separator != "\n" || got.Sections[1].MemoryTypes[0] != declare.Context {
		t.Errorf("changing Definition() changed later Definitions: %+v", got)
	}
	if i, _ := tpl.SectionFor(declare.Context); i != 1 {
		t.Errorf("changing MemoryTypes() changed routing: SectionFor(context) = %d", i)
	}
	if !strings.Contains(string(tpl.Canonical()), `"separator":"\n"`) {
		t.Errorf("changing Definition() changed Canonical(): %s", tpl.Canonical())
	}
}

func TestLoadFileMissing(t *testing.T) {
	_, err := template.LoadFile(filepath.Join("testdata", "no_such_file.json"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "template: ") {
		t.Errorf("LoadFile(missing) = %v, want a template: error wrapping fs.ErrNotExist", err)
	}
}

// base is a valid template as generic JSON values, for tests to break.
func base() map[string]any {
	return map[string]any{
		"budget": 1000,
		"sections": []any{
			map[string]any{"name": "A", "priority": 1, "memory_types": []any{"constraint"}, "max_tokens": 100, "render": "<a>{content}</a>"},
			map[string]any{"name": "B", "priority": 2, "memory_types": []any{"context"}, "max_tokens": 100, "render": "{content}"},
		},
	}
}

func sec(m map[string]any, i int) map[string]any { return m["sections"].([]any)[i].(map[string]any) }

func encode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func problems(t *testing.T, err error) []template.Problem {
	t.Helper()
	if !errors.Is(err, template.ErrInvalid) {
		t.Fatalf("error %v does not wrap ErrInvalid", err)
	}
	var ve *template.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %T is not a *ValidationError", err)
	}
	return ve.Problems
}

func TestParseErrors(t *testing.T) {
	if _, err := template.Parse(encode(t, base()), "t.json"); err != nil {
		t.Fatalf("the base template is invalid: %v", err)
	}
	tests := []struct {
		name   string
		change func(m map[string]any)
		field  string
		msg    string
	}{
		{"unknown placeholder", func(m map[string]any) { sec(m, 0)["render"] = "<a title={title}>{content}</a>" }, "sections[0].render", "unknown placeholder {title}"},
		{"placeholder names are case-sensitive", func(m map[string]any) { sec(m, 1)["render"] = "{Content}" }, "sections[1].render", "unknown placeholder {Content}"},
		{"content missing", func(m map[string]any) { sec(m, 0)["render"] = "<a>{request_id}</a>" }, "sections[0].render", "{content} exactly once (found 0)"},
		{"content twice", func(m map[string]any) { sec(m, 1)["render"] = "{content}/{content}" }, "sections[1].render", "{content} exactly once (found 2)"},
		{"render missing", func(m map[string]any) { delete(sec(m, 0), "render") }, "sections[0].render", "(found 0)"},
		{"budget zero", func(m map[string]any) { m["budget"] = 0 }, "budget", "positive"},
		{"budget negative", func(m map[string]any) { m["budget"] = -4096 }, "budget", "(got -4096)"},
		{"budget missing", func(m map[string]any) { delete(m, "budget") }, "budget", "positive"},
		{"max_tokens zero", func(m map[string]any) { sec(m, 1)["max_tokens"] = 0 }, "sections[1].max_tokens", "positive"},
		{"max_tokens negative", func(m map[string]any) { sec(m, 0)["max_tokens"] = -1 }, "sections[0].max_tokens", "(got -1)"},
		{"duplicate section names", func(m map[string]any) { sec(m, 1)["name"] = "A" }, "sections[1].name", `duplicate section name "A" (also sections[0])`},
		{"name missing", func(m map[string]any) { delete(sec(m, 0), "name") }, "sections[0].name", "required"},
		{"unknown memory type", func(m map[string]any) { sec(m, 1)["memory_types"] = []any{"memo"} }, "sections[1].memory_types[0]", `unknown memory type "memo"`},
		{"memory type wrong case", func(m map[string]any) { sec(m, 0)["memory_types"] = []any{"Constraint"} }, "sections[0].memory_types[0]", `unknown memory type "Constraint"`},
		{"memory type listed twice", func(m map[string]any) { sec(m, 1)["memory_types"] = []any{"context", "history", "context"} }, "sections[1].memory_types[2]", `"context" listed twice`},
		{"no memory types", func(m map[string]any) { sec(m, 0)["memory_types"] = []any{} }, "sections[0].memory_types", "at least one"},
		{"unknown fill", func(m map[string]any) { sec(m, 0)["fill"] = "maybe" }, "sections[0].fill", `stop or skip (got "maybe")`},
		{"unknown order", func(m map[string]any) { sec(m, 1)["order"] = "random" }, "sections[1].order", `rank, declared or time (got "random")`},
		{"priority zero", func(m map[string]any) { sec(m, 0)["priority"] = 0 }, "sections[0].priority", "1 or more"},
		{"priority negative", func(m map[string]any) { sec(m, 1)["priority"] = -2 }, "sections[1].priority", "(got -2)"},
		{"negative min_partial_tokens", func(m map[string]any) { sec(m, 1)["min_partial_tokens"] = -1 }, "sections[1].min_partial_tokens", "negative (got -1)"},
		{"template_version too long", func(m map[string]any) { m["template_version"] = strings.Repeat("v", 65) }, "template_version", "1 to 64 printable characters"},
		{"template_version with a newline", func(m map[string]any) { m["template_version"] = "2.0\nrc" }, "template_version", `(got "2.0\nrc")`},
		{"unknown encoding", func(m map[string]any) { m["encoding"] = "p50k_base" }, "encoding", `o200k_base, cl100k_base, approx:NAME or a tokenizer file (got "p50k_base", and there is no file p50k_base)`},
		{"no sections", func(m map[string]any) { m["sections"] = []any{} }, "sections", "at least one section"},
		{"sections missing", func(m map[string]any) { delete(m, "sections") }, "sections", "at least one section"},
		{"joiner in render", func(m map[string]any) { sec(m, 0)["render"] = "<a>{content}\u2060</a>" }, "sections[0].render", "U+2060"},
		{"joiner in separator", func(m map[string]any) { sec(m, 1)["separator"] = "\u2060" }, "sections[1].separator", "U+2060"},
		{"relevance above 1", func(m map[string]any) { sec(m, 1)["relevance"] = 1.5 }, "sections[1].relevance", "from 0 to 1 (got 1.5)"},
		{"relevance negative", func(m map[string]any) { sec(m, 0)["relevance"] = -0.1 }, "sections[0].relevance", "(got -0.1)"},
		{"recency negative", func(m map[string]any) { sec(m, 1)["recency"] = -1 }, "sections[1].recency", "from 0 to 1000 (got -1)"},
		{"recency half-age zero", func(m map[string]any) { sec(m, 1)["recency_half_age"] = "0s" }, "sections[1].recency_half_age", "positive duration"},
		{"recency half-age not a duration", func(m map[string]any) { sec(m, 1)["recency_half_age"] = "soon" }, "sections[1].recency_half_age", `"168h"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base()
			tt.change(m)
			tpl, err := template.Parse(encode(t, m), "t.json")
			if tpl != nil {
				t.Error("Parse returned a template with an error")
			}
			ps := problems(t, err)
			if len(ps) != 1 {
				t.Fatalf("got %d problems, want 1:\n%v", len(ps), err)
			}
			p := ps[0]
			if p.File != "t.json" || p.Field != tt.field || !strings.Contains(p.Message, tt.msg) {
				t.Errorf("problem = %+v\nwant file t.json, field %q, message containing %q", p, tt.field, tt.msg)
			}
			if want := "template: t.json:1: " + tt.field + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Error() = %q, want it to start with %q", err, want)
			}
		})
	}
}

// TestParseJSONErrors covers what the JSON decoder rejects before any
// validation: each is reported alone, naming the field or line it can.
func TestParseJSONErrors(t *testing.T) {
	const okSection = `{"name": "A", "priority": 1, "memory_types": ["context"], "max_tokens": 10, "render": "{content}"}`
	tests := []struct {
		name, src string
		want      template.Problem
	}{
		{
			"unknown top-level field",
			`{"budget": 10, "bugdet": 10, "sections": [` + okSection + `]}`,
			template.Problem{File: "t.json", Line: 1, Field: "bugdet", Message: `unknown field (did you mean "budget"?)`},
		},
		{
			"unknown section field",
			`{"budget": 10, "sections": [{"name": "A", "priority": 1, "colour": "red", "memory_types": ["context"], "max_tokens": 10, "render": "{content}"}]}`,
			template.Problem{File: "t.json", Line: 1, Field: "sections[0].colour", Message: "unknown field"},
		},
		{
			"wrong type at the top",
			"{\n  \"budget\": \"4096\",\n  \"sections\": [" + okSection + "]\n}",
			template.Problem{File: "t.json", Line: 2, Field: "budget", Message: "wrong type: want integer, got JSON string"},
		},
		{
			"wrong type in a section",
			"{\"budget\": 10,\n \"sections\": [\n" + `{"name": "A", "priority": 1.5, "memory_types": ["context"], "max_tokens": 10, "render": "{content}"}]}`,
			template.Problem{File: "t.json", Line: 3, Field: "sections[0].priority", Message: "wrong type: want integer, got JSON number 1.5"},
		},
		{
			"wrong type: partial as a string",
			`{"budget": 10, "sections": [{"name": "A", "priority": 1, "memory_types": ["context"], "max_tokens": 10, "render": "{content}", "partial": "yes"}]}`,
			template.Problem{File: "t.json", Line: 1, Field: "sections[0].partial", Message: "wrong type: want boolean, got JSON string"},
		},
		{
			"not an object",
			`[` + okSection + `]`,
			template.Problem{File: "t.json", Line: 1, Message: "wrong type: want object, got JSON array"},
		},
		{
			"syntax error, with its line",
			"{\n  \"budget\": 10,\n  \"sections\": [,]\n}",
			template.Problem{File: "t.json", Line: 3, Message: "invalid JSON: invalid character ',' looking for beginning of value"},
		},
		{
			"syntax error: trailing comma",
			"{\"budget\": 10,\n\"sections\": [" + okSection + "],\n}",
			template.Problem{File: "t.json", Line: 3, Message: "invalid JSON: invalid character '}' looking for beginning of object key string"},
		},
		{
			"incomplete",
			`{"budget": 10, "sections": [`,
			template.Problem{File: "t.json", Message: "invalid JSON: the template is incomplete"},
		},
		{"empty file", ``, template.Problem{File: "t.json", Message: "invalid JSON: the template is incomplete"}},
		{
			"trailing object",
			`{"budget": 10, "sections": [` + okSection + `]} {}`,
			template.Problem{File: "t.json", Message: "unexpected data after the template object"},
		},
		{
			"trailing garbage",
			`{"budget": 10, "sections": [` + okSection + `]}}`,
			template.Problem{File: "t.json", Message: "unexpected data after the template object"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := template.Parse([]byte(tt.src), "t.json")
			ps := problems(t, err)
			if len(ps) != 1 || ps[0] != tt.want {
				t.Errorf("problems = %+v\nwant [%+v]", ps, tt.want)
			}
		})
	}
	// Trailing whitespace is not trailing data.
	if _, err := template.Parse([]byte(`{"budget": 10, "sections": [`+okSection+"]}\n\n  \t"), "t.json"); err != nil {
		t.Errorf("trailing whitespace: %v", err)
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    template.Problem
		want string
	}{
		{template.Problem{File: "a.json", Line: 3, Field: "budget", Message: "bad"}, "a.json:3: budget: bad"},
		{template.Problem{File: "a.json", Field: "sections[1].render", Message: "bad"}, "a.json: sections[1].render: bad"},
		{template.Problem{Field: "budget", Message: "bad"}, "budget: bad"},
		{template.Problem{Message: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.p, got, tt.want)
		}
	}
}

// A template with many problems reports every one of them, in order.
func TestParseReportsAllProblems(t *testing.T) {
	src := `{
  "template_version": "2.0\t",
  "budget": 0,
  "encoding": "gpt2",
  "sections": [
    {"name": "", "priority": 0, "memory_types": ["bogus", "context", "context"], "max_tokens": -1,
     "render": "{title}", "fill": "x", "order": "y", "min_partial_tokens": -2},
    {"name": "B", "priority": 1, "memory_types": ["history"], "max_tokens": 10, "render": "{content}"},
    {"name": "B", "priority": 2, "memory_types": [], "max_tokens": 0, "render": "<b>{content}{content}</b>"}
  ]
}`
	_, err := template.Parse([]byte(src), "many.json")
	want := []template.Problem{
		{Line: 2, Field: "template_version", Message: `must be a label of 1 to 64 printable characters, such as "2.0" or "2026-11-checkout" (got "2.0\t")`},
		{Line: 3, Field: "budget", Message: "must be a positive number of tokens (got 0)"},
		{Line: 4, Field: "encoding", Message: `must be o200k_base, cl100k_base, approx:NAME or a tokenizer file (got "gpt2", and there is no file gpt2)`},
		{Line: 6, Field: "sections[0].name", Message: "is required"},
		{Line: 6, Field: "sections[0].priority", Message: "must be 1 or more; 1 is the most important (got 0)"},
		{Line: 6, Field: "sections[0].memory_types[0]", Message: `unknown memory type "bogus" (want constraint, context, history or external)`},
		{Line: 6, Field: "sections[0].memory_types[2]", Message: `memory type "context" listed twice`},
		{Line: 6, Field: "sections[0].max_tokens", Message: "must be a positive number of tokens (got -1)"},
		{Line: 7, Field: "sections[0].fill", Message: `must be stop or skip (got "x")`},
		{Line: 7, Field: "sections[0].order", Message: `must be rank, declared or time (got "y")`},
		{Line: 7, Field: "sections[0].min_partial_tokens", Message: "must not be negative (got -2)"},
		{Line: 7, Field: "sections[0].render", Message: "unknown placeholder {title} (want {content}, {request_id}, {memory_type} or {source_id})"},
		{Line: 9, Field: "sections[2].name", Message: `duplicate section name "B" (also sections[1])`},
		{Line: 9, Field: "sections[2].memory_types", Message: "a section must take at least one memory type"},
		{Line: 9, Field: "sections[2].max_tokens", Message: "must be a positive number of tokens (got 0)"},
		{Line: 9, Field: "sections[2].render", Message: "must contain {content} exactly once (found 2)"},
	}
	for i := range want {
		want[i].File = "many.json"
	}
	got := problems(t, err)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", list(got), list(want))
	}
	// Error() has one line a problem, each prefixed with the package.
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("Error() has %d lines, want %d:\n%v", len(lines), len(want), err)
	}
	for i, l := range lines {
		if l != "template: "+want[i].String() {
			t.Errorf("line %d = %q, want %q", i, l, "template: "+want[i].String())
		}
	}
}

func list(ps []template.Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("\t" + p.String() + "\n")
	}
	return b.String()
}

func TestCompile(t *testing.T) {
	def := template.Definition{
		Budget: 100,
		Sections: []template.SectionDefinition{
			{Name: "S", Priority: 1, MemoryTypes: []declare.MemoryType{declare.History}, MaxTokens: 50, Render: "{content}"},
		},
	}
	tpl, err := template.Compile(def)
	if err != nil {
		t.Fatal(err)
	}
	// Compile and Parse of the same template agree.
	if p := mustParse(t, string(encode(t, def))); p.Fingerprint() != tpl.Fingerprint() {
		t.Errorf("Compile fingerprint %s, Parse fingerprint %s", tpl.Fingerprint(), p.Fingerprint())
	}
	def.Sections[0].MemoryTypes[0] = "bogus"
	_, err = template.Compile(def)
	ps := problems(t, err)
	if len(ps) != 1 || ps[0].File != "" || ps[0].Field != "sections[0].memory_types[0]" {
		t.Errorf("Compile problems = %+v", ps)
	}
	if tpl.Section(0).MemoryTypes()[0] != declare.History {
		t.Error("changing the Definition after Compile changed the template")
	}
}

func TestAppendRender(t *testing.T) {
	fields := template.Fields{Content: "hello", RequestID: "r-1", MemoryType: "context", SourceID: "src"}
	tests := []struct {
		render string
		want   string
	}{
		{"{content}", "hello"},
		{"【用户背景】{content}【/用户背景】", "【用户背景】hello【/用户背景】"},
		{`<doc id="{request_id}" type="{memory_type}" src="{source_id}">{content}</doc>`, `<doc id="r-1" type="context" src="src">hello</doc>`},
		{"{request_id}: {request_id}: {content}", "r-1: r-1: hello"},
		{`{"doc": "{content}"}`, `{"doc": "hello"}`},
		{`{"id": "{request_id}", "body": {content}}`, `{"id": "r-1", "body": hello}`},
		{"{ x } {content} {}", "{ x } hello {}"},
		{"{{content}}", "{hello}"},
		{"{content}{", "hello{"},
		{"}{content}{1a}{a-b}{ content}", "}hello{1a}{a-b}{ content}"},
		{"{content}\n{source_id}", "hello\nsrc"},
	}
	for _, tt := range tests {
		tpl := mustParse(t, string(encode(t, map[string]any{
			"budget":   100,
			"sections": []any{map[string]any{"name": "S", "priority": 1, "memory_types": []any{"context"}, "max_tokens": 100, "render": tt.render}},
		})))
		got, escaped := tpl.Section(0).AppendRender([]byte("PRE|"), fields)
		if string(got) != "PRE|"+tt.want || escaped {
			t.Errorf("render %q = %q, %v; want %q, false", tt.render, got, escaped, "PRE|"+tt.want)
		}
		// Empty fields render as nothing.
		got, escaped = tpl.Section(0).AppendRender(nil, template.Fields{})
		empty := strings.NewReplacer("{content}", "", "{request_id}", "", "{memory_type}", "", "{source_id}", "").Replace(tt.render)
		if string(got) != empty || escaped {
			t.Errorf("render %q of empty fields = %q, %v; want %q", tt.render, got, escaped, empty)
		}
	}
}

func TestSeparator(t *testing.T) {
	m := base()
	sec(m, 0)["separator"] = ""
	sec(m, 1)["separator"] = " | "
	tpl := mustParse(t, string(encode(t, m)))
	if got := tpl.Section(0).Separator(); got != "" {
		t.Errorf("explicit empty separator = %q", got)
	}
	if got := tpl.Section(1).Separator(); got != " | " {
		t.Errorf("separator = %q, want %q", got, " | ")
	}
	def := tpl.Definition()
	if def.Sections[0].Separator == nil || *def.Sections[0].Separator != "" {
		t.Errorf("Definition separator = %v, want explicit \"\"", def.Sections[0].Separator)
	}
	absent := mustParse(t, string(encode(t, base())))
	if got := absent.Section(0).Separator(); got != "\n" {
		t.Errorf("absent separator = %q, want \"\\n\"", got)
	}
	null := base()
	sec(null, 0)["separator"] = nil
	if got := mustParse(t, string(encode(t, null))); got.Section(0).Separator() != "\n" || got.Fingerprint() != absent.Fingerprint() {
		t.Errorf("\"separator\": null = %q, want the default", got.Section(0).Separator())
	}
	if absent.Fingerprint() == tpl.Fingerprint() {
		t.Error("explicit empty separator has the fingerprint of the default")
	}
	// Compile: nil means the default, a pointer to "" means none.
	d := absent.Definition()
	d.Sections[0].Separator = nil
	if c, err := template.Compile(d); err != nil || c.Section(0).Separator() != "\n" {
		t.Errorf("Compile with nil separator: %v", err)
	}
	d.Sections[0].Separator = ptr("")
	if c, err := template.Compile(d); err != nil || c.Section(0).Separator() != "" {
		t.Errorf("Compile with empty separator: %v", err)
	}
}

func TestSectionFor(t *testing.T) {
	// File order differs from priority order on purpose.
	tpl := mustParse(t, `{"budget": 100, "sections": [
		{"name": "A", "priority": 3, "memory_types": ["context"], "max_tokens": 10, "render": "{content}"},
		{"name": "B", "priority": 1, "memory_types": ["context", "history"], "max_tokens": 10, "render": "{content}"},
		{"name": "C", "priority": 2, "memory_types": ["history", "constraint"], "max_tokens": 10, "render": "{content}"},
		{"name": "D", "priority": 1, "memory_types": ["context"], "max_tokens": 10, "render": "{content}"}
	]}`)
	tests := []struct {
		mt     declare.MemoryType
		want   int
		wantOK bool
	}{
		{declare.Context, 1, true},    // B (priority 1, before D in the file), not A (first in the file)
		{declare.History, 1, true},    // B (priority 1), not C
		{declare.Constraint, 2, true}, // only C
		{declare.External, -1, false}, // no section takes it
		{"bogus", -1, false},
		{"", -1, false},
	}
	for _, tt := range tests {
		i, ok := tpl.SectionFor(tt.mt)
		if ok != tt.wantOK || (ok && i != tt.want) {
			t.Errorf("SectionFor(%q) = %d, %v; want %d, %v", tt.mt, i, ok, tt.want, tt.wantOK)
		}
	}
	var order []string
	for k := range tpl.NumSections() {
		order = append(order, tpl.Section(tpl.ByPriority(k)).Name())
	}
	if want := []string{"B", "D", "C", "A"}; !slices.Equal(order, want) {
		t.Errorf("ByPriority order = %v, want %v (ties in file order)", order, want)
	}

	// A tie on priority goes to the section first in the file.
	tie := mustParse(t, `{"budget": 100, "sections": [
		{"name": "X", "priority": 2, "memory_types": ["constraint"], "max_tokens": 10, "render": "{content}"},
		{"name": "Y", "priority": 2, "memory_types": ["constraint"], "max_tokens": 10, "render": "{content}"}
	]}`)
	if i, ok := tie.SectionFor(declare.Constraint); !ok || i != 0 {
		t.Errorf("tie: SectionFor(constraint) = %d, %v; want 0, true", i, ok)
	}
	if tie.ByPriority(0) != 0 || tie.ByPriority(1) != 1 {
		t.Errorf("tie: ByPriority = %d, %d; want 0, 1", tie.ByPriority(0), tie.ByPriority(1))
	}

	// The example template routes each type to the section that lists it.
	spec := mustLoad(t, "spec_example.json")
	for mt, want := range map[declare.MemoryType]int{declare.Constraint: 0, declare.Context: 1, declare.External: 1, declare.History: 2} {
		if i, ok := spec.SectionFor(mt); !ok || i != want {
			t.Errorf("spec: SectionFor(%q) = %d, %v; want %d", mt, i, ok, want)
		}
	}
}

// A compiled template is read by many goroutines at once (run with -race).
func TestConcurrentUse(t *testing.T) {
	tpl := mustLoad(t, "markup.json")
	want := make([]string, tpl.NumSections())
	for i := range want {
		b, _ := tpl.Section(i).AppendRender(nil, template.Fields{Content: "x </rule> y", RequestID: "r", SourceID: "s", MemoryType: "context"})
		want[i] = string(b)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var buf []byte
			for range 100 {
				for i := range want {
					buf, _ = tpl.Section(i).AppendRender(buf[:0], template.Fields{Content: "x </rule> y", RequestID: "r", SourceID: "s", MemoryType: "context"})
					if string(buf) != want[i] {
						t.Errorf("concurrent render %q, want %q", buf, want[i])
						return
					}
				}
				_, _ = tpl.SectionFor(declare.History)
				_ = tpl.Protected()
				_ = tpl.Definition()
			}
		})
	}
	wg.Wait()
}

func TestAppendRenderAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	tpl := mustLoad(t, "spec_example.json")
	buf := make([]byte, 0, 256)
	for i := range tpl.NumSections() {
		s := tpl.Section(i)
		allocs := testing.AllocsPerRun(100, func() {
			buf, _ = s.AppendRender(buf[:0], template.Fields{Content: "a plain block of content", RequestID: "r-1"})
		})
		if allocs != 0 {
			t.Errorf("section %s: AppendRender allocates %.0f times, want 0", s.Name(), allocs)
		}
	}
}

func BenchmarkAppendRender(b *testing.B) {
	tpl := mustLoad(b, "markup.json")
	s := tpl.Section(0)
	f := template.Fields{Content: strings.Repeat("content with </rul and <rule id= bits ", 8), RequestID: "r-1", SourceID: "src"}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = s.AppendRender(buf[:0], f)
	}
}

// template_version is the author's label: any short printable string is
// accepted, it enters the fingerprint, and the header keeps speaking the
// protocol's version.
func TestVersionIsALabel(t *testing.T) {
	const body = `"budget":100,"sections":[{"name":"A","priority":1,"memory_types":["context"],"max_tokens":50,"render":"{content}"}]}`
	absent := mustParse(t, `{`+body)
	fps := map[string]string{absent.Fingerprint(): "absent"}
	for _, v := range []string{"1.2", "2.0", "2026-11-checkout", "v3 (beta)", "结帐", strings.Repeat("x", template.MaxVersionLen)} {
		tpl := mustParse(t, `{"template_version":`+string(must(json.Marshal(v)))+`,`+body)
		if tpl.Version() != v {
			t.Errorf("Version() = %q, want %q", tpl.Version(), v)
		}
		if !strings.HasPrefix(tpl.Header(), "[MODEL_CONTEXT_PROTOCOL v"+fingerprint.ProtocolVersion+" ") {
			t.Errorf("label %q: header %q does not speak protocol v%s", v, tpl.Header(), fingerprint.ProtocolVersion)
		}
		if v == template.DefaultVersion {
			if tpl.Fingerprint() != absent.Fingerprint() {
				t.Errorf("label %q: fingerprint differs from the template without a label", v)
			}
			continue
		}
		if other, dup := fps[tpl.Fingerprint()]; dup {
			t.Errorf("labels %q and %q have the same fingerprint", v, other)
		}
		fps[tpl.Fingerprint()] = v
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestSectionScoring: a section's relevance share, recency weight and
// half-age are read as written, zero included (zero is not "the
// default"), and a template that leaves them out keeps its fingerprint.
func TestSectionScoring(t *testing.T) {
	plain, err := template.Parse(encode(t, base()), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.Section(1).Relevance(); ok {
		t.Error("a section without relevance reports one")
	}
	m := base()
	sec(m, 1)["relevance"] = 0
	sec(m, 1)["recency"] = 0
	sec(m, 1)["recency_half_age"] = "2h"
	sec(m, 0)["relevance"] = 0.6
	tpl, err := template.Parse(encode(t, m), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := tpl.Section(1).Relevance(); !ok || v != 0 {
		t.Errorf("relevance 0 reads %v, %v", v, ok)
	}
	if v, ok := tpl.Section(1).Recency(); !ok || v != 0 {
		t.Errorf("recency 0 reads %v, %v", v, ok)
	}
	if v, ok := tpl.Section(1).RecencyHalfAge(); !ok || v != 2*time.Hour {
		t.Errorf("recency_half_age reads %v, %v", v, ok)
	}
	if v, ok := tpl.Section(0).Relevance(); !ok || v != 0.6 {
		t.Errorf("relevance 0.6 reads %v, %v", v, ok)
	}
	if tpl.Fingerprint() == plain.Fingerprint() {
		t.Error("the scoring fields do not change the fingerprint")
	}
	if !strings.Contains(string(tpl.Canonical()), `"relevance":0,`) || strings.Contains(string(plain.Canonical()), "relevance") {
		t.Errorf("canonical JSON: %s / %s", tpl.Canonical(), plain.Canonical())
	}
}

// TestHistoryFillDefault: a section that takes history and names no fill
// skips (one turn too big must not end the conversation); one that names
// "stop" stops, and the two differ in their fingerprints; other sections
// stop by default.
func TestHistoryFillDefault(t *testing.T) {
	parse := func(fill string) *template.Template {
		t.Helper()
		js := `{"budget": 500, "sections": [
		  {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 100, "render": "{content}"},
		  {"name": "HISTORY", "priority": 2, "memory_types": ["history", "context"], "max_tokens": 300, "render": "{content}"` + fill + `}]}`
		tpl, err := template.Parse([]byte(js), "t.json")
		if err != nil {
			t.Fatal(err)
		}
		return tpl
	}
	omitted, stop := parse(""), parse(`, "fill": "stop"`)
	if f := omitted.Section(1).Fill(); f != template.FillSkip {
		t.Errorf("a history section without fill: %s, want skip", f)
	}
	if f := omitted.Section(0).Fill(); f != template.FillStop {
		t.Errorf("a section without history or fill: %s, want stop", f)
	}
	if f := stop.Section(1).Fill(); f != template.FillStop {
		t.Errorf("a history section that names stop: %s", f)
	}
	if omitted.Fingerprint() == stop.Fingerprint() {
		t.Error("an explicit stop has the fingerprint of the history default")
	}
}
