package main

import (
	"strings"
	"testing"

	"github.com/contextasm/contextasm/template"
)

const (
	fbV2       = "testdata/fallback/v2.json"
	fbV1       = "testdata/fallback/v1.json"
	fbMemories = "testdata/fallback/memories.jsonl"
	fbNow      = "2026-11-30T09:00:00Z"
)

// A fallback chain from the command line: v2's rules cap cannot hold the
// required rules, so v1 is used, and the dump and the report say why v2
// was not; the conflicting rate rules show in both.
func TestFallbackGolden(t *testing.T) {
	for _, tt := range []struct{ golden, format string }{{"fallback.json", "json"}, {"fallback.report.txt", "report"}, {"fallback.txt", "text"}} {
		t.Run(tt.golden, func(t *testing.T) {
			code, out, errOut := runCLI(t, "render", "-t", fbV2, "-t", fbV1, "-m", fbMemories, "--now", fbNow, "--format", tt.format)
			if code != exitOK {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			golden(t, tt.golden, out)
		})
	}
}

func TestFallbackCLI(t *testing.T) {
	v1, err := template.LoadFile(fbV1)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := template.LoadFile(fbV2)
	if err != nil {
		t.Fatal(err)
	}
	// --budget makes another template, with its own fingerprint.
	v1small, err := v1.WithBudget(20)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pair := writeFile(t, dir, "pair.jsonl", `{"request_id":"a","memory_type":"constraint","scope":"global","required":true,"conflict_key":"k","content":"A."}`+"\n"+
		`{"request_id":"b","memory_type":"constraint","scope":"global","required":true,"conflict_key":"k","content":"B."}`+"\n")
	render := []string{"render", "-m", fbMemories, "--now", fbNow}
	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas []string
		stderrHas []string
	}{
		{"only v1 accepted, though v2 comes first", append(render, "-t", fbV2, "-t", fbV1, "--accept", "v1.2,fp:"+v1.Fingerprint(), "--format", "json"), exitOK,
			[]string{`"used": 1`, `"reason": "not_accepted"`, v1.Fingerprint()}, nil},
		{"--accept repeated", append(render, "-t", fbV1, "--accept", "v1.2", "--accept", "fp:"+v1.Fingerprint()), exitOK,
			[]string{"fp:" + v1.Fingerprint()}, nil},
		{"v2 alone does not fit", append(render, "-t", fbV2), exitBudget, nil, []string{"budget too small", `"rule-kyc"`}},
		{"v2 not accepted, v1 too small under --budget", append(render, "-t", fbV2, "-t", fbV1, "--accept", "fp:"+v1small.Fingerprint(), "--budget", "20"), exitBudget, nil,
			[]string{"no template of the chain is accepted and fits", "template 0 (", "v1.2): not_accepted", "template 1 (" + v1small.Fingerprint() + ", v1.2): budget_too_small"}},
		{"no version accepted", append(render, "-t", fbV1, "-t", fbV2, "--accept", "v1.1"), exitNoTemplate, nil,
			[]string{"no template of the chain is accepted and fits", "template 1 (" + v2.Fingerprint() + ", v1.2): not_accepted"}},
		{"a bad --accept", append(render, "-t", fbV1, "--accept", "1.2"), exitUsage, nil, []string{`Request.Accept[0] "1.2"`}},
		{"an empty --accept entry", append(render, "-t", fbV1, "--accept", "v1.2,"), exitUsage, nil, []string{"empty entry"}},
		{"a fallback that does not load", append(render, "-t", fbV1, "-t", "testdata/fallback/nope.json"), exitUsage, nil, []string{"nope.json"}},
		{"validate takes one template", []string{"validate", "-t", fbV1, "-t", fbV2}, exitUsage, nil, []string{"only render takes more than one template"}},
		{"required blocks in conflict", []string{"render", "-t", fbV1, "-m", pair, "--now", fbNow}, exitConflict, nil,
			[]string{`conflict_key "k": required blocks "a" and "b" exclude each other`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			for _, s := range tt.stdoutHas {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range tt.stderrHas {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
		})
	}
}
