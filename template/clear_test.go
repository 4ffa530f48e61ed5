package template_test

import (
	"testing"

	"github.com/contextasm/contextasm/template"
)

func TestWithClearToolResults(t *testing.T) {
	src := `{"budget":1000,"sections":[
	  {"name":"rules","priority":1,"memory_types":["constraint"],"max_tokens":100,"render":"{content}"},
	  {"name":"history","priority":2,"memory_types":["history"],"max_tokens":400,"render":"{content}"}]}`
	tpl, err := template.Parse([]byte(src), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	keep := 1
	on, err := tpl.WithClearToolResults(&template.ClearToolResults{Keep: &keep, AtLeast: 50})
	if err != nil {
		t.Fatal(err)
	}
	if ok, k, at := on.Section(1).ClearToolResults(); !ok || k != 1 || at != 50 {
		t.Errorf("history clears %v, keep %d, at_least %d; want keep 1, at_least 50", ok, k, at)
	}
	if ok, _, _ := on.Section(0).ClearToolResults(); ok {
		t.Error("a section without history clears")
	}
	if ok, _, _ := tpl.Section(1).ClearToolResults(); ok || on.Fingerprint() == tpl.Fingerprint() {
		t.Error("the original changed, or the copy kept its fingerprint")
	}
	keep = 7 // the copy holds its own
	if _, k, _ := on.Section(1).ClearToolResults(); k != 1 {
		t.Errorf("keep %d after the caller's value changed", k)
	}
	off, err := on.WithClearToolResults(nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := off.Section(1).ClearToolResults(); ok || off.Fingerprint() != tpl.Fingerprint() {
		t.Error("clearing nil does not give the template back")
	}
	bad := -1
	if _, err := tpl.WithClearToolResults(&template.ClearToolResults{Keep: &bad}); err == nil {
		t.Error("a negative keep was accepted")
	}
	noHistory, err := template.Parse([]byte(`{"budget":100,"sections":[{"name":"s","priority":1,"memory_types":["context"],"max_tokens":50,"render":"{content}"}]}`), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	if same, err := noHistory.WithClearToolResults(&template.ClearToolResults{}); err != nil || same != noHistory {
		t.Errorf("a template without history: %v, %v", same, err)
	}
}
