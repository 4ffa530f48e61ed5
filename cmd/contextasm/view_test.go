package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/width"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/view"
)

// The demo's next turn (two more history blocks, the morning after), to
// diff against testdata/demo.json.
var turn6Args = []string{"render", "-t", "demo/template.json", "-m", "demo/memories.jsonl", "-m", "testdata/turn6.jsonl",
	"--session", "sess-4711", "--user", "u-ana", "--role", "loan-agent", "--now", "2026-12-01T09:00:00Z", "--format", "json"}

// The demo's next turn asked about the old offer (--query): the query
// lifts turn-03-user, which asked about it, over turn-05-user, which then
// no longer fits: turn-05-user lost on relevance.
var queryArgs = []string{"render", "-t", "demo/template.json", "-m", "demo/memories.jsonl", "-m", "testdata/turn6.jsonl",
	"--session", "sess-4711", "--user", "u-ana", "--role", "loan-agent", "--now", "2026-12-01T09:00:00Z", "--query", "old offer rate"}

// The debug views' goldens: the report (no colour, as written to a pipe)
// of the demo, of the multilingual case and of a query that made a block
// lose on relevance, and the diff of the demo against its next turn, as
// text and JSON. The table runs in order: under -update the dumps are
// rewritten before the diffs read them.
func TestViewGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"demo.report.txt", []string{"demo", "--format", "report"}},
		{"multilingual.report.txt", append([]string{"render", "-t", mlTemplate, "-m", mlMemories, "--format", "report"}, mlRequest...)},
		{"query.report.txt", append(slices.Clone(queryArgs), "--format", "report")},
		{"demo-turn6.json", turn6Args},
		{"diff.txt", []string{"diff", "testdata/demo.json", "testdata/demo-turn6.json"}},
		{"diff.json", []string{"diff", "testdata/demo.json", "testdata/demo-turn6.json", "--format", "json"}},
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

// TestLostOnRelevance: the dump marks exactly the blocks the rows' figures
// show lost on relevance: dropped for room, below a block in the text,
// not required, whose score less its relevance points is lower than
// theirs. The report and the diff say it.
func TestLostOnRelevance(t *testing.T) {
	code, out, errOut := runCLI(t, append(slices.Clone(queryArgs), "--format", "json")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d contextasm.Dump
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Query == nil || d.Query.From != "request" || strings.Contains(out, "old offer rate") {
		t.Fatalf("query %+v; the dump must name it by hash only", d.Query)
	}
	tenK := func(v float64) int { return int(math.Round(v * 1e4)) }
	var lost []string
	for _, s := range d.Sections {
		for i, b := range s.Blocks {
			room := b.Status == outcome.StatusDropped && slices.Contains([]outcome.Reason{"budget", "section_cap", "group", "sticky", "slack"}, b.Reason)
			want := false
			for _, above := range s.Blocks[:i] {
				if room && above.Status != outcome.StatusDropped && !above.Required &&
					tenK(above.Score)-tenK(above.RelevancePoints) < tenK(b.Score)-tenK(b.RelevancePoints) {
					want = true
				}
			}
			if b.LostOnRelevance != want {
				t.Errorf("%s %s: lost_on_relevance %t, the figures say %t", s.Name, b.RequestID, b.LostOnRelevance, want)
			}
			if b.LostOnRelevance {
				lost = append(lost, b.RequestID)
			}
		}
	}
	if fmt.Sprint(lost) != "[turn-05-user]" {
		t.Errorf("lost on relevance: %v, want [turn-05-user]", lost)
	}
	_, report, _ := runCLI(t, append(slices.Clone(queryArgs), "--format", "report")...)
	if !strings.Contains(report, "↳ lost on relevance to turn-03-user, ranked above it: without relevance it") {
		t.Errorf("the report does not say turn-05-user lost on relevance to turn-03-user:\n%s", report)
	}
	// Against the same turn without the query: the diff says the query
	// changed, and that turn-05-user is now lost on relevance.
	dir := t.TempDir()
	withQuery := writeFile(t, dir, "q.json", out)
	_, diff, _ := runCLI(t, "diff", "testdata/demo-turn6.json", withQuery)
	for _, want := range []string{"the query changed: fc4c670b9f7c (turn-07-user) → ", "now lost_on_relevance", "relevance 0.0938 → 0.1053"} {
		if !strings.Contains(diff, want) {
			t.Errorf("the diff lacks %q:\n%s", want, diff)
		}
	}
}

// The report and the diff read well in an 80-column terminal.
func TestViewsFit80Columns(t *testing.T) {
	for _, args := range [][]string{
		{"demo", "--format", "report"},
		append([]string{"render", "-t", mlTemplate, "-m", mlMemories, "--format", "report"}, mlRequest...),
		{"diff", "testdata/demo.json", "testdata/demo-turn6.json"},
		{"diff", "testdata/demo-turn6.json", "testdata/multilingual.json"},
		append(slices.Clone(queryArgs), "--format", "report"),
	} {
		code, out, errOut := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
		if strings.Contains(out, "\x1b") {
			t.Errorf("%q: colour written to a pipe", args)
		}
		for i, line := range strings.Split(out, "\n") {
			if w := displayWidth(line); w > 80 {
				t.Errorf("%q: line %d is %d columns: %q", args, i+1, w, line)
			}
		}
	}
}

// displayWidth is the terminal columns s takes: East Asian wide and
// fullwidth characters count two, format characters and combining marks
// none (view's own tests check its width function in detail).
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch k := width.LookupRune(r).Kind(); {
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		case k == width.EastAsianWide || k == width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}

// Colour only on a terminal, never with NO_COLOR.
func TestUseColor(t *testing.T) {
	// /dev/null is a character device, as a terminal is; a regular file and
	// a buffer are not.
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	regular, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()

	t.Setenv("NO_COLOR", "")
	if !useColor(devNull) {
		t.Errorf("no colour on a character device")
	}
	if useColor(regular) || useColor(&strings.Builder{}) {
		t.Errorf("colour on a regular file or a buffer")
	}
	t.Setenv("NO_COLOR", "1")
	if useColor(devNull) {
		t.Errorf("colour on a character device with NO_COLOR set")
	}
}

// html writes one page to -o, or to stdout; report and html are formats
// of demo too; a bad format is a usage error.
func TestRenderHTML(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "demo.html")
	code, stdout, stderr := runCLI(t, "demo", "--format", "html", "-o", out)
	if code != exitOK || stdout != "" {
		t.Fatalf("demo --format html -o: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(page), "<!DOCTYPE html>") || !strings.Contains(string(page), "turn-04-agent") {
		t.Errorf("demo.html is not the demo's page")
	}
	code, stdout, _ = runCLI(t, append([]string{"render", "-t", mlTemplate, "-m", mlMemories, "--format", "html"}, mlRequest...)...)
	if code != exitOK || !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !strings.Contains(stdout, "zh-rule-privacy") {
		t.Errorf("render --format html to stdout: exit %d, %.80q", code, stdout)
	}
	for _, args := range [][]string{{"demo", "--format", "yaml"}, {"render", "-t", mlTemplate, "-m", mlMemories, "--format", "pdf"}} {
		if code, _, stderr := runCLI(t, args...); code != exitUsage || !strings.Contains(stderr, "html, openai, anthropic or responses") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// diff takes its flag before or after the files, and exits 2 for anything
// that is not two readable render dumps.
func TestDiffUsage(t *testing.T) {
	dir := t.TempDir()
	notJSON := writeFile(t, dir, "notjson.json", "hello\n")
	tpl := mlTemplate // valid JSON, not a dump
	twice := writeFile(t, dir, "twice.json", strings.Repeat(mustRead(t, "testdata/multilingual.json"), 2))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"diff", "testdata/demo.json"}, "want two render dumps"},
		{[]string{"diff", "testdata/demo.json", "testdata/demo.json", "testdata/demo.json"}, "got 3 file(s)"},
		{[]string{"diff", "testdata/demo.json", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"diff", "testdata/demo.json", dir}, "is a directory"},
		{[]string{"diff", notJSON, "testdata/demo.json"}, "notjson.json: not a contextasm render dump"},
		{[]string{"diff", "testdata/demo.json", tpl}, "missing protocol_version, fingerprint"},
		{[]string{"diff", "testdata/demo.json", twice}, "more data after the JSON object"},
		{[]string{"diff", "--format", "yaml", "testdata/demo.json", "testdata/demo.json"}, "--format must be text or json"},
		{[]string{"diff", "testdata/demo.json", "testdata/demo.json", "--bogus"}, "diff: unknown flag --bogus; see contextasm diff --help"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q, want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
	}

	// Flags before the files work as well as after.
	code, out, stderr := runCLI(t, "diff", "--format", "json", "testdata/demo.json", "testdata/demo-turn6.json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r view.DiffResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Changes) == 0 || r.Changes[0].Change != view.Appeared {
		t.Errorf("diff --format json first: %+v", r.Changes)
	}
	// A dump against itself: nothing changed.
	code, out, _ = runCLI(t, "diff", "testdata/demo.json", "testdata/demo.json")
	if code != exitOK || !strings.Contains(out, "No block changed") {
		t.Errorf("diff of a dump with itself: exit %d:\n%s", code, out)
	}
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// view shows a saved dump as render would have: the same report, the
// same page.
func TestViewCommand(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "d.json")
	if code, _, stderr := runCLI(t, "demo", "--format", "json", "-o", dump); code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	for _, format := range []string{"report", "html"} {
		_, want, _ := runCLI(t, "demo", "--format", format)
		code, got, stderr := runCLI(t, "view", dump, "--format", format)
		if code != 0 || got != want {
			t.Errorf("view --format %s: exit %d (%s), and the output differs from demo's: %t", format, code, stderr, got != want)
		}
	}
	if code, got, _ := runCLI(t, "view", dump); code != 0 || !strings.HasPrefix(got, "contextasm report") {
		t.Errorf("view without --format: exit %d, %.40q", code, got)
	}
	page := filepath.Join(dir, "p.html")
	if code, _, _ := runCLI(t, "view", "--format", "html", "-o", page, dump); code != 0 {
		t.Errorf("view -o: exit %d", code)
	} else if data, err := os.ReadFile(page); err != nil || !strings.Contains(string(data), "<html") {
		t.Errorf("view -o wrote %d bytes (%v)", len(data), err)
	}
	for _, args := range [][]string{{"view"}, {"view", dump, dump}, {"view", dump, "--format", "json"}, {"view", filepath.Join(dir, "none.json")}, {"view", "testdata/multilingual/template.json"}} {
		if code, _, stderr := runCLI(t, args...); code != exitUsage || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
}
