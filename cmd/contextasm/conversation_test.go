package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/bench"
)

// workload writes the generated workload (bench/genworkload) of n blocks
// for budget to a temporary folder.
func workload(t *testing.T, n, budget int) (tpl, mem string) {
	t.Helper()
	dir := t.TempDir()
	tpl, mem = filepath.Join(dir, "template.json"), filepath.Join(dir, "memories.jsonl")
	if err := os.WriteFile(tpl, bench.TemplateJSON(budget), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := bench.WriteJSONL(f, bench.Generate(n, 1)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return tpl, mem
}

func TestBenchTurns(t *testing.T) {
	tpl, mem := workload(t, 400, 6000)
	code, out, stderr := runCLI(t, "bench", "-t", tpl, "-m", mem, "--turns", "12", "--budgets", "6000,8000",
		"--now", "2026-11-30T09:00:00Z", "--user", "u-bench", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var raw struct {
		Turns   int                          `json:"turns"`
		Results []map[string]json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Turns != 12 || len(raw.Results) != 2 {
		t.Fatalf("turns %d, %d results:\n%s", raw.Turns, len(raw.Results), out)
	}
	for _, k := range []string{"turns", "stable_fraction", "cost_anthropic", "cost_openai", "scratch_stable_fraction", "scratch_cost_anthropic", "scratch_cost_openai"} {
		if _, ok := raw.Results[0][k]; !ok {
			t.Errorf("bench --turns result lacks %q", k)
		}
	}
	var rep conversationReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.OverBudget != 0 || r.RequiredMissing != 0 || r.NewestTurnMissing != 0 || r.MaxTokens > r.Budget {
			t.Errorf("budget %d: %+v", r.Budget, r)
		}
		for _, f := range []float64{r.StableFraction, r.ScratchStableFraction} {
			if f <= 0 || f >= 1 {
				t.Errorf("budget %d: a stable fraction of %v", r.Budget, f)
			}
		}
		for _, c := range []float64{r.CostAnthropic, r.CostOpenAI, r.ScratchCostAnthropic, r.ScratchCostOpenAI} {
			if c <= 0 || c > anthropicWrite {
				t.Errorf("budget %d: a cost of %v", r.Budget, c)
			}
		}
	}

	code, text, _ := runCLI(t, "bench", "-t", tpl, "-m", mem, "--turns", "3", "--now", "2026-11-30T09:00:00Z")
	if code != exitOK || !strings.Contains(text, "scratch stable") {
		t.Errorf("bench --turns text output (exit %d):\n%s", code, text)
	}
	if code, _, stderr := runCLI(t, "bench", "-t", tpl, "-m", mem, "--turns", "-1"); code != exitUsage || !strings.Contains(stderr, "--turns") {
		t.Errorf("bad --turns: exit %d, %s", code, stderr)
	}
}

// TestFigures: the prices of the conversation bench on hand-made calls.
func TestFigures(t *testing.T) {
	tests := []struct {
		name  string
		calls []convCall
		want  convFigures
	}{
		{"nothing cached", []convCall{{tokens: 2000}}, convFigures{0, 1.25, 1}},
		{"too short to cache", []convCall{{tokens: 1000, stable: 900}}, convFigures{0.9, 1, 1}},
		{"a read", []convCall{{tokens: 2000, stable: 1500}},
			// 0.1×1500 + 1.25×500; OpenAI reads 1024 + 3×128 = 1408 at half price.
			convFigures{0.75, (150 + 625) / 2000.0, (704 + 592) / 2000.0}},
		{"all stable", []convCall{{tokens: 4000, stable: 4000}}, convFigures{1, 0.1, (1984 + 32) / 4000.0}}, // OpenAI reads 1024 + 23×128
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := figures(tt.calls)
			if !near(got.StableFraction, tt.want.StableFraction) || !near(got.CostAnthropic, tt.want.CostAnthropic) || !near(got.CostOpenAI, tt.want.CostOpenAI) {
				t.Errorf("figures = %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := sharedLines("a\nbc\nd\n", "a\nbc\nx\n"); got != 5 {
		t.Errorf("sharedLines = %d, want 5 (through the second newline)", got)
	}
	if got := sharedLines("ab\n", "ab\ncd\n"); got != 3 {
		t.Errorf("sharedLines of an extended text = %d, want 3", got)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
