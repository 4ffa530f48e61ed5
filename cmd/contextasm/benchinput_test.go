package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/contextasm/contextasm/bench"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// TestBenchMemoriesStreamed holds bench's streamed declaring (a batch of
// lines at a time, across batch borders) to declaring the file loaded
// whole: the same store, so the same assembly, byte for byte.
func TestBenchMemoriesStreamed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memories.jsonl")
	writeWorkload(t, path, benchBatchLines*2+17)
	m, err := loadBenchMemories([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if m.whole || m.held != nil || m.len() != benchBatchLines*2+17 {
		t.Fatalf("not streamed: whole %v, %d held, %d declarations", m.whole, len(m.held), m.len())
	}
	decls, err := declare.Config{MaxBlocks: contextasm.DefaultMaxBlocks}.LoadFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	want := benchAssemble(t, func(e *contextasm.Engine) error { return e.Declare(decls...) })
	for run := range 2 { // the second run reads the file again and checks its hash
		got := benchAssemble(t, m.declare)
		if got != want {
			t.Fatalf("run %d: the streamed store assembles differently:\n%s\nwant\n%s", run, got, want)
		}
	}

	// A file changed since it was validated is refused, not measured.
	writeWorkload(t, path, 10)
	eng, _ := contextasm.New(contextasm.Config{})
	if err := m.declare(eng); err == nil {
		t.Fatal("a changed file was declared")
	}
}

// TestBenchMemoriesWhole: a set whose declarations refer to each other
// (tool calls and results) is loaded whole and held; a set with a
// problem is reported as LoadFiles reports it.
func TestBenchMemoriesWhole(t *testing.T) {
	tools := filepath.Join("testdata", "tools", "memories.jsonl")
	m, err := loadBenchMemories([]string{tools})
	if err != nil {
		t.Fatal(err)
	}
	decls, err := declare.LoadFiles(tools)
	if err != nil {
		t.Fatal(err)
	}
	if !m.whole || len(m.held) != len(decls) || m.len() != len(decls) {
		t.Fatalf("whole %v, %d held of %d", m.whole, len(m.held), len(decls))
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "memories.jsonl")
	writeWorkload(t, path, benchBatchLines+5)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"request_id":"blk-000003","memory_type":"context","scope":"global","content":"again"}` + "\n")
	f.Close()
	_, err = loadBenchMemories([]string{path})
	_, want := declare.Config{MaxBlocks: contextasm.DefaultMaxBlocks}.LoadFiles(path)
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("a duplicate across batches: got %v, want %v", err, want)
	}
	if _, err := loadBenchMemories([]string{path, path}); err == nil {
		t.Fatal("a file given twice was accepted")
	}
}

func writeWorkload(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := bench.WriteJSONL(f, bench.Generate(n, 3)); err != nil {
		t.Fatal(err)
	}
}

// benchAssemble declares into a fresh Engine and returns its assembly of
// the workload's request, as the dump's JSON.
func benchAssemble(t *testing.T, declareInto func(*contextasm.Engine) error) string {
	t.Helper()
	tpl, err := template.Parse(bench.TemplateJSON(8192), "bench")
	if err != nil {
		t.Fatal(err)
	}
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := declareInto(eng); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: bench.Epoch, SessionID: bench.Session, UserID: bench.User})
	if err != nil {
		t.Fatal(err)
	}
	dump, err := json.Marshal(res.Dump())
	if err != nil {
		t.Fatal(err)
	}
	return res.Text + "\n" + string(dump)
}
