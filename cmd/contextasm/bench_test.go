package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBenchCommand(t *testing.T) {
	args := append([]string{"bench", "-t", mlTemplate, "-m", mlMemories, "--budgets", "200,380", "--runs", "2", "--format", "json"}, mlRequest...)
	code, out, stderr := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"encoding", "blocks", "runs", "results"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("bench JSON lacks %q", k)
		}
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Encoding != "o200k_base" || rep.Blocks != 10 || rep.Runs != 2 || len(rep.Results) != 2 {
		t.Fatalf("report header %+v", rep)
	}
	var results []map[string]json.RawMessage
	json.Unmarshal(raw["results"], &results)
	for _, k := range []string{"budget", "total_tokens", "kept", "cut", "dropped", "cold_ms", "warm_ms", "turn_ms", "warm_allocs", "tokenizer_calls_warm", "tokenizer_calls_turn"} {
		if _, ok := results[0][k]; !ok {
			t.Errorf("bench result lacks %q", k)
		}
	}
	for i, r := range rep.Results {
		if want := []int{200, 380}[i]; r.Budget != want || r.TotalTokens > r.Budget || r.TotalTokens == 0 {
			t.Errorf("budget %d: total %d", r.Budget, r.TotalTokens)
		}
		// Ten blocks, all eligible for this request, each counted once.
		if r.Kept+r.Cut+r.Dropped != 10 {
			t.Errorf("budget %d: kept %d + cut %d + dropped %d != 10", r.Budget, r.Kept, r.Cut, r.Dropped)
		}
		if r.TokenizerCallsWarm != 0 {
			t.Errorf("budget %d: a warm assembly made %d tokenizer calls", r.Budget, r.TokenizerCallsWarm)
		}
		if r.TokenizerCallsTurn < 1 {
			t.Errorf("budget %d: the turn's new block was never counted", r.Budget)
		}
		if r.ColdMS <= 0 || r.WarmMS < 0 || r.TurnMS <= 0 {
			t.Errorf("budget %d: times %v/%v/%v", r.Budget, r.ColdMS, r.WarmMS, r.TurnMS)
		}
	}
	if rep.Results[0].Kept >= rep.Results[1].Kept {
		t.Errorf("a smaller budget kept as many blocks (%d vs %d)", rep.Results[0].Kept, rep.Results[1].Kept)
	}

	code, text, _ := runCLI(t, append([]string{"bench", "-t", mlTemplate, "-m", mlMemories, "--budgets", "380", "--runs", "1"}, mlRequest...)...)
	if code != exitOK || !strings.Contains(text, "HISTORY") || !strings.Contains(text, "cold ms") {
		t.Errorf("bench text output:\n%s", text)
	}
	if code, _, stderr := runCLI(t, "bench", "-t", mlTemplate, "-m", mlMemories, "--budgets", "x"); code != exitUsage || !strings.Contains(stderr, "--budgets") {
		t.Errorf("bad --budgets: exit %d, %s", code, stderr)
	}
}
