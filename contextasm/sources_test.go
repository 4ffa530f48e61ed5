package contextasm_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
)

// Sources' events reach every assembly after the assembly's own, in source
// name order, and can be replaced and cleared.
func TestSourceEvents(t *testing.T) {
	tpl, decls := loadDemo(t)
	eng := newEngine(t, contextasm.Config{}, decls...)
	base := assemble(t, eng, demoRequest(tpl))

	down := contextasm.Event{Kind: outcome.KindSource, RequestID: "mcp:zeta:res://a", Reason: outcome.ReasonSourceUnavailable}
	bin := contextasm.Event{Kind: outcome.KindSource, RequestID: "mcp:alpha:res://img", Reason: outcome.ReasonBinary}
	eng.SetSourceEvents("zeta", []contextasm.Event{down})
	eng.SetSourceEvents("alpha", []contextasm.Event{bin})
	res := assemble(t, eng, demoRequest(tpl))
	want := append(slices.Clone(base.Events()), bin, down)
	if !slices.Equal(res.Events(), want) || !slices.Equal(res.Audit().Events, want) {
		t.Fatalf("events = %+v\nwant %+v", res.Events(), want)
	}
	if res.Text != base.Text {
		t.Error("source events changed the text")
	}
	eng.SetSourceEvents("zeta", nil)
	eng.SetSourceEvents("alpha", nil)
	if res := assemble(t, eng, demoRequest(tpl)); !slices.Equal(res.Events(), base.Events()) {
		t.Errorf("cleared sources still report: %+v", res.Events()[len(base.Events()):])
	}
}

// A block from an untrusted source with priority 1 is not required: a
// server cannot make assembly fail.
func TestUntrustedPriorityIsNotRequired(t *testing.T) {
	tpl := parseTemplate(t, `{"budget": 60, "sections": [{"name": "X", "priority": 1, "memory_types": ["external"], "max_tokens": 20, "render": "{content}"}]}`)
	big := strings.Repeat("a server claims this long block is essential. ", 5)
	d := declare.Declaration{RequestID: "mcp:s:res://big", MemoryType: declare.External, Scope: declare.ScopeGlobal, Content: big, Priority: ptr(1.0), Untrusted: true}
	eng := newEngine(t, contextasm.Config{}, d)
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow})
	if got := res.Sections()[0].Blocks[0]; got.Required || got.Status != outcome.StatusDropped {
		t.Errorf("untrusted priority-1 block: %+v, want dropped and not required", got)
	}
	d.Untrusted = false
	eng = newEngine(t, contextasm.Config{}, d)
	if _, err := eng.Assemble(t.Context(), contextasm.Request{Template: tpl, Now: demoNow}); err == nil {
		t.Error("trusted priority-1 block that does not fit: want ErrBudgetTooSmall")
	}
}
