package declare_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/goldenfile"
)

func degradeFile(name string) string { return filepath.Join("testdata", "degrade", name) }

func TestLoadDegradeFixture(t *testing.T) {
	decls, err := declare.LoadFile(degradeFile("valid.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	by := make(map[string]declare.Declaration)
	for _, d := range decls {
		by[d.RequestID] = d
	}
	if v := by["doc-terms"].Variants; len(v) != 2 || v[1] != "48 months at 6.9% APR." {
		t.Errorf("variants = %q", v)
	}
	if m := by["tool-res"].MaxTokens; m == nil || *m != 200 {
		t.Errorf("max_tokens = %v", m)
	}
	if s := by["rate-v3"].Supersedes; !slices.Equal(s, []string{"rate-v2"}) {
		t.Errorf("supersedes = %q", s)
	}
	if r := by["sum-1"].Replaces; !slices.Equal(r, []string{"t1", "t2"}) {
		t.Errorf("replaces = %q", r)
	}
}

// The problems of the degradation fields, as a user reads them: each with
// its file, line, request_id and field.
func TestLoadDegradeInvalidGolden(t *testing.T) {
	_, err := declare.LoadFile(degradeFile("invalid.jsonl"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, p := range problemsOf(t, err) {
		if p.File == "" || p.Line == 0 || p.RequestID == "" || p.Field == "" {
			t.Errorf("problem %+v lacks its file, line, request_id or field", p)
		}
	}
	goldenfile.Check(t, filepath.Join("degrade", "invalid.golden"), err.Error()+"\n", *update)
}

// A cycle may close across the files of one set: it is reported at the
// line of each declaration on it, file by file.
func TestLoadFilesLinkCycleAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	write := func(name, text string) {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(a, `{"request_id":"x","memory_type":"context","scope":"global","content":"X.","supersedes":["y"]}`+"\n")
	write(b, "# y corrects x, which corrects y\n"+`{"request_id":"y","memory_type":"context","scope":"global","content":"Y.","supersedes":["x"]}`+"\n")
	_, err := declare.LoadFiles(a, b)
	probs := problemsOf(t, err)
	if len(probs) != 2 {
		t.Fatalf("problems %v, want one for each of x and y", probs)
	}
	for i, want := range []struct {
		file string
		line int
		id   string
	}{{a, 1, "x"}, {b, 2, "y"}} {
		p := probs[i]
		if p.File != want.file || p.Line != want.line || p.RequestID != want.id || p.Field != "supersedes" ||
			p.Message != `forms a cycle: "x" → "y" → "x"` {
			t.Errorf("problem %d = %+v, want at %s:%d for %q", i, p, want.file, want.line, want.id)
		}
	}
	// Each file alone is fine: a chain into nothing is no cycle.
	for _, f := range []string{a, b} {
		if _, err := declare.LoadFile(f); err != nil {
			t.Errorf("%s alone: %v", f, err)
		}
	}
}

func TestCheckLinks(t *testing.T) {
	held := map[string][2][]string{ // id → supersedes, replaces
		"old":    {{"older"}, nil},
		"older":  {nil, nil},
		"sum-9":  {nil, {"t1", "sum-10"}},
		"sum-10": {nil, {"t2"}},
	}
	lookup := func(id string) (sup, rep []string, ok bool) {
		l, ok := held[id]
		return l[0], l[1], ok
	}
	ctx := func(id string, sup ...string) declare.Declaration {
		return declare.Declaration{RequestID: id, MemoryType: declare.Context, Scope: declare.ScopeGlobal, Content: id, Supersedes: sup}
	}
	sum := func(id string, rep ...string) declare.Declaration {
		return declare.Declaration{RequestID: id, MemoryType: declare.History, Scope: declare.ScopeGlobal, Content: id, Replaces: rep}
	}
	for _, tt := range []struct {
		name  string
		decls []declare.Declaration
		want  []string // "id field: message"
	}{
		{"a chain onto the store", []declare.Declaration{ctx("new", "old")}, nil},
		{"closing a cycle through the store", []declare.Declaration{ctx("older", "new"), ctx("new", "old")},
			[]string{`older supersedes: forms a cycle: "older" → "new" → "old" → "older"`, `new supersedes: forms a cycle: "older" → "new" → "old" → "older"`}},
		{"a declaration replaces the held block of its id", []declare.Declaration{ctx("old")}, nil},
		{"summaries", []declare.Declaration{sum("sum-11", "sum-9", "t3")}, nil},
		{"a summary cycle through the store", []declare.Declaration{sum("t2", "sum-11"), sum("sum-11", "sum-9")},
			[]string{`t2 replaces: forms a cycle: "t2" → "sum-11" → "sum-9" → "sum-10" → "t2"`, `sum-11 replaces: forms a cycle: "t2" → "sum-11" → "sum-9" → "sum-10" → "t2"`}},
		{"supersedes and replaces are separate relations", []declare.Declaration{ctx("a", "b"), sum("b", "a")}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range declare.CheckLinks(tt.decls, lookup) {
				got = append(got, p.RequestID+" "+p.Field+": "+p.Message)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestValidateDegradeFields(t *testing.T) {
	base := func() declare.Declaration {
		return declare.Declaration{RequestID: "b", MemoryType: declare.History, Scope: declare.ScopeSession, SessionID: "s1", Content: "A turn of some length."}
	}
	for _, tt := range []struct {
		name  string
		edit  func(*declare.Declaration)
		field string // "" for valid
	}{
		{"variants longest first", func(d *declare.Declaration) { d.Variants = []string{"A turn.", "A."} }, ""},
		{"a variant as long as the content", func(d *declare.Declaration) { d.Variants = []string{d.Content} }, "variants[0]"},
		{"a variant with bad UTF-8", func(d *declare.Declaration) { d.Variants = []string{"\xff"} }, "variants[0]"},
		{"max_tokens 1", func(d *declare.Declaration) { d.MaxTokens = new(1) }, ""},
		{"max_tokens negative", func(d *declare.Declaration) { d.MaxTokens = new(-5) }, "max_tokens"},
		{"too many supersedes", func(d *declare.Declaration) {
			for i := range declare.MaxSupersedes + 1 {
				d.Supersedes = append(d.Supersedes, strings.Repeat("x", i+1))
			}
		}, "supersedes"},
		{"replaces on an assistant turn", func(d *declare.Declaration) { d.Role, d.Replaces = declare.RoleAssistant, []string{"t1"} }, ""},
		{"replaces with tool calls", func(d *declare.Declaration) {
			d.Role, d.Replaces = declare.RoleAssistant, []string{"t1"}
			d.ToolCalls = []declare.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}
		}, "replaces"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := base()
			tt.edit(&d)
			err := declare.Validate(&d)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("valid declaration refused: %v", err)
				}
				return
			}
			probs := problemsOf(t, err)
			if len(probs) != 1 || probs[0].Field != tt.field || probs[0].RequestID != "b" {
				t.Fatalf("problems %v, want one for %s", probs, tt.field)
			}
		})
	}
}
