//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/internal/redistest"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/learned/redisstore"
	"github.com/contextasm/contextasm/outcome"
)

// The file-store walk-through, with --state redis://: render, feedback,
// render again with the learned trust, heat.
func TestRedisState(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	state := srv.URL("prefix=cli")
	dir := t.TempDir()
	first := renderDump(t, state, filepath.Join(dir, "r1.json"))
	code, out, stderr := runCLI(t, "feedback", "--state", state, "--render", filepath.Join(dir, "r1.json"), "--response", "testdata/feedback/response.txt")
	if code != exitOK || !strings.Contains(out, "0.50 -> 0.55") {
		t.Fatalf("feedback: exit %d\n%s\n%s", code, out, stderr)
	}
	second := renderDump(t, state, filepath.Join(dir, "r2.json"))
	if b1, b2 := blockOf(first, "app-4711-dti"), blockOf(second, "app-4711-dti"); b1.Trust != 0.5 || b2.Trust != 0.55 {
		t.Errorf("app-4711-dti trust %v -> %v, want 0.5 -> 0.55", b1.Trust, b2.Trust)
	}
	if second.StateVersion <= first.StateVersion {
		t.Errorf("state_version %d then %d; want it to grow", first.StateVersion, second.StateVersion)
	}
	code, heatJSON, stderr := runCLI(t, "heat", "--state", state, "--format", "json")
	if code != exitOK {
		t.Fatalf("heat: exit %d: %s", code, stderr)
	}
	var rows []heatRow
	if err := json.Unmarshal([]byte(heatJSON), &rows); err != nil {
		t.Fatal(err)
	}
	want := heatRow{RequestID: "app-4711-dti", Included: 2, Refs: 1, StartRefs: 1}
	if i := slices.IndexFunc(rows, func(r heatRow) bool { return r.RequestID == want.RequestID }); i < 0 || rows[i] != want {
		t.Errorf("heat rows %+v, want %+v among them", rows, want)
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// With the server out of reach, render still renders and says so (the
// event, a warning); feedback reports what it read, says the deltas were
// not stored, and fails.
func TestRedisUnreachable(t *testing.T) {
	redistest.Binary(t) // the same gate as the other Redis tests
	state := "redis://" + closedPort(t) + "/0?prefix=cli"
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	args := append([]string{"render", "--state", state, "--format", "json", "-o", out}, demoArgs...)
	code, _, stderr := runCLI(t, args...)
	if code != exitOK || !strings.Contains(stderr, "not stored") {
		t.Fatalf("render: exit %d, stderr %q; want 0 and a warning", code, stderr)
	}
	d, err := readDumpFile("test", out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(d.Events, func(e contextasm.Event) bool {
		return e.Reason == outcome.ReasonStateUnavailable && e.RequestID == contextasm.StateEventID
	}) {
		t.Errorf("the dump has no state_unavailable event: %+v", d.Events)
	}
	code, stdout, stderr := runCLI(t, "feedback", "--state", state, "--render", out, "--response", "testdata/feedback/response.txt")
	if code == exitOK || !strings.Contains(stderr, "NOT stored") || !strings.Contains(stdout, "app-4711-dti") {
		t.Errorf("feedback: exit %d\nstdout %s\nstderr %s\nwant a failure after the report, saying the deltas were not stored", code, stdout, stderr)
	}
	if code, _, _ := runCLI(t, "heat", "--state", state); code == exitOK {
		t.Error("heat succeeded without its state")
	}
	if code, _, stderr := runCLI(t, "heat", "--state", "redis://h:1/0?bogus=1"); code != exitUsage {
		t.Errorf("a bad URL: exit %d, %s", code, stderr)
	}
}

// Three streams of CLI processes at once, 200 feedback processes in all,
// each citing the same 16 blocks (the demo's text): 3,200 citations, every one counted, and
// the trust each block ends at is the sum of its gains with the clamp
// applied.
func TestThreeCLIProcessesLoseNothing(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	state := srv.URL("prefix=many")
	dir := t.TempDir()
	dump := filepath.Join(dir, "r.json")
	d := renderDump(t, state, dump)
	var ids []string
	trusts := map[string]float64{}
	for _, s := range d.Sections {
		for _, b := range s.Blocks {
			if b.Status != outcome.StatusDropped {
				ids = append(ids, b.RequestID)
				trusts[b.RequestID] = b.Trust
			}
		}
	}
	var resp strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&resp, "<memory_ref id=%q/> ", id)
	}
	resp.WriteString(strings.Repeat("All of them, in the first third of this answer. ", 60))
	response := filepath.Join(dir, "response.txt")
	if err := os.WriteFile(response, []byte(resp.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	const processes = 200
	streams := 3
	runStreams(t, streams, processes, func(int) []string {
		return []string{"feedback", "--state", state, "--render", dump, "--response", response}
	})
	store, err := redisstore.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	u, err := store.Changes(context.Background(), learned.Version{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ids)*processes != 3200 {
		t.Fatalf("%d blocks × %d processes is not 3,200 citations", len(ids), processes)
	}
	p := feedback.DefaultPolicy()
	for _, id := range ids {
		want := learned.NewState()
		for range processes {
			want.Apply(&learned.Batch{Trust: []learned.TrustDelta{{ID: id, Base: trusts[id], Add: p.StartGain, Floor: p.Floor, Ceiling: p.Ceiling}}})
		}
		if h := u.Full.Heat[id]; h.Refs != processes || h.StartRefs != processes {
			t.Errorf("%s: %d citations stored, want %d", id, h.Refs, processes)
		}
		if u.Full.Trust[id] != want.Trust[id] {
			t.Errorf("%s: trust %v, want %v", id, u.Full.Trust[id], want.Trust[id])
		}
	}
}

// runStreams runs n CLI processes in concurrent streams, each stream one
// process after another, and fails on any failure.
func runStreams(t *testing.T, streams, n int, args func(i int) []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for s := range streams {
		wg.Go(func() {
			for i := s; i < n; i += streams {
				if out, err := cliCommand(args(i)...).CombinedOutput(); err != nil {
					errs <- fmt.Errorf("process %d: %v: %s", i, err, out)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
