package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/outcome"
)

// buildTestServer builds the stdio MCP test server from its source.
func buildTestServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testserver")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/contextasm/contextasm/declare/mcpsource/internal/testserver").CombinedOutput()
	if err != nil {
		t.Fatalf("building the test server: %v\n%s", err, out)
	}
	return bin
}

const sourcesTemplate = `{"budget": 400, "sections": [{"name": "SOURCES", "priority": 1, "memory_types": ["external"], "max_tokens": 350,
 "render": "<source id=\"{request_id}\" from=\"{source_id}\">{content}</source>"}]}`

// dumpOf decodes the parts of a render dump these tests look at.
type dumpOf struct {
	Sections []struct {
		Blocks []struct {
			RequestID string `json:"request_id"`
			Status    string `json:"status"`
		} `json:"blocks"`
	} `json:"sections"`
	Events []struct {
		Kind      string `json:"kind"`
		RequestID string `json:"request_id"`
		Reason    string `json:"reason"`
	} `json:"events"`
	Text string `json:"text"`
}

func (d *dumpOf) kept() []string {
	var ids []string
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			if b.Status == "kept" {
				ids = append(ids, b.RequestID)
			}
		}
	}
	return ids
}

func (d *dumpOf) has(id, reason string) bool {
	for _, e := range d.Events {
		if e.RequestID == id && e.Reason == reason && e.Kind == "source" {
			return true
		}
	}
	return false
}

func renderSources(t *testing.T, args ...string) (dumpOf, string, time.Duration) {
	t.Helper()
	tpl := filepath.Join(t.TempDir(), "template.json")
	if err := os.WriteFile(tpl, []byte(sourcesTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	code, stdout, stderr := runCLI(t, append([]string{"render", "-t", tpl, "--now", "2026-11-30T09:00:00Z", "--format", "json"}, args...)...)
	took := time.Since(t0)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var d dumpOf
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatal(err)
	}
	return d, stderr, took
}

// Two MCP servers, one broken: the healthy one's resources are rendered,
// the broken one is reported unavailable, and render does not wait for it.
func TestRenderWithBrokenServer(t *testing.T) {
	bin := buildTestServer(t)
	for _, tc := range []struct{ mode, timeout string }{{"crash", "5s"}, {"hang", "1s"}, {"crash-on-read", "5s"}} {
		t.Run(tc.mode, func(t *testing.T) {
			d, stderr, took := renderSources(t, "--source-timeout", tc.timeout,
				"--mcp", "good='"+bin+"' -name good -resources 3",
				"--mcp", "broken='"+bin+"' -name broken -mode "+tc.mode)
			t.Logf("render took %v", took) // measured, not asserted
			if took > 20*time.Second {
				t.Errorf("render took %v with a broken server", took)
			}
			want := "mcp:good:test://good/doc/0 mcp:good:test://good/doc/1 mcp:good:test://good/doc/2"
			if got := strings.Join(d.kept(), " "); got != want {
				t.Errorf("kept %s\nwant %s", got, want)
			}
			if !strings.Contains(d.Text, "Document 1 of server good.") || strings.Contains(d.Text, "server broken") {
				t.Errorf("text:\n%s", d.Text)
			}
			if !d.has("mcp:broken", "source_unavailable") || d.has("mcp:good", "source_unavailable") {
				t.Errorf("events %+v", d.Events)
			}
			if !strings.Contains(stderr, "source mcp:broken unavailable") || strings.Contains(stderr, "mcp:good") {
				t.Errorf("stderr:\n%s", stderr)
			}
		})
	}
}

// --files collects a directory's text files and refuses what leaves it.
func TestRenderFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses a symlink")
	}
	base := t.TempDir()
	dir := filepath.Join(base, "docs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"docs/note.md": "A note in the root.", "secret.txt": "SECRET", "docs/logo.png": "\x89PNG\x00"} {
		if err := os.WriteFile(filepath.Join(base, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../secret.txt", filepath.Join(dir, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(base, "audit.jsonl")
	d, _, _ := renderSources(t, "--files", "docs="+dir, "--audit", audit)
	if got := strings.Join(d.kept(), " "); got != "file:docs:note.md" || strings.Contains(d.Text, "SECRET") {
		t.Errorf("kept %s, text:\n%s", got, d.Text)
	}
	// The audit record names the snapshot of the root's blocks.
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Inputs []outcome.Input `json:"inputs"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Inputs) != 1 || rec.Inputs[0].Name != "source:file:docs" || len(rec.Inputs[0].SHA256) != 64 {
		t.Errorf("audit inputs %+v, want the snapshot of source:file:docs", rec.Inputs)
	}
	if !d.has("file:docs:escape.txt", "outside_root") || !d.has("file:docs:logo.png", "binary") {
		t.Errorf("events %+v", d.Events)
	}
}

// Bad source flags are usage errors (exit 2), and render needs memories or
// a source.
func TestRenderSourceUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--mcp", "nocommand"},
		{"--mcp", "x=server | tee log"},
		{"--mcp", "bad:name=server"},
		{"--mcp-url", "x=ftp://host/"},
		{"--files", "=dir"},
		{"--mcp", "x=server", "--source-timeout", "0s"},
		{},
	} {
		code, _, stderr := runCLI(t, append([]string{"render", "-t", mlTemplate}, args...)...)
		if code != exitUsage || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want %d and a message", args, code, stderr, exitUsage)
		}
	}
}

// bench takes sources too: collected once, then measured like memories.
func TestBenchWithSources(t *testing.T) {
	bin := buildTestServer(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	tpl := filepath.Join(t.TempDir(), "template.json")
	if err := os.WriteFile(tpl, []byte(sourcesTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "bench", "-t", tpl, "--runs", "1", "--format", "json", "--now", "2026-11-30T09:00:00Z",
		"--files", "docs="+dir, "--mcp", "s='"+bin+"' -name s -resources 2", "--mcp", "gone='"+bin+"' -mode crash")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Blocks int `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.Blocks != 3 || !strings.Contains(stderr, "source mcp:gone unavailable") {
		t.Errorf("blocks %d (want 3), stderr %q", r.Blocks, stderr)
	}
}

// What a source's bounds cut is said on stderr and in the dump's events:
// a listing past MaxResources (1,000 for the command line), a resource
// over MaxContentBytes (1 MiB). It used to be cut in silence: the command
// line passed the collector no logger.
func TestRenderSaysWhatBoundsCut(t *testing.T) {
	bin := buildTestServer(t)
	d, stderr, took := renderSources(t, "--source-timeout", "60s",
		"--mcp", "many='"+bin+"' -name many -resources 1001",
		"--mcp", "big='"+bin+"' -name big -resources 2 -pad 1100000")
	t.Logf("render took %v", took) // measured, not asserted
	if !d.has("mcp:many", "source_cut") || !d.has("mcp:big:test://big/doc/1", "source_unavailable") {
		t.Errorf("events %+v", d.Events)
	}
	for _, want := range []string{
		"source mcp:many: resources/list holds more than MaxResources (1000) resources",
		"source mcp:big: mcp:big:test://big/doc/1: content over MaxContentBytes (1048576 bytes): not collected",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
