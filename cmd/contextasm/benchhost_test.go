package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/bench"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/cputime"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/template"
)

// TestBenchHostFlags: the simulated host's flags refuse bad values and
// need --turns, each error naming its flag.
func TestBenchHostFlags(t *testing.T) {
	tpl, mem := workload(t, 50, 6000)
	for _, tt := range []struct {
		args []string
		flag string
	}{
		{[]string{"--turns", "2", "--request-format", "xml"}, "--request-format"},
		{[]string{"--turns", "2", "--request-format", "json"}, "--request-format"},
		{[]string{"--turns", "2", "--clear", "yes"}, "--clear"},
		{[]string{"--request-format", "openai"}, "--request-format"},
		{[]string{"--summaries"}, "--summaries"},
		{[]string{"--clear", "on"}, "--clear"},
		{[]string{"--state", filepath.Join(t.TempDir(), "s.json")}, "--state"},
	} {
		code, _, stderr := runCLI(t, append([]string{"bench", "-t", tpl, "-m", mem}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.flag) {
			t.Errorf("bench %q: exit %d, %q: want a usage error naming %s", tt.args, code, stderr, tt.flag)
		}
	}
}

// TestBenchHostCall: `bench --turns N --request-format openai` reports
// per call the host's costs beside the prefix figures, declares the tool
// exchanges and (--summaries) the summaries, and writes --state.
func TestBenchHostCall(t *testing.T) {
	tpl, mem := workload(t, 400, 6000)
	state := filepath.Join(t.TempDir(), "state.json")
	code, out, stderr := runCLI(t, "bench", "-t", tpl, "-m", mem, "--turns", "12", "--request-format", "openai", "--summaries",
		"--state", state, "--now", "2026-11-30T09:00:00Z", "--user", "u-bench", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var raw struct {
		RequestFormat string                       `json:"request_format"`
		Results       []map[string]json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.RequestFormat != "openai" || len(raw.Results) != 1 {
		t.Fatalf("request_format %q, %d results:\n%s", raw.RequestFormat, len(raw.Results), out)
	}
	for _, k := range []string{"turn_ms", "turn_ms_p99", "turn_ms_first_tenth", "turn_ms_last_tenth", "turn_cpu_ms", "allocs", "turns_represented", "cleared", "tool_exchanges", "summaries", "summaries_used", "body_bytes", "stable_fraction", "cost_anthropic"} {
		if _, ok := raw.Results[0][k]; !ok {
			t.Errorf("the result lacks %q", k)
		}
	}
	var rep conversationReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.TurnMSFirst <= 0 || r.TurnMSLast <= 0 || r.TurnMSFirst > r.TurnMSP99 || r.TurnMSLast > r.TurnMSP99 {
		t.Errorf("turn_ms_first_tenth %v, turn_ms_last_tenth %v, p99 %v", r.TurnMSFirst, r.TurnMSLast, r.TurnMSP99)
	}
	if r.TurnMS <= 0 || r.TurnMSP99 < r.TurnMS || r.Allocs <= 0 || r.BodyBytes <= 0 {
		t.Errorf("turn_ms %v, p99 %v, allocs %v, body_bytes %v", r.TurnMS, r.TurnMSP99, r.Allocs, r.BodyBytes)
	}
	if cputime.Process() > 0 && r.TurnCPUMS <= 0 {
		t.Errorf("turn_cpu_ms %v where the process's CPU time is known", r.TurnCPUMS)
	}
	if r.ToolExchanges != 6 {
		t.Errorf("%d tool exchanges in 12 calls, want 6 (every other call)", r.ToolExchanges)
	}
	if r.Summaries == 0 || r.SummariesUsed == 0 {
		t.Errorf("--summaries: %d declared, %d in the context: the workload drops history, which should be summarised", r.Summaries, r.SummariesUsed)
	}
	if r.TurnsRepresented < 1 || r.OverBudget != 0 || r.NewestTurnMissing != 0 || r.RequiredMissing != 0 || r.MaxTokens > r.Budget {
		t.Errorf("result %+v", r)
	}
	if r.StableFraction <= 0 || r.StableFraction >= 1 {
		t.Errorf("stable fraction %v", r.StableFraction)
	}
	st, err := learned.NewFileStore(state).Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Trust) == 0 || len(st.Sessions) == 0 {
		t.Errorf("--state holds %d trust entries and %d conversations: want the run's feedback and decisions", len(st.Trust), len(st.Sessions))
	}

	code, text, stderr := runCLI(t, "bench", "-t", tpl, "-m", mem, "--turns", "3", "--request-format", "anthropic", "--now", "2026-11-30T09:00:00Z")
	if code != exitOK || !strings.Contains(text, "anthropic bodies") || !strings.Contains(text, "turn cpu ms") {
		t.Errorf("bench --turns --request-format text report (exit %d, %s):\n%s", code, stderr, text)
	}
}

// TestBenchHostBodies: in every chat format, a call with a tool exchange
// sends it in its body: the call and its result.
func TestBenchHostBodies(t *testing.T) {
	tok, err := bpe.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := template.Parse(bench.TemplateJSON(6000), "bench")
	if err != nil {
		t.Fatal(err)
	}
	req := contextasm.Request{Template: tpl, Now: bench.Epoch, SessionID: bench.Session, UserID: bench.User}
	for _, f := range []chat.Format{chat.FormatOpenAI, chat.FormatAnthropic, chat.FormatResponses} {
		bodies := map[int]string{}
		host := hostOptions{format: f, onBody: func(call int, body []byte) { bodies[call] = string(body) }}
		if _, err := simulate(context.Background(), tok, bench.Generate(200, 1), req, 4, false, host); err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		if len(bodies) != 4 {
			t.Fatalf("%v: %d bodies for 4 calls", f, len(bodies))
		}
		// Call 2 (index 1) is the first with a tool exchange: call_002.
		for call, want := range map[int][]string{0: nil, 1: {"call_002", "get_rate", "rate sheet of call 2"}, 3: {"call_004", "rate sheet of call 4"}} {
			for _, w := range want {
				if !strings.Contains(bodies[call], w) {
					t.Errorf("%v: call %d's body lacks %q", f, call+1, w)
				}
			}
			if want == nil && strings.Contains(bodies[call], "get_rate") {
				t.Errorf("%v: call %d has no tool exchange, yet its body names get_rate", f, call+1)
			}
		}
		if f != chat.FormatOpenAI {
			continue
		}
		var body struct {
			Messages []struct {
				Role       string `json:"role"`
				ToolCallID string `json:"tool_call_id"`
				ToolCalls  []struct {
					ID string `json:"id"`
				} `json:"tool_calls"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(bodies[1]), &body); err != nil {
			t.Fatal(err)
		}
		var calls, results int
		for i, m := range body.Messages {
			if len(m.ToolCalls) > 0 && m.ToolCalls[0].ID == "call_002" {
				calls++
				if i+1 >= len(body.Messages) || body.Messages[i+1].Role != "tool" || body.Messages[i+1].ToolCallID != "call_002" {
					t.Errorf("the call's result does not follow it: %+v", body.Messages[i:])
				}
			}
			if m.Role == "tool" {
				results++
			}
		}
		if calls != 1 || results != 1 {
			t.Errorf("call 2's OpenAI body: %d assistant calls of call_002, %d tool messages; want 1 and 1", calls, results)
		}
	}
}

// TestBenchClear: --clear on clears older tool results where the history
// section sheds at its cap, and represents more turns than --clear off;
// off clears none.
func TestBenchClear(t *testing.T) {
	dir := t.TempDir()
	tpl, mem := filepath.Join(dir, "template.json"), filepath.Join(dir, "memories.jsonl")
	if err := os.WriteFile(tpl, bench.TemplateJSON(6000), 0o644); err != nil {
		t.Fatal(err)
	}
	var docs []declare.Declaration // the conversation is the whole history
	for _, d := range bench.Generate(300, 1) {
		if d.MemoryType != declare.History {
			docs = append(docs, d)
		}
	}
	f, err := os.Create(mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := bench.WriteJSONL(f, docs); err != nil {
		t.Fatal(err)
	}
	f.Close()
	run := func(clear string) conversationResult {
		t.Helper()
		// A budget above the caps' sum (8,000): the history sheds at its cap.
		code, out, stderr := runCLI(t, "bench", "-t", tpl, "-m", mem, "--turns", "40", "--request-format", "openai", "--clear", clear,
			"--budgets", "9000", "--now", "2026-11-30T09:00:00Z", "--user", "u-bench", "--format", "json")
		if code != exitOK {
			t.Fatalf("--clear %s: exit %d: %s", clear, code, stderr)
		}
		var rep conversationReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Clear != clear {
			t.Errorf("the report says clear %q, want %q", rep.Clear, clear)
		}
		return rep.Results[0]
	}
	off, on := run("off"), run("on")
	t.Logf("off: %.1f turns represented, stable %.3f; on: %.1f, stable %.3f, %d cleared", off.TurnsRepresented, off.StableFraction, on.TurnsRepresented, on.StableFraction, on.Cleared)
	if off.Cleared != 0 || on.Cleared == 0 {
		t.Errorf("cleared notices: %d with --clear off, %d with on", off.Cleared, on.Cleared)
	}
	if on.TurnsRepresented <= off.TurnsRepresented {
		t.Errorf("--clear on represents %.1f turns a call, off %.1f: want more", on.TurnsRepresented, off.TurnsRepresented)
	}
}

// TestWithClear: --clear sets or removes clear_tool_results on the
// history sections only.
func TestWithClear(t *testing.T) {
	tpl, err := template.Parse(bench.TemplateJSON(6000), "bench")
	if err != nil {
		t.Fatal(err)
	}
	on, err := withClear(tpl, "on")
	if err != nil {
		t.Fatal(err)
	}
	for i := range on.NumSections() {
		s := on.Section(i)
		if c, _, _ := s.ClearToolResults(); c != (s.Name() == "HISTORY") {
			t.Errorf("--clear on: section %s clears %v", s.Name(), c)
		}
	}
	off, err := withClear(on, "off")
	if err != nil {
		t.Fatal(err)
	}
	if off.Fingerprint() != tpl.Fingerprint() {
		t.Errorf("--clear off of a template that clears gives fingerprint %s, want the original's %s", off.Fingerprint(), tpl.Fingerprint())
	}
	if same, _ := withClear(tpl, ""); same != tpl {
		t.Error("no --clear changed the template")
	}
}

// TestBenchSummariesFollowingAFloor: a host that summarises every run it
// is offered, on the 2,000-block workload, makes its history section
// follow a previous decision's floor with summaries under it, some of
// whose turns are relevance hits and some never pulled. Each call's
// explanation assembles again from scratch and panics when that differs
// from the incremental assembly; it did within 10 calls (a hit of a
// replacement under the floor was passed over by the relevance lane and
// skipped by the replacements' lane) and within 20 (a replacement's turns
// were kept although one never pulled stayed out for the shed).
func TestBenchSummariesFollowingAFloor(t *testing.T) {
	tpl, mem := workload(t, 2000, 8192)
	for _, format := range []string{"openai", "text"} {
		code, out, stderr := runCLI(t, "bench", "-t", tpl, "-m", mem, "--turns", "24", "--request-format", format, "--summaries",
			"--now", "2026-11-30T09:00:00Z", "--user", "u-bench", "--format", "json")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		var rep struct {
			Results []struct {
				Summaries     int `json:"summaries"`
				SummariesUsed int `json:"summaries_used"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Results) != 1 || rep.Results[0].Summaries == 0 || rep.Results[0].SummariesUsed == 0 {
			t.Fatalf("%s: %+v: the run does not summarise", format, rep.Results)
		}
	}
}
