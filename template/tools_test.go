package template_test

import (
	"strings"
	"testing"

	"github.com/contextasm/contextasm/template"
)

const toolsBase = `{"budget":1000,"sections":[{"name":"s","priority":1,"memory_types":["context"],"max_tokens":100,"render":"{content}"}]`

func TestToolsPart(t *testing.T) {
	plain, err := template.Parse([]byte(toolsBase+`}`), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	if plain.Tools() != nil {
		t.Fatal("a template without a tools part has one")
	}
	withTools, err := template.Parse([]byte(toolsBase+`,"tools":{"max_tokens":400}}`), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	tp := withTools.Tools()
	if tp == nil || tp.MaxTokens != 400 || tp.Select != template.SelectRelevance {
		t.Fatalf("tools part %+v, want max_tokens 400 and the default select", tp)
	}
	// The part is in the fingerprint only when set: old templates keep
	// theirs, and a template that sets it differs.
	if withTools.Fingerprint() == plain.Fingerprint() {
		t.Error("the tools part does not move the fingerprint")
	}
	again, err := template.Parse([]byte(toolsBase+`,"tools":{"max_tokens":400,"select":"relevance"}}`), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	if again.Fingerprint() != withTools.Fingerprint() {
		t.Error("the default select written out changes the fingerprint")
	}
	if !strings.Contains(string(withTools.Canonical()), `"tools":{"max_tokens":400,"select":"relevance"}`) {
		t.Errorf("canonical JSON lacks the tools part: %s", withTools.Canonical())
	}
	if strings.Contains(string(plain.Canonical()), `"tools"`) {
		t.Errorf("canonical JSON of a template without tools names them: %s", plain.Canonical())
	}
}

func TestToolsPartInvalid(t *testing.T) {
	for _, tc := range []struct{ tools, want string }{
		{`{"max_tokens":-1}`, "t.json:1: tools.max_tokens: must not be negative"},
		{`{"select":"random"}`, `t.json:1: tools.select: must be relevance or name (got "random")`},
		{`{"destructive_role":"a\u0000b"}`, "t.json:1: tools.destructive_role: must be a role"},
		{`{"maxtokens":1}`, "tools.maxtokens: unknown field"},
		{`{"max_tokens":"x"}`, "tools: wrong type: want integer"},
		{`{"sticky_margin":-0.1}`, "t.json:1: tools.sticky_margin: must be a relevance margin from 0 to 1 (got -0.1)"},
		{`{"sticky_margin":1.5}`, "tools.sticky_margin: must be a relevance margin from 0 to 1"},
	} {
		_, err := template.Parse([]byte(toolsBase+`,"tools":`+tc.tools+`}`), "t.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.tools, err, tc.want)
		}
	}
}

func TestToolsStickyMargin(t *testing.T) {
	tpl, err := template.Parse([]byte(toolsBase+`,"tools":{"sticky_margin":0.3}}`), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	if m := tpl.Tools().StickyMargin; m == nil || *m != 0.3 {
		t.Fatalf("sticky_margin %v, want 0.3", m)
	}
	zero, err := template.Parse([]byte(toolsBase+`,"tools":{"sticky_margin":0}}`), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	unset, err := template.Parse([]byte(toolsBase+`,"tools":{}}`), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	// 0 is a margin (follow every move), not the Engine's default.
	if m := zero.Tools().StickyMargin; m == nil || *m != 0 || unset.Tools().StickyMargin != nil || zero.Fingerprint() == unset.Fingerprint() {
		t.Errorf("sticky_margin 0: %v; unset: %v", m, unset.Tools().StickyMargin)
	}
	// Definition returns a copy: changing it leaves the template's.
	d := tpl.Definition()
	*d.Tools.StickyMargin = 0.9
	if *tpl.Tools().StickyMargin != 0.3 {
		t.Error("a definition's copy shares the margin with the template")
	}
}
