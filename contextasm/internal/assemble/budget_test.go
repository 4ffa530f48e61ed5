package assemble_test

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// layout is what a rendering should hold: per section name, the blocks in
// the order written.
type layout map[string][]assemble.Block

// text builds the rendering of l under tpl independently of the Assembler:
// the header line, then each non-empty section in file order, its blocks
// joined by its separator and followed by "\n". The text ends with "\n".
func (l layout) text(t testing.TB, tpl *template.Template) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(tpl.Header())
	b.WriteString("\n")
	for i := range tpl.NumSections() {
		sec := tpl.Section(i)
		if len(l[sec.Name()]) == 0 {
			continue
		}
		for j, blk := range l[sec.Name()] {
			if j > 0 {
				b.WriteString(sec.Separator())
			}
			b.WriteString(renderContent(sec, blk, blk.Content))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// estimate is the sum of parts the Assembler compares with the budget
// before it checks the final text: the header line with its newline, then
// per non-empty section, in line mode each block with the newline that
// ends its line, otherwise the blocks alone, the separators between them
// and the section's closing newline.
func (l layout) estimate(t testing.TB, tpl *template.Template, c truncate.Counter) int {
	t.Helper()
	n := c.Count(tpl.Header() + "\n")
	for i := range tpl.NumSections() {
		sec := tpl.Section(i)
		if len(l[sec.Name()]) == 0 {
			continue
		}
		if !lineMode(sec) {
			n += c.Count("\n") + (len(l[sec.Name()])-1)*c.Count(sec.Separator())
		}
		for _, blk := range l[sec.Name()] {
			n += blockTokens(c, sec, renderContent(sec, blk, blk.Content))
		}
	}
	return n
}

// fitBudget returns a template, made by mk for some budget, under which the
// Assembler stops cutting at layout l rather than at layout prev, one drop
// before: the estimate and the final count of l both fit, and one of
// prev's does not (a nil prev sets no upper bound). The budget is part of
// the fingerprint in the header, whose count can vary by a token, so the
// budget is searched around the first guess.
func fitBudget(t testing.TB, mk func(budget int) string, c truncate.Counter, l, prev layout) (*template.Template, int) {
	t.Helper()
	size := func(tpl *template.Template, l layout) int {
		return max(l.estimate(t, tpl, c), c.Count(l.text(t, tpl)))
	}
	guess := size(mustParse(t, mk(1)), l)
	for budget := guess - 2; budget <= guess+4; budget++ {
		tpl := mustParse(t, mk(budget))
		if size(tpl, l) <= budget && (prev == nil || size(tpl, prev) > budget) {
			return tpl, budget
		}
	}
	t.Fatalf("fixture: no budget near %d stops at the layout %v", guess, l)
	return nil, 0
}

// hierarchyTemplate lists sections out of priority order, so that file
// order (the written order) and priority order (the cut order) differ. Its
// sections are in line mode (the default separator); hierarchyTemplateSep
// joins MID's blocks with " | " instead, out of line mode.
func hierarchyTemplate(budget int) string { return hierarchyTemplateWith(budget, "") }

func hierarchyTemplateSep(budget int) string {
	return hierarchyTemplateWith(budget, `, "separator": " | "`)
}

func hierarchyTemplateWith(budget int, midSeparator string) string {
	return fmt.Sprintf(`{"budget": %d, "sections": [
	  {"name": "LOW", "priority": 3, "memory_types": ["history"], "max_tokens": 2000, "render": "<low>{content}</low>"},
	  {"name": "HIGH", "priority": 1, "memory_types": ["constraint"], "max_tokens": 2000, "render": "<high>{content}</high>"},
	  {"name": "MID", "priority": 2, "memory_types": ["context"], "max_tokens": 2000, "render": "<mid>{content}</mid>"%s}
	]}`, budget, midSeparator)
}

func TestHierarchicalBudget(t *testing.T) {
	tok := additiveTokenizer(t)
	mk := func(id string, typ declare.MemoryType, w float64) assemble.Block {
		return weighted(id, typ, fmt.Sprintf("Bloco %s: o usuário pediu 简洁 answers, item %s.", id, id), w)
	}
	h1, h2 := mk("h1", declare.Constraint, 0.9), mk("h2", declare.Constraint, 0.5)
	m1, m2, m3 := mk("m1", declare.Context, 0.9), mk("m2", declare.Context, 0.6), mk("m3", declare.Context, 0.3)
	l1, l2, l3 := mk("l1", declare.History, 0.9), mk("l2", declare.History, 0.5), mk("l3", declare.History, 0.2)
	lr := mk("lr", declare.History, 0) // ranks first in LOW by being required
	lr.Required = true

	tests := []struct {
		name        string
		blocks      []assemble.Block
		final, prev layout   // where the cut must stop, and the layout one drop before
		dropped     []string // budget drops, in order
	}{
		{
			name:    "lowest section emptied, then lowest-ranked of the next",
			blocks:  []assemble.Block{l2, m1, h2, l1, m3, h1, l3, m2},
			final:   layout{"HIGH": {h1, h2}, "MID": {m1, m2}},
			prev:    layout{"HIGH": {h1, h2}, "MID": {m1, m2, m3}},
			dropped: []string{"l3", "l2", "l1", "m3"},
		},
		{
			name:    "lowest section emptied exactly",
			blocks:  []assemble.Block{l2, m1, h2, l1, m3, h1, l3, m2},
			final:   layout{"HIGH": {h1, h2}, "MID": {m1, m2, m3}},
			prev:    layout{"LOW": {l1}, "HIGH": {h1, h2}, "MID": {m1, m2, m3}},
			dropped: []string{"l3", "l2", "l1"},
		},
		{
			name:    "required block in the lowest section stays",
			blocks:  []assemble.Block{l2, m1, h2, lr, l1, m3, h1, l3, m2},
			final:   layout{"LOW": {lr}, "HIGH": {h1}},
			prev:    layout{"LOW": {lr}, "HIGH": {h1, h2}},
			dropped: []string{"l3", "l2", "l1", "m3", "m2", "m1", "h2"},
		},
		{
			name:   "everything fits",
			blocks: []assemble.Block{l2, m1, h2, l1, m3, h1, l3, m2},
			final:  layout{"LOW": {l1, l2, l3}, "HIGH": {h1, h2}, "MID": {m1, m2, m3}},
			prev:   layout{"LOW": {l1, l2, l3, block("x", declare.History, longNotes)}, "HIGH": {h1, h2}, "MID": {m1, m2, m3}},
		},
	}
	templates := []struct {
		name string
		mk   func(budget int) string
	}{{"line mode", hierarchyTemplate}, {"MID joined by |", hierarchyTemplateSep}}
	counters := []struct {
		name string
		c    truncate.Counter
	}{{"line-additive", tok}, {"plain", plainCounter{tok}}}
	for _, tt := range tests {
		for _, tm := range templates {
			for _, ct := range counters {
				t.Run(tt.name+"/"+tm.name+"/"+ct.name, func(t *testing.T) {
					checkHierarchy(t, tok, tm.mk, ct.c, tt.blocks, tt.final, tt.prev, tt.dropped)
				})
			}
		}
	}
}

// checkHierarchy assembles blocks with c under the template mk makes for the
// budget that stops the cut at final (one drop after prev), and checks the
// text, the count and the budget drops.
func checkHierarchy(t *testing.T, tok truncate.Counter, mk func(int) string, c truncate.Counter, blocks []assemble.Block, final, prev layout, dropped []string) {
	tpl, budget := fitBudget(t, mk, tok, final, prev)
	cc := &countingCounter{Counter: c}
	var a assemble.Assembler
	out, err := a.Assemble(tpl, blocks, assemble.Request{Now: now}, cc)
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}

	if want := final.text(t, tpl); out.Text != want {
		t.Errorf("text =\n%s\nwant\n%s", out.Text, want)
	}
	if out.TotalTokens != tok.Count(out.Text) || out.TotalTokens > budget {
		t.Errorf("TotalTokens = %d, text counts %d, budget %d", out.TotalTokens, tok.Count(out.Text), budget)
	}
	// The final text is counted unless the counter is line-additive and
	// every section left with blocks is in line mode (every block here
	// starts its line cleanly).
	exact := isAdditive(c)
	for _, s := range out.Sections {
		if s.UsedTokens > 0 && !lineMode(tpl.Section(sectionIndex(t, tpl, s.Name))) {
			exact = false
		}
	}
	if counted := cc.countedExactly(out.Text); counted == exact {
		t.Errorf("final text counted = %v; want %v (line-additive %v)", counted, !exact, isAdditive(c))
	}
	if exact {
		sum := tok.Count(tpl.Header() + "\n")
		for _, s := range out.Sections {
			sum += s.UsedTokens
		}
		if out.TotalTokens != sum {
			t.Errorf("TotalTokens = %d, want the header line and the sections' used tokens, %d", out.TotalTokens, sum)
		}
	}
	var got []string
	for _, e := range out.Events {
		if e.Reason == outcome.ReasonBudget {
			got = append(got, e.RequestID)
			sec, br, _ := result(out, e.RequestID)
			want := outcome.Event{Kind: outcome.KindDropped, Section: sec.Name, RequestID: e.RequestID, Reason: outcome.ReasonBudget, Tokens: br.Tokens}
			if e != want || br.Status != outcome.StatusDropped || br.Reason != outcome.ReasonBudget || br.Tokens == 0 {
				t.Errorf("budget event %+v for %+v; want %+v", e, br, want)
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(dropped) {
		t.Errorf("budget drops = %v, want %v", got, dropped)
	}
	for _, s := range out.Sections {
		if _, ok := final[s.Name]; !ok && s.UsedTokens != 0 {
			t.Errorf("emptied section %s uses %d tokens", s.Name, s.UsedTokens)
		}
		if _, ok := final[s.Name]; !ok && strings.Contains(out.Text, "<"+strings.ToLower(s.Name)+">") {
			t.Errorf("emptied section %s is in the text", s.Name)
		}
	}
	if _, br, ok := result(out, "lr"); ok && br.Status != outcome.StatusKept {
		t.Errorf("required block lr: %v, want kept", br.Status)
	}
}

func TestRequiredFailsClosed(t *testing.T) {
	tok := realTokenizer(t)
	req := func(id string, typ declare.MemoryType, content string) assemble.Block {
		b := block(id, typ, content)
		b.Required = true
		return b
	}
	const capsTemplate = `{"budget": 4096, "sections": [
	  {"name": "X", "priority": 1, "memory_types": ["constraint"], "max_tokens": 12, "render": "<x>{content}</x>"},
	  {"name": "Y", "priority": 2, "memory_types": ["context"], "max_tokens": 12, "render": "<y>{content}</y>", "partial": true, "min_partial_tokens": 1},
	  {"name": "Z", "priority": 3, "memory_types": ["history"], "max_tokens": 200, "render": "<z>{content}</z>"}
	]}`
	const budgetTemplate = `{"budget": 60, "sections": [
	  {"name": "HIGH", "priority": 1, "memory_types": ["constraint"], "max_tokens": 2000, "render": "<h>{content}</h>"},
	  {"name": "LOW", "priority": 2, "memory_types": ["context"], "max_tokens": 2000, "render": "<l>{content}</l>"}
	]}`
	const noHistory = `{"budget": 4096, "sections": [
	  {"name": "X", "priority": 1, "memory_types": ["constraint", "context"], "max_tokens": 500, "render": "{content}"}
	]}`
	// sized is a block's count as the Assembler takes it: these sections
	// are in line mode, so with the newline that ends its line.
	sized := func(tpl *template.Template, section string, b assemble.Block) int {
		return blockTokens(tok, tpl.Section(sectionIndex(t, tpl, section)), render(t, tpl, section, b))
	}

	tests := []struct {
		name   string
		tpl    string
		blocks []assemble.Block
		// misses returns the exact misses, given the compiled template.
		misses func(*template.Template) []truncate.RequiredMiss
	}{
		{
			name: "over their section caps",
			tpl:  capsTemplate,
			blocks: []assemble.Block{
				req("rx", declare.Constraint, longNotes),
				weighted("nx", declare.Constraint, "ok", 1),
				req("ry", declare.Context, longNotes), // partial section: still never cut
				req("rz", declare.History, "fits"),
			},
			misses: func(tpl *template.Template) []truncate.RequiredMiss {
				// Each section's only required block is all it needs.
				x, y := sized(tpl, "X", req("rx", declare.Constraint, longNotes)), sized(tpl, "Y", req("ry", declare.Context, longNotes))
				return []truncate.RequiredMiss{
					{RequestID: "rx", Section: "X", Tokens: x, Limit: 12, Reason: outcome.ReasonSectionCap, Need: x},
					{RequestID: "ry", Section: "Y", Tokens: y, Limit: 12, Reason: outcome.ReasonSectionCap, Need: y},
				}
			},
		},
		{
			name: "alone over the budget",
			tpl:  budgetTemplate,
			blocks: []assemble.Block{
				weighted("n1", declare.Context, "droppable", 1),
				req("r1", declare.Constraint, "Regra: "+longNotes[:60]),
				req("r2", declare.Context, "Contexto: "+longNotes[:60]),
			},
			misses: func(tpl *template.Template) []truncate.RequiredMiss {
				return []truncate.RequiredMiss{
					{RequestID: "r1", Section: "HIGH", Tokens: sized(tpl, "HIGH", req("r1", declare.Constraint, "Regra: "+longNotes[:60])), Limit: 60, Reason: outcome.ReasonBudget},
					{RequestID: "r2", Section: "LOW", Tokens: sized(tpl, "LOW", req("r2", declare.Context, "Contexto: "+longNotes[:60])), Limit: 60, Reason: outcome.ReasonBudget},
				}
			},
		},
		{
			name:   "no section takes it",
			tpl:    noHistory,
			blocks: []assemble.Block{block("c", declare.Context, "fine"), req("rh", declare.History, "turn")},
			misses: func(*template.Template) []truncate.RequiredMiss {
				return []truncate.RequiredMiss{{RequestID: "rh", Reason: outcome.ReasonNoSection}}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl := mustParse(t, tt.tpl)
			var a assemble.Assembler
			out, err := a.Assemble(tpl, tt.blocks, assemble.Request{Now: now}, tok)
			if !errors.Is(err, truncate.ErrBudgetTooSmall) {
				t.Fatalf("err = %v, want ErrBudgetTooSmall", err)
			}
			if out != nil {
				t.Errorf("output %+v returned with the error", out)
			}
			var re *truncate.RequiredError
			if !errors.As(err, &re) {
				t.Fatalf("err %T is not a *RequiredError", err)
			}
			got := slices.Clone(re.Misses)
			slices.SortFunc(got, func(a, b truncate.RequiredMiss) int { return cmp.Compare(a.RequestID, b.RequestID) })
			if want := tt.misses(tpl); !slices.Equal(got, want) {
				t.Errorf("misses =\n%+v\nwant\n%+v", got, want)
			}
			for _, m := range re.Misses {
				if !strings.Contains(err.Error(), fmt.Sprintf("%q", m.RequestID)) {
					t.Errorf("error message does not name %q:\n%v", m.RequestID, err)
				}
				// It says how many tokens the required blocks need.
				var need string
				switch m.Reason {
				case outcome.ReasonSectionCap:
					need = fmt.Sprintf("its required blocks need %d tokens, its max_tokens is %d", m.Need, m.Limit)
				case outcome.ReasonBudget:
					total := 0
					for _, o := range re.Misses {
						total += o.Tokens
					}
					need = fmt.Sprintf("the required blocks need %d tokens, plus the header and the joins; the budget is %d", total, m.Limit)
				}
				if !strings.Contains(err.Error(), need) {
					t.Errorf("error message does not say %q:\n%v", need, err)
				}
			}
		})
	}

	// Required blocks that each fit, but not together.
	t.Run("together over the cap", func(t *testing.T) {
		tpl := mustParse(t, capsTemplate)
		blocks := []assemble.Block{req("r1", declare.Constraint, "Seja breve."), req("r2", declare.Constraint, "Responda em português.")}
		for _, b := range blocks {
			if n := sized(tpl, "X", b); n > 12 {
				t.Fatalf("fixture: %s alone counts %d > 12", b.ID, n)
			}
		}
		var a assemble.Assembler
		_, err := a.Assemble(tpl, blocks, assemble.Request{Now: now}, tok)
		var re *truncate.RequiredError
		if !errors.As(err, &re) || !errors.Is(err, truncate.ErrBudgetTooSmall) || len(re.Misses) == 0 {
			t.Fatalf("err = %v, want a RequiredError", err)
		}
		for _, m := range re.Misses {
			if (m.RequestID != "r1" && m.RequestID != "r2") || m.Reason != outcome.ReasonSectionCap || m.Section != "X" {
				t.Errorf("miss %+v, want r1 or r2 in X with section_cap", m)
			}
		}
	})

	// Eligibility comes first: a required block that is not eligible is
	// excluded with an event, and does not fail the assembly.
	t.Run("ineligible required", func(t *testing.T) {
		tpl := mustParse(t, capsTemplate)
		r := req("r", declare.Constraint, longNotes)
		r.ValidUntil = now
		out := mustAssemble(t, tpl, []assemble.Block{r, block("c", declare.History, "ok")}, assemble.Request{})
		want := []outcome.Event{{Kind: outcome.KindExcluded, RequestID: "r", Reason: outcome.ReasonExpired}}
		if got := eventsOf(out, "r"); !slices.Equal(got, want) {
			t.Errorf("events = %+v, want %+v", got, want)
		}
	})

	// Required blocks that fit exactly: no error, all kept.
	t.Run("required fit", func(t *testing.T) {
		tpl := mustParse(t, budgetTemplate)
		blocks := []assemble.Block{req("r1", declare.Constraint, "Seja breve."), weighted("n1", declare.Context, longNotes, 1), req("r2", declare.Context, "简洁")}
		out := mustAssemble(t, tpl, blocks, assemble.Request{})
		for _, id := range []string{"r1", "r2"} {
			if _, br, _ := result(out, id); br.Status != outcome.StatusKept || !br.Required {
				t.Errorf("%s: %+v, want kept and required", id, br)
			}
		}
		if _, br, _ := result(out, "n1"); br.Status != outcome.StatusDropped || br.Reason != outcome.ReasonBudget {
			t.Errorf("n1: %+v, want dropped for the budget", br)
		}
	})
}

// TestFinalTextCheck injects a Counter under which the joins between blocks
// cost tokens that no part shows, so the sum of parts fits the budget and
// the final text does not: the Assembler must keep dropping until the
// final count fits. The injected Counter is not line-additive: a
// line-additive one is trusted to add up, and its final text is not
// counted (the subtest "line-additive counter trusted").
func TestFinalTextCheck(t *testing.T) {
	tok := realTokenizer(t)
	var blocks []assemble.Block
	var all []assemble.Block
	for i := range 6 {
		b := weighted(fmt.Sprintf("b%d", i), declare.Context, fmt.Sprintf("Nota %d: 记忆块 número %d.", i, i), 0.9-float64(i)/10)
		blocks = append(blocks, b)
		all = append(all, b)
	}
	slices.Reverse(blocks) // input order must not matter
	js := func(budget int) string {
		return fmt.Sprintf(`{"budget": %d, "sections": [
		  {"name": "M", "priority": 1, "memory_types": ["context"], "max_tokens": 4000, "render": "<m>{content}</m>"}]}`, budget)
	}
	full := layout{"M": all}
	tpl, budget := fitBudget(t, js, tok, full, nil)
	if isAdditive(joinTax{Counter: tok}) {
		t.Fatal("fixture: joinTax is line-additive; the Assembler would not count its final text")
	}

	t.Run("real tokenizer fits", func(t *testing.T) {
		out := mustAssemble(t, tpl, blocks, assemble.Request{})
		if out.Text != full.text(t, tpl) {
			t.Fatalf("under the real tokenizer everything should fit the budget %d:\n%s", budget, out.Text)
		}
	})

	t.Run("joins cost more", func(t *testing.T) {
		tax := joinTax{Counter: tok, marker: "</m>\n<m>", extra: 7}
		if tax.Count(full.text(t, tpl)) <= budget {
			t.Fatal("fixture: the taxed text fits")
		}
		if n := full.estimate(t, tpl, tax); n > budget {
			t.Fatalf("fixture: the taxed sum of parts %d is over the budget %d; only the final check would see the joins", n, budget)
		}
		cc := &countingCounter{Counter: tax}
		var a assemble.Assembler
		out, err := a.Assemble(tpl, blocks, assemble.Request{Now: now}, cc)
		if err != nil {
			t.Fatal(err)
		}
		if out.TotalTokens != tax.Count(out.Text) || out.TotalTokens > budget {
			t.Fatalf("TotalTokens = %d, text counts %d, budget %d", out.TotalTokens, tax.Count(out.Text), budget)
		}
		if !cc.countedExactly(out.Text) {
			t.Error("the final text was not counted")
		}
		var dropped []string
		for _, e := range out.Events {
			if e.Reason == outcome.ReasonBudget && e.Kind == outcome.KindDropped && e.Section == "M" {
				dropped = append(dropped, e.RequestID)
			}
		}
		if len(dropped) == 0 {
			t.Fatal("no budget event, though the final text was over the budget")
		}
		// The lowest-ranked go, in order, and no more than needed.
		k := len(all) - len(dropped)
		for i, id := range dropped {
			if want := all[len(all)-1-i].ID; id != want {
				t.Errorf("budget drop %d = %s, want %s", i, id, want)
			}
		}
		if want := (layout{"M": all[:k]}).text(t, tpl); out.Text != want {
			t.Errorf("text =\n%s\nwant\n%s", out.Text, want)
		}
		if n := tax.Count((layout{"M": all[:k+1]}).text(t, tpl)); n <= budget {
			t.Errorf("dropped %v, but keeping %s too would count %d ≤ %d", dropped, all[k].ID, n, budget)
		}
	})

	// By design, the final text of a line-additive counter whose lines add
	// up is not counted: the same taxed counter, declared line-additive,
	// goes unchecked. This is why the fault injection above must not be.
	t.Run("line-additive counter trusted", func(t *testing.T) {
		tax := lineAdditive{joinTax{Counter: tok, marker: "</m>\n<m>", extra: 7}}
		cc := &countingCounter{Counter: tax}
		var a assemble.Assembler
		out, err := a.Assemble(tpl, blocks, assemble.Request{Now: now}, cc)
		if err != nil {
			t.Fatal(err)
		}
		if cc.countedExactly(out.Text) {
			t.Error("the final text was counted, though the counter is line-additive and its lines add up")
		}
		if out.Text != full.text(t, tpl) || out.TotalTokens != full.estimate(t, tpl, tax) {
			t.Errorf("TotalTokens %d, text\n%s\nwant everything kept, with the sum of the lines %d", out.TotalTokens, out.Text, full.estimate(t, tpl, tax))
		}
		if n := tax.Count(out.Text); n <= budget {
			t.Errorf("fixture: the taxed text counts %d ≤ %d; the test shows nothing", n, budget)
		}
	})

	t.Run("required alone over after joins", func(t *testing.T) {
		rs := slices.Clone(blocks)
		rs[0].Required, rs[1].Required = true, true // the two lowest-ranked: b5, b4
		tax := joinTax{Counter: tok, marker: "</m>\n<m>", extra: budget}
		var a assemble.Assembler
		_, err := a.Assemble(tpl, rs, assemble.Request{Now: now}, tax)
		var re *truncate.RequiredError
		if !errors.As(err, &re) || !errors.Is(err, truncate.ErrBudgetTooSmall) {
			t.Fatalf("err = %v, want a RequiredError", err)
		}
		var ids []string
		for _, m := range re.Misses {
			ids = append(ids, m.RequestID)
			if m.Reason != outcome.ReasonBudget || m.Limit != budget || m.Section != "M" {
				t.Errorf("miss %+v, want reason budget, limit %d, section M", m, budget)
			}
		}
		slices.Sort(ids)
		if fmt.Sprint(ids) != "[b4 b5]" {
			t.Errorf("misses %v, want [b4 b5]", ids)
		}
	})
}
