package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/goldenfile"
	"github.com/contextasm/contextasm/outcome"
)

var update = flag.Bool("update", false, "rewrite golden files")

// runCLI runs the program with args and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, name, got, *update)
}

const (
	mlTemplate = "testdata/multilingual/template.json"
	mlMemories = "testdata/multilingual/memories.jsonl"
)

var mlRequest = []string{"--now", "2026-11-30T10:05:00Z", "--session", "s-9", "--user", "u-li"}

func TestGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"demo.txt", []string{"demo"}},
		{"demo.json", []string{"demo", "--format", "json"}},
		{"multilingual.txt", append([]string{"render", "-t", mlTemplate, "-m", mlMemories}, mlRequest...)},
		{"multilingual.json", append([]string{"render", "-t", mlTemplate, "-m", mlMemories, "--format", "json"}, mlRequest...)},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			if code != exitOK {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			golden(t, tt.golden, out)
		})
	}
}

// The demo must show every kind of decision contextasm makes.
func TestDemoShowsEveryDecision(t *testing.T) {
	_, out, _ := runCLI(t, "demo", "--format", "json")
	var d contextasm.Dump
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	reasons := map[string]bool{}
	for _, e := range d.Events {
		reasons[string(e.Reason)] = true
	}
	for _, want := range []string{"expired", "stale", "section_cap", "budget", "cut", "escaped", "degraded", "summarized"} {
		if !reasons[want] {
			t.Errorf("demo has no %q event", want)
		}
	}
	// Exclusions that would name another tenant's block are counted.
	for _, want := range []outcome.Reason{outcome.ReasonOutOfScope, outcome.ReasonAccessDenied, outcome.ReasonAudience} {
		if d.ExcludedCounts[want] == 0 || reasons[string(want)] {
			t.Errorf("demo: %s counted %d times and listed %v; want counted, not listed", want, d.ExcludedCounts[want], reasons[string(want)])
		}
	}
	tok, err := bpe.Load(d.Encoding)
	if err != nil {
		t.Fatal(err)
	}
	if n := tok.Count(d.Text); n != d.TotalTokens || n > d.Budget {
		t.Errorf("demo text counts %d tokens, total_tokens %d, budget %d", n, d.TotalTokens, d.Budget)
	}
}

func TestRenderTextMatchesJSON(t *testing.T) {
	_, text, _ := runCLI(t, append([]string{"render", "-t", mlTemplate, "-m", mlMemories}, mlRequest...)...)
	_, js, _ := runCLI(t, append([]string{"render", "-t", mlTemplate, "-m", mlMemories, "--format", "json"}, mlRequest...)...)
	var d contextasm.Dump
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	if text != d.Text || !strings.HasSuffix(text, "\n") {
		t.Errorf("text output and json text differ")
	}
}

func TestRenderToFileThenVerify(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "rendered.txt")
	code, stdout, stderr := runCLI(t, append([]string{"render", "-t", mlTemplate, "-m", mlMemories, "-o", out}, mlRequest...)...)
	if code != exitOK || stdout != "" {
		t.Fatalf("render -o: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "verify", "-t", mlTemplate, out); code != exitOK {
		t.Fatalf("verify: exit %d: %s", code, stderr)
	}
	// The same rendering checked against another budget's fingerprint.
	code, _, stderr = runCLI(t, "verify", "-t", mlTemplate, "--budget", "999", out)
	if code != exitFailure || !strings.Contains(stderr, "the template or its budget 999 differs") || strings.Count(stderr, "differ") != 1 {
		t.Errorf("verify with another budget: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "verify", "-t", mlTemplate, out, out)
	if code != exitUsage || !strings.Contains(stderr, "want one RENDERED.txt") {
		t.Errorf("verify with two files: exit %d, stderr %q", code, stderr)
	}
	// No file, or "-": the rendering comes on stdin.
	rendered, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"verify", "-t", mlTemplate}, {"verify", "-t", mlTemplate, "-"}} {
		var so, se bytes.Buffer
		if code := run(context.Background(), args, bytes.NewReader(rendered), &so, &se); code != exitOK || !strings.Contains(so.String(), "ok: stdin") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, so.String(), se.String())
		}
	}
	// A rendering made with --budget verifies only with that budget.
	out2 := filepath.Join(dir, "r2.txt")
	runCLI(t, append([]string{"render", "-t", mlTemplate, "-m", mlMemories, "--budget", "999", "-o", out2}, mlRequest...)...)
	if code, _, stderr := runCLI(t, "verify", "-t", mlTemplate, "--budget", "999", out2); code != exitOK {
		t.Errorf("verify --budget: exit %d: %s", code, stderr)
	}
	// No header at all.
	plain := filepath.Join(dir, "plain.txt")
	os.WriteFile(plain, []byte("hello\n"), 0o644)
	if code, _, stderr := runCLI(t, "verify", "-t", mlTemplate, plain); code != exitUsage || !strings.Contains(stderr, "no protocol header") {
		t.Errorf("verify plain text: exit %d, stderr %q", code, stderr)
	}
}

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	tiny := writeFile(t, dir, "tiny.json", `{"budget": 40, "sections": [{"name": "R", "priority": 1, "memory_types": ["constraint"], "max_tokens": 30, "render": "{content}"}]}`)
	bigRequired := writeFile(t, dir, "req.jsonl", `{"request_id":"r1","memory_type":"constraint","scope":"global","required":true,"content":"`+strings.Repeat("word ", 60)+`"}`+"\n")
	badMem := writeFile(t, dir, "bad.jsonl", "{\"request_id\":\"a\",\"memory_type\":\"nope\",\"scope\":\"global\",\"content\":\"x\"}\n# ok\n{\"request_id\":\"b\",\"memory_type\":\"history\",\"scope\":\"session\",\"content\":\"y\",\"semantic_weight\":2}\n")
	mlData, err := os.ReadFile(mlMemories)
	if err != nil {
		t.Fatal(err)
	}
	copyOfML := writeFile(t, dir, "copy.jsonl", string(mlData))
	badTpl := writeFile(t, dir, "bad.json", `{"budget": 0, "sections": [{"name": "A", "priority": 1, "memory_types": ["context"], "max_tokens": 10, "render": "{title}"}]}`)
	tests := []struct {
		name      string
		args      []string
		code      int
		stderrHas []string
		stdoutHas string
	}{
		{"no command", nil, exitUsage, []string{"Commands:"}, ""},
		{"unknown command", []string{"frobnicate"}, exitUsage, []string{`unknown command "frobnicate"`}, ""},
		{"help", []string{"help"}, exitOK, nil, "Commands:"},
		{"render without inputs", []string{"render"}, exitUsage, []string{"-t TEMPLATE"}, ""},
		{"render bad flag", []string{"render", "--bogus"}, exitUsage, []string{"bogus"}, ""},
		{"render bad format", []string{"render", "-t", mlTemplate, "-m", mlMemories, "--format", "xml"}, exitUsage, []string{"--format"}, ""},
		{"render bad now", []string{"render", "-t", mlTemplate, "-m", mlMemories, "--now", "yesterday"}, exitUsage, []string{"--now", "e.g. --now 2026-11-30T09:00:00Z"}, ""},
		{"render budget 0", []string{"render", "-t", mlTemplate, "-m", mlMemories, "--budget", "0"}, exitUsage, []string{"-budget", "must be a positive number of tokens"}, ""},
		{"render negative budget", []string{"render", "-t", mlTemplate, "-m", mlMemories, "--budget", "-5"}, exitUsage, []string{"must be a positive number of tokens"}, ""},
		{"render empty role", []string{"render", "-t", mlTemplate, "-m", mlMemories, "--role", "a,,b"}, exitUsage, []string{"empty role"}, ""},
		{"verify budget 0", []string{"verify", "-t", mlTemplate, "--budget", "0", "x.txt"}, exitUsage, []string{"must be a positive number of tokens"}, ""},
		{"render missing file", []string{"render", "-t", mlTemplate, "-m", filepath.Join(dir, "nope.jsonl")}, exitUsage, []string{"nope.jsonl"}, ""},
		{"render required too big", []string{"render", "-t", tiny, "-m", bigRequired, "--now", "2026-01-01T00:00:00Z"}, exitBudget, []string{"budget too small", `"r1"`, "max_tokens 30"}, ""},
		{"validate ok", []string{"validate", "-t", mlTemplate, "-m", mlMemories}, exitOK, nil, "ok: 10 declarations"},
		{"validate lists every problem", []string{"validate", "-t", badTpl, "-m", badMem}, exitUsage, []string{
			"bad.json:1: budget: must be a positive number",
			"bad.json:1: sections[0].render: unknown placeholder {title}",
			`bad.jsonl:1: request_id "a": memory_type: must be one of`,
			`bad.jsonl:3: request_id "b": semantic_weight: must be between 0 and 1 (got 2)`,
			`bad.jsonl:3: request_id "b": session_id: is required when scope is session`,
		}, ""},
		{"validate duplicate across files", []string{"validate", "-m", mlMemories, "-m", copyOfML}, exitUsage,
			[]string{copyOfML + `:2: request_id "zh-rule-privacy": request_id: also declared in ` + mlMemories + ":2\n"}, ""},
		{"validate the same file twice", []string{"validate", "-m", mlMemories, "-m", mlMemories}, exitUsage,
			[]string{mlMemories + ": the same file as " + mlMemories + ", given twice; give each file once\n"}, ""},
		{"verify empty stdin", []string{"verify", "-t", mlTemplate}, exitUsage, []string{"stdin"}, ""},
		{"version", []string{"version"}, exitOK, nil, "contextasm "},
		{"--version", []string{"--version"}, exitOK, nil, "contextasm "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			for _, s := range tt.stderrHas {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			if !strings.Contains(stdout, tt.stdoutHas) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdoutHas, stdout)
			}
		})
	}
}

// Errors go to stderr one problem per line: every line of a validation
// failure names a file.
func TestErrorsOnePerLine(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "m.jsonl", "{\"request_id\":\"a b\"}\n{]\n")
	_, _, stderr := runCLI(t, "validate", "-m", bad)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) < 4 {
		t.Fatalf("want one line per problem, got:\n%s", stderr)
	}
	for _, l := range lines {
		if !strings.Contains(l, "m.jsonl:") {
			t.Errorf("line does not name the file and line: %q", l)
		}
	}
}

// TestRenderAuditNamesFiles: render --audit logs each -m file's SHA-256 and
// each rendered block's hash, and no content.
func TestRenderAuditNamesFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	args := append([]string{"render", "--audit", path, "-o", filepath.Join(t.TempDir(), "out.txt")}, demoArgs...)
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Blocks []outcome.AuditBlock `json:"blocks"`
		Inputs []outcome.Input      `json:"inputs"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	mem, err := os.ReadFile("demo/memories.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(mem)
	want := []outcome.Input{{Name: "file:demo/memories.jsonl", SHA256: hex.EncodeToString(sum[:])}}
	if !slices.Equal(rec.Inputs, want) {
		t.Errorf("inputs %+v, want %+v", rec.Inputs, want)
	}
	if len(rec.Blocks) == 0 || len(rec.Blocks[0].SHA256) != 64 {
		t.Errorf("blocks %+v, want each with a SHA-256", rec.Blocks)
	}
	if strings.Contains(string(data), "Equal Credit Opportunity") {
		t.Error("the audit line holds block content")
	}
}

// TestCommandHelp: every command's --help goes to stdout, starts with a
// synopsis naming its positional arguments, lists its flags and ends with
// an example; exit 0, nothing on stderr.
func TestCommandHelp(t *testing.T) {
	for name, h := range commandHelp {
		for _, flagName := range []string{"--help", "-h"} {
			code, stdout, stderr := runCLI(t, name, flagName)
			if code != exitOK || stderr != "" {
				t.Errorf("%s %s: exit %d, stderr %q", name, flagName, code, stderr)
			}
			if !strings.HasPrefix(stdout, "Usage: contextasm "+name) || !strings.Contains(stdout, "\nFlags:\n  -") ||
				!strings.HasSuffix(stdout, "Example:\n  "+h.example+"\n") {
				t.Errorf("%s %s: help is\n%s", name, flagName, stdout)
			}
		}
	}
	if !strings.Contains(commandHelp["diff"].synopsis, "A.json B.json") || !strings.Contains(commandHelp["verify"].synopsis, "RENDERED.txt") {
		t.Error("synopses must name positional arguments")
	}
	_, _, stderr := runCLI(t, "render", "--bogus")
	if !strings.Contains(stderr, "see contextasm render --help") {
		t.Errorf("a flag error does not point to the help: %q", stderr)
	}
}

// TestRoleList: --role a,b is two roles, the same as --role a --role b.
func TestRoleList(t *testing.T) {
	var f requestFlags
	fs := newFlags("render", io.Discard)
	f.register(fs)
	if err := fs.Parse([]string{"--role", "loan-agent, credit-officer", "--role", "auditor"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"loan-agent", "credit-officer", "auditor"}; !slices.Equal(f.roles, want) {
		t.Errorf("roles %q, want %q", f.roles, want)
	}
}

// TestRenderWarnings: render says on stderr what a valid input will not
// do: session- or user-scoped blocks with no --session or --user are all
// excluded, and violation_patterns without break_on_violation are never
// checked (validate says the latter too).
func TestRenderWarnings(t *testing.T) {
	mem := filepath.Join(t.TempDir(), "m.jsonl")
	data := `{"request_id":"s1","memory_type":"context","scope":"session","session_id":"sess-1","content":"mine"}
{"request_id":"u1","memory_type":"context","scope":"user","user_id":"u-1","content":"yours"}
{"request_id":"u2","memory_type":"context","scope":"user","user_id":"u-1","content":"yours too"}
{"request_id":"v1","memory_type":"constraint","scope":"global","violation_patterns":["(?i)secret"],"content":"keep it"}
`
	if err := os.WriteFile(mem, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, stderr := runCLI(t, "render", "-t", mlTemplate, "-m", mem, "--now", "2026-01-01T00:00:00Z")
	for _, want := range []string{
		"render: warning: 1 block scoped to a session excluded: no --session given",
		"render: warning: 2 blocks scoped to a user excluded: no --user given",
		`render: warning: request_id "v1": violation_patterns are ignored without "break_on_violation": true`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	_, _, stderr = runCLI(t, "render", "-t", mlTemplate, "-m", mem, "--now", "2026-01-01T00:00:00Z", "--session", "sess-1", "--user", "u-2")
	if strings.Contains(stderr, "scoped to") {
		t.Errorf("a request naming a session and a user was warned:\n%s", stderr)
	}
	_, _, stderr = runCLI(t, "validate", "-m", mem)
	if !strings.Contains(stderr, `validate: warning: request_id "v1"`) {
		t.Errorf("validate does not warn about v1:\n%s", stderr)
	}
}

// TestMalformedStateIsUsageError: a state file that is not a state file is
// bad input, exit 2, as documented, for every command that reads one.
func TestMalformedStateIsUsageError(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(state, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"heat", "--state", state},
		append([]string{"render", "--state", state}, demoArgs...),
	} {
		code, _, stderr := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(stderr, "not a state file") || !strings.Contains(stderr, state) {
			t.Errorf("%s: exit %d, stderr %q; want 2 naming the file", args[0], code, stderr)
		}
	}
}

// A mistyped flag or command is one line on stderr, with the nearest one,
// and exit 2; nothing on stdout. A mistyped flag used to print the
// command's whole help on stdout, an unknown command the list of
// commands. --help still prints the help.
func TestMistypedFlagsAndCommands(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "--budgte", "5"}, "render: unknown flag --budgte (did you mean --budget?); see contextasm render --help\n"},
		{[]string{"validate", "-x"}, "validate: unknown flag -x; see contextasm validate --help\n"},
		{[]string{"count", "--tokenzer", "f"}, "count: unknown flag --tokenzer (did you mean --tokenizer?); see contextasm count --help\n"},
		{[]string{"diff", "a.json", "--fromat", "json"}, "diff: unknown flag --fromat (did you mean --format?); see contextasm diff --help\n"},
		{[]string{"rendr"}, "contextasm: unknown command \"rendr\" (did you mean render?); see contextasm help\n"},
		{[]string{"frobnicate"}, "contextasm: unknown command \"frobnicate\"; see contextasm help\n"},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != exitUsage || stdout != "" || stderr != tc.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, nothing, %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	code, stdout, _ := runCLI(t, "render", "--help")
	if code != exitOK || !strings.HasPrefix(stdout, "Usage: contextasm render") || !strings.Contains(stdout, "-budget") {
		t.Errorf("render --help: exit %d, stdout %q", code, stdout)
	}
}

// Invalid inputs name the file (and the field), with exit 2: a tokenizer
// file that is not one (it used to exit 1), an -o path in a directory that
// does not exist (it used to name a temporary file), a --render file that
// is not a dump (it used to say "view:").
func TestInvalidInputsNamed(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "tok.json")
	if err := os.WriteFile(bad, []byte(`{"added_tokens": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	notDump := filepath.Join(dir, "r.json")
	if err := os.WriteFile(notDump, []byte(`{"text": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no", "such", "out.txt")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"count", "--tokenizer", bad, "testdata/demo.json"}, "hftok: " + bad + ": model: missing"},
		{[]string{"render", "-t", mlTemplate, "-m", mlMemories, "--tokenizer", bad}, bad + ": model: missing"},
		{[]string{"demo", "-o", missing}, "-o " + missing + ": the directory " + filepath.Dir(missing) + " does not exist\n"},
		{[]string{"feedback", "--state", filepath.Join(dir, "s.json"), "--render", notDump, "--response", notDump}, "feedback: --render " + notDump + ": not a contextasm render dump"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, ".tmp") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// A template file may name a tokenizer file only inside its directory: one
// that names /etc/passwd, or ../ out of it, is refused (exit 2) without
// the file being read; --tokenizer, the operator's own flag, takes any
// path.
func TestTemplateTokenizerConfined(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(outside, []byte(`{"model": {"type": "BPE", "vocab": {}, "merges": []}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, enc := range []string{"/etc/passwd", outside, "../" + filepath.Base(filepath.Dir(outside)) + "/secret.json"} {
		tpl := filepath.Join(dir, "t.json")
		src := `{"budget": 100, "encoding": ` + strconv.Quote(enc) + `, "sections": [{"name": "s", "priority": 1, "memory_types": ["context"], "max_tokens": 50, "render": "{content}"}]}`
		if err := os.WriteFile(tpl, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, "validate", "-t", tpl)
		if code != exitUsage || !strings.Contains(stderr, "only inside its own directory") || strings.Contains(stderr, "root:") {
			t.Errorf("encoding %q: exit %d, stderr %q", enc, code, stderr)
		}
	}
}
