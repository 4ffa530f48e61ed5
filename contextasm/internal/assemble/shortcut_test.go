package assemble_test

import (
	"fmt"
	"testing"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// The engine's tokenizer must declare itself line-additive, or no assembly
// would ever skip counting its final text.
func TestRealTokenizerIsLineAdditive(t *testing.T) {
	if !isAdditive(realTokenizer(t)) {
		t.Fatal("the o200k_base tokenizer is not a LineAdditive counter that says true")
	}
}

// TestLineMode checks the accounting of a section in line mode (the
// default separator "\n") against one with another separator, and the
// layout of the text: each section's blocks joined by its separator and
// followed by a newline.
func TestLineMode(t *testing.T) {
	tok := realTokenizer(t)
	mk := func(lineCap int) *template.Template {
		return mustParse(t, fmt.Sprintf(`{"budget": 4096, "sections": [
		  {"name": "L", "priority": 1, "memory_types": ["constraint"], "max_tokens": %d, "render": "<n>{content}</n>"},
		  {"name": "P", "priority": 2, "memory_types": ["context"], "max_tokens": 4000, "render": "<p>{content}</p>", "separator": " | "}]}`, lineCap))
	}
	l1 := weighted("l1", declare.Constraint, "Responda sempre em português.", 0.9)
	l2 := weighted("l2", declare.Constraint, "用户偏好简洁的回答。", 0.5)
	p1 := weighted("p1", declare.Context, "O deploy roda em Kubernetes.", 0.9)
	p2 := weighted("p2", declare.Context, "数据库连接池的最大值是 42。", 0.5)
	blocks := []assemble.Block{p2, l2, p1, l1}

	probe := mk(4000)
	r := func(name string, b assemble.Block) string { return render(t, probe, name, b) }
	line1, line2 := tok.Count(r("L", l1)+"\n"), tok.Count(r("L", l2)+"\n")
	// The fixture must tell line mode from counting the newline apart: a
	// newline after ">" joins its token, so the old sum is larger.
	if old := tok.Count(r("L", l1)) + tok.Count("\n") + tok.Count(r("L", l2)); old <= line1+line2 {
		t.Fatalf("fixture: blocks and separator count %d, no more than the lines' %d", old, line1+line2)
	}

	t.Run("layout and counts", func(t *testing.T) {
		tpl := mk(line1 + line2) // both lines fit exactly
		out := mustAssemble(t, tpl, blocks, assemble.Request{})
		want := tpl.Header() + "\n" +
			render(t, tpl, "L", l1) + "\n" + render(t, tpl, "L", l2) + "\n" +
			render(t, tpl, "P", p1) + " | " + render(t, tpl, "P", p2) + "\n"
		if out.Text != want {
			t.Fatalf("text =\n%q\nwant\n%q", out.Text, want)
		}
		if out.TotalTokens != tok.Count(out.Text) {
			t.Errorf("TotalTokens %d, text counts %d", out.TotalTokens, tok.Count(out.Text))
		}
		for _, tt := range []struct {
			id, section string
			b           assemble.Block
			want        int
		}{
			{"l1", "L", l1, line1},
			{"l2", "L", l2, line2},
			{"p1", "P", p1, tok.Count(render(t, tpl, "P", p1))},
			{"p2", "P", p2, tok.Count(render(t, tpl, "P", p2))},
		} {
			if _, br, _ := result(out, tt.id); br.Status != outcome.StatusKept || br.Tokens != tt.want {
				t.Errorf("%s: %v with %d tokens, want kept with %d", tt.id, br.Status, br.Tokens, tt.want)
			}
		}
		if got := out.Sections[0].UsedTokens; got != line1+line2 {
			t.Errorf("L used %d tokens, want its lines' %d and no separator", got, line1+line2)
		}
		if got, want := out.Sections[1].UsedTokens, tok.Count(render(t, tpl, "P", p1))+tok.Count(" | ")+tok.Count(render(t, tpl, "P", p2)); got != want {
			t.Errorf("P used %d tokens, want the blocks and the separator, %d", got, want)
		}
	})

	t.Run("the cap applies to the lines", func(t *testing.T) {
		out := mustAssemble(t, mk(line1+line2-1), blocks, assemble.Request{})
		if got := statuses(out); got["l1"] != "kept" || got["l2"] != "dropped" {
			t.Errorf("statuses = %v, want l1 kept and l2 dropped for the cap", got)
		}
		if _, br, _ := result(out, "l2"); br.Reason != outcome.ReasonSectionCap || br.Tokens != line2 {
			t.Errorf("l2: %+v, want section_cap with %d tokens", br, line2)
		}
	})
}

// TestShortcutFinalCount checks when the final text is counted: always,
// unless the counter is line-additive, every section with blocks in the
// text is in line mode, and every block in the text starts its line
// cleanly. When it is not, TotalTokens is the header line's count plus the
// sections' used tokens, and it must still be the text's exact count.
func TestShortcutFinalCount(t *testing.T) {
	tok := additiveTokenizer(t)
	const lineTpl = `{"budget": 4096, "sections": [
	  {"name": "A", "priority": 1, "memory_types": ["constraint"], "max_tokens": 400, "render": "{content}"},
	  {"name": "B", "priority": 2, "memory_types": ["context"], "max_tokens": 400, "render": "<b>{content}</b>"}]}`
	const sepTpl = `{"budget": 4096, "sections": [
	  {"name": "A", "priority": 1, "memory_types": ["constraint"], "max_tokens": 400, "render": "{content}"},
	  {"name": "B", "priority": 2, "memory_types": ["context"], "max_tokens": 400, "render": "<b>{content}</b>", "separator": " | "}]}`
	// A cap of 12 keeps a short block and drops a long one.
	const capTpl = `{"budget": 4096, "sections": [
	  {"name": "A", "priority": 1, "memory_types": ["constraint"], "max_tokens": 12, "render": "{content}", "fill": "skip"},
	  {"name": "B", "priority": 2, "memory_types": ["context"], "max_tokens": 400, "render": "<b>{content}</b>"}]}`
	a := func(id, content string, w float64) assemble.Block {
		return weighted(id, declare.Constraint, content, w)
	}
	b := func(id, content string, w float64) assemble.Block { return weighted(id, declare.Context, content, w) }
	clean := []assemble.Block{a("a1", "Seja breve.", 0.9), a("a2", "数据库连接池的最大值是 42。", 0.5), b("b1", "O deploy roda em Kubernetes.", 0.9), b("b2", "Never reveal the API key.", 0.5)}
	with := func(extra ...assemble.Block) []assemble.Block {
		return append(append([]assemble.Block(nil), clean...), extra...)
	}

	tests := []struct {
		name    string
		tpl     string
		blocks  []assemble.Block
		c       truncate.Counter
		counted bool
	}{
		{name: "clean lines", tpl: lineTpl, blocks: clean, c: tok},
		{name: "declared line-additive", tpl: lineTpl, blocks: clean, c: lineAdditive{plainCounter{tok}}},
		{name: "block starts with a slash", tpl: lineTpl, blocks: with(a("a3", "/etc/hosts foi alterado.", 0.1)), c: tok, counted: true},
		{name: "block starts with a space", tpl: lineTpl, blocks: with(a("a3", " indentado", 0.1)), c: tok, counted: true},
		{name: "block starts with a tab", tpl: lineTpl, blocks: with(a("a3", "\tindentado", 0.1)), c: tok, counted: true},
		{name: "block starts with an ideographic space", tpl: lineTpl, blocks: with(a("a3", "\u3000全角空格", 0.1)), c: tok, counted: true},
		{name: "block starts with a newline", tpl: lineTpl, blocks: with(a("a3", "\n\nlinhas", 0.1)), c: tok, counted: true},
		{name: "first block starts with a slash", tpl: lineTpl, blocks: with(a("a0", "// nota", 1)), c: tok, counted: true},
		{name: "unclean block dropped for the cap", tpl: capTpl,
			blocks: []assemble.Block{a("a1", "Seja breve.", 0.9), a("a3", "/"+longNotes, 0.1), b("b1", "O deploy roda em Kubernetes.", 0.9)}, c: tok},
		{name: "section out of line mode", tpl: sepTpl, blocks: clean, c: tok, counted: true},
		{name: "section out of line mode left empty", tpl: sepTpl, blocks: clean[:2], c: tok},
		{name: "not line-additive", tpl: lineTpl, blocks: clean, c: plainCounter{tok}, counted: true},
		{name: "says it is not line-additive", tpl: lineTpl, blocks: clean, c: notAdditive{tok}, counted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl := mustParse(t, tt.tpl)
			cc := &countingCounter{Counter: tt.c}
			var asm assemble.Assembler
			out, err := asm.Assemble(tpl, tt.blocks, assemble.Request{Now: now}, cc)
			if err != nil {
				t.Fatal(err)
			}
			// Every block is in the text, but the one too long for capTpl.
			for _, blk := range tt.blocks {
				_, br, _ := result(out, blk.ID)
				if want := blk.ID != "a3" || tt.tpl != capTpl; (br.Status == outcome.StatusKept) != want {
					t.Fatalf("%s: %v, want kept %v", blk.ID, br.Status, want)
				}
			}
			if got := cc.countedExactly(out.Text); got != tt.counted {
				t.Errorf("final text counted = %v, want %v", got, tt.counted)
			}
			if n := tok.Count(out.Text); out.TotalTokens != n {
				t.Errorf("TotalTokens %d, the text counts %d", out.TotalTokens, n)
			}
			if !tt.counted {
				sum := tok.Count(tpl.Header() + "\n")
				for _, s := range out.Sections {
					sum += s.UsedTokens
				}
				if out.TotalTokens != sum {
					t.Errorf("TotalTokens %d, want the header line and the sections' used tokens, %d", out.TotalTokens, sum)
				}
			}
		})
	}
}
