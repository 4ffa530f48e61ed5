package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/bench"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/learned"
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

// TestCLIConversation drives the command line through the conversation
// `bench --turns 40` simulates, one process-like run per step, the learned
// state in a file: each call appends the user's turn to the turns file,
// renders with --state, feeds the answer back with feedback --state, and
// appends the answer; every tenth call a document kept by the previous
// render is edited in the memories file. It checks the conversation targets as
// properties of the renders themselves: every render within the budget by
// the real tokenizer, with its required blocks and the newest user turn;
// at least 85% of the tokens a prefix the previous render shares; an
// Anthropic-priced cost of at most 0.30 of no cache; and --fresh
// re-deciding from scratch.
func TestCLIConversation(t *testing.T) {
	if testing.Short() {
		t.Skip("a 40-call conversation through the CLI")
	}
	tplPath, memPath := workload(t, 2000, 6000)
	dir := filepath.Dir(memPath)
	state, turnsPath := filepath.Join(dir, "state.json"), filepath.Join(dir, "turns.jsonl")
	tok, err := bpe.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	decls, err := declare.LoadFile(memPath)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	conv := &conversation{tok: tok, req: contextasm.Request{SessionID: "s-bench"}, docs: map[string]declare.Declaration{}}
	for _, d := range decls {
		if d.MemoryType == declare.Context || d.MemoryType == declare.External {
			conv.docs[d.RequestID] = d
		}
	}
	writeDecls := func(path string, ds []declare.Declaration) {
		t.Helper()
		var b strings.Builder
		for _, d := range ds {
			line, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	var turns []declare.Declaration
	var prev *contextasm.Dump
	var calls []convCall
	const n = 40
	for i := range n {
		now := start.Add(time.Duration(i) * turnInterval)
		user := conv.userTurn(i, now)
		turns = append(turns, user)
		writeDecls(turnsPath, turns)
		if i%editEvery == editEvery-1 {
			d, ok := conv.edit(prev, rng, now)
			if !ok {
				t.Fatalf("call %d: nothing to edit", i+1)
			}
			decls[slices.IndexFunc(decls, func(x declare.Declaration) bool { return x.RequestID == d.RequestID })] = d
			writeDecls(memPath, decls)
		}
		dumpPath := filepath.Join(dir, fmt.Sprintf("render-%02d.json", i+1))
		code, _, stderr := runCLI(t, "render", "-t", tplPath, "-m", memPath, "-m", turnsPath, "--state", state,
			"--session", "s-bench", "--user", "u-bench", "--now", now.Format(time.RFC3339), "--format", "json", "-o", dumpPath)
		if code != exitOK {
			t.Fatalf("call %d: render: exit %d: %s", i+1, code, stderr)
		}
		d, err := readDumpFile("test", dumpPath)
		if err != nil {
			t.Fatal(err)
		}
		call := conv.measure(prev, d, user.RequestID)
		if call.overBudget || call.reqMissing || call.newestMissing {
			t.Fatalf("call %d: over budget %v (%d tokens), a required block missing %v, the newest turn missing %v",
				i+1, call.overBudget, call.tokens, call.reqMissing, call.newestMissing)
		}
		// The dump's own account of the prefix agrees with the texts.
		if prev == nil != (d.Prefix == nil) {
			t.Fatalf("call %d: prefix %+v", i+1, d.Prefix)
		}
		if p := d.Prefix; p != nil && (d.Text[:p.StableBytes] != prev.Text[:p.StableBytes] || p.StableTokens != tok.Count(d.Text[:p.StableBytes]) || p.StableTokens > call.stable) {
			t.Fatalf("call %d: prefix %+v; the texts share %d tokens of whole lines", i+1, *p, call.stable)
		}
		calls = append(calls, call)

		answer := conv.answer(i, d, rng)
		respPath := filepath.Join(dir, "answer.txt")
		if err := os.WriteFile(respPath, []byte(answer), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runCLI(t, "feedback", "--state", state, "--render", dumpPath, "--response", respPath); code != exitOK {
			t.Fatalf("call %d: feedback: exit %d: %s", i+1, code, stderr)
		}
		turns = append(turns, conv.turn(fmt.Sprintf("conv-%03d-assistant", i+1), answer, now.Add(time.Minute)))
		prev = d
	}
	f := figures(calls)
	t.Logf("%d calls through the CLI: stable fraction %.3f, Anthropic-priced cost %.3f, OpenAI-priced %.3f", n, f.StableFraction, f.CostAnthropic, f.CostOpenAI)
	if f.StableFraction < 0.85 || f.CostAnthropic > 0.30 {
		t.Errorf("stable fraction %.3f (want ≥ 0.85), Anthropic-priced cost %.3f (want ≤ 0.30)", f.StableFraction, f.CostAnthropic)
	}

	// --fresh decides from scratch: as a render with the same learned
	// trust but no previous decision does.
	now := start.Add(n * turnInterval)
	raw, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]json.RawMessage
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if len(st["sessions"]) < 10 {
		t.Fatalf("the state file holds no conversation: %.200s", raw)
	}
	delete(st, "sessions")
	forgetful := filepath.Join(dir, "no-sessions.json")
	if raw, err = json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(forgetful, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"render", "-t", tplPath, "-m", memPath, "-m", turnsPath, "--session", "s-bench", "--user", "u-bench", "--now", now.Format(time.RFC3339)}
	_, scratch, _ := runCLI(t, append(args, "--state", forgetful)...)
	_, sticky, _ := runCLI(t, append(args, "--state", state)...)
	code, fresh, stderr := runCLI(t, append(args, "--state", state, "--fresh")...)
	if code != exitOK || fresh != scratch {
		t.Errorf("render --fresh (exit %d, %s) differs from a render without the previous decision", code, stderr)
	}
	if sticky == fresh {
		t.Errorf("the fixture should make a sticky render differ from a fresh one")
	}
}

// TestEndSessionCommand: end-session releases what the state file keeps
// of a session (its conversations' decisions) and nothing else; the next
// render of the session starts afresh.
func TestEndSessionCommand(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	render := func(session string) string {
		t.Helper()
		code, out, stderr := runCLI(t, "render", "-t", mlTemplate, "-m", mlMemories, "--state", state, "--session", session,
			"--user", "u-li", "--now", "2026-11-30T10:05:00Z", "--format", "json")
		if code != exitOK {
			t.Fatalf("render: exit %d: %s", code, stderr)
		}
		return out
	}
	render("s-9")
	render("s-other")
	if out := render("s-9"); !strings.Contains(out, `"prefix"`) {
		t.Fatalf("the second render has no prefix:\n%.300s", out)
	}
	code, out, stderr := runCLI(t, "end-session", "--state", state, "--session", "s-9")
	if code != exitOK || out != "session s-9 ended: 1 conversation(s) released\n" {
		t.Fatalf("end-session: exit %d, %q, %s", code, out, stderr)
	}
	st, err := learned.NewFileStore(state).Load()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range st.Sessions {
		keys = append(keys, k)
	}
	if len(keys) != 1 || !strings.HasPrefix(keys[0], "7:s-other") {
		t.Errorf("the state holds conversations %q, want only s-other's", keys)
	}
	if len(st.Heat) == 0 {
		t.Error("end-session lost the heat")
	}
	if out := render("s-9"); strings.Contains(out, `"prefix"`) {
		t.Error("after end-session the session's render follows a previous decision")
	}
	code, out, _ = runCLI(t, "end-session", "--state", state, "--session", "nobody", "--format", "json")
	if code != exitOK || strings.TrimSpace(out) != `{"session":"nobody","decisions":0}` {
		t.Errorf("end-session of an unknown session: exit %d, %q", code, out)
	}
	if code, _, stderr := runCLI(t, "end-session", "--state", state); code != exitUsage || !strings.Contains(stderr, "--session") {
		t.Errorf("end-session without --session: exit %d, %s", code, stderr)
	}
}
