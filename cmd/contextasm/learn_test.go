package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
)

var demoArgs = []string{"-t", "demo/template.json", "-m", "demo/memories.jsonl",
	"--session", "sess-4711", "--user", "u-ana", "--role", "loan-agent", "--now", "2026-11-30T09:00:00Z"}

func renderDump(t *testing.T, state, out string) *contextasm.Dump {
	t.Helper()
	args := append([]string{"render", "--state", state, "--format", "json", "-o", out}, demoArgs...)
	if code, _, stderr := runCLI(t, args...); code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	d, err := readDumpFile("test", out)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func blockOf(d *contextasm.Dump, id string) contextasm.BlockResult {
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			if b.RequestID == id {
				return b
			}
		}
	}
	return contextasm.BlockResult{}
}

// The learning loop end to end: render → feedback → render → heat through the
// CLI shows the trust change, the changed score and the counters.
func TestRenderFeedbackRenderHeat(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	first := renderDump(t, state, filepath.Join(dir, "r1.json"))

	code, out, stderr := runCLI(t, "feedback", "--state", state, "--render", filepath.Join(dir, "r1.json"), "--response", "testdata/feedback/response.txt")
	if code != exitOK {
		t.Fatalf("feedback: exit %d: %s", code, stderr)
	}
	golden(t, "feedback.txt", out)
	if !strings.Contains(out, "app-4711-dti") || !strings.Contains(out, "  0.50 -> 0.55") {
		t.Errorf("feedback output lacks the trust change:\n%s", out)
	}

	second := renderDump(t, state, filepath.Join(dir, "r2.json"))
	b1, b2 := blockOf(first, "app-4711-dti"), blockOf(second, "app-4711-dti")
	if b1.Trust != 0.5 || b2.Trust != 0.55 || b2.Score <= b1.Score {
		t.Errorf("app-4711-dti: trust %v -> %v, score %v -> %v; want trust 0.5 -> 0.55 and a higher score", b1.Trust, b2.Trust, b1.Score, b2.Score)
	}

	code, heat, stderr := runCLI(t, "heat", "--state", state)
	if code != exitOK {
		t.Fatalf("heat: exit %d: %s", code, stderr)
	}
	golden(t, "heat.txt", heat)
	code, heatJSON, _ := runCLI(t, "heat", "--state", state, "--format", "json")
	if code != exitOK {
		t.Fatal("heat --format json failed")
	}
	golden(t, "heat.json", heatJSON)
	var rows []heatRow
	if err := json.Unmarshal([]byte(heatJSON), &rows); err != nil {
		t.Fatal(err)
	}
	want := map[string]heatRow{
		"app-4711-dti":     {RequestID: "app-4711-dti", Included: 2, Refs: 1, StartRefs: 1},
		"policy-dti-limit": {RequestID: "policy-dti-limit", Included: 2, Refs: 1, StartRefs: 1},
		"news-ecb-rates":   {RequestID: "news-ecb-rates", Cut: 2},
		"turn-04-agent":    {RequestID: "turn-04-agent", Dropped: 2},
	}
	for _, r := range rows {
		if w, ok := want[r.RequestID]; ok && r != w {
			t.Errorf("heat %s = %+v, want %+v", r.RequestID, r, w)
		}
		if r.RequestID == "turn-02-agent" && r.Refs != 0 {
			t.Errorf("a block cited but not in the context counted a citation: %+v", r)
		}
	}
}

func TestFeedbackJSONAndViolation(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	renderDump(t, state, filepath.Join(dir, "r.json"))
	code, out, _ := runCLI(t, "feedback", "--state", state, "--render", filepath.Join(dir, "r.json"), "--response", "testdata/feedback/response.txt", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	golden(t, "feedback.json", out)
	var fb map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &fb); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"refs", "unknown_refs", "trust_changes", "violations", "model_response_hash"} {
		if _, ok := fb[k]; !ok {
			t.Errorf("feedback JSON lacks %q", k)
		}
	}

	code, out, stderr := runCLI(t, "feedback", "--state", state, "--render", filepath.Join(dir, "r.json"), "--response", "testdata/feedback/violation.txt")
	if code != exitViolation {
		t.Errorf("violation: exit %d, want %d", code, exitViolation)
	}
	// Each violation once, in labelled columns; stderr only says so.
	if !strings.Contains(out, "  block                  pattern\n  reg-ecoa-fair-lending  \"(?i)because") ||
		strings.Count(out+stderr, "because (she|he)") != 1 || !strings.Contains(stderr, "CONSTRAINT_VIOLATION: the response broke 1 constraint(s)") {
		t.Errorf("violation not reported once:\nstdout %s\nstderr %s", out, stderr)
	}
	// The violating response still taught: its start citation moved trust.
	st, _ := os.ReadFile(state)
	if !strings.Contains(string(st), `"reg-ecoa-fair-lending": 0.99`) {
		t.Errorf("state after violating response:\n%s", st)
	}
}

func TestFeedbackAndHeatErrors(t *testing.T) {
	dir := t.TempDir()
	future := writeFile(t, dir, "v9.json", `{"version": 9, "trust": {}, "heat": {}}`)
	notDump := writeFile(t, dir, "nd.json", `{"hello": 1}`)
	resp := writeFile(t, dir, "resp.txt", "hi")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing flags", []string{"feedback"}, exitUsage, "--state, --render and --response"},
		{"not a dump", []string{"feedback", "--state", filepath.Join(dir, "s.json"), "--render", notDump, "--response", resp}, exitUsage, "not a contextasm render dump"},
		{"unknown state version", []string{"heat", "--state", future}, exitUsage, "version 9"},
		{"missing state", []string{"heat", "--state", filepath.Join(dir, "none.json")}, exitUsage, "none.json"},
		{"bad format", []string{"heat", "--state", future, "--format", "xml"}, exitUsage, "--format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tt.code, stderr, tt.want)
			}
		})
	}
}
