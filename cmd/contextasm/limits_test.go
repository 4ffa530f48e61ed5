package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// A response too long to check against the context's violation patterns
// is invalid input (exit 2), saying which limit, not a minute of matching.
func TestFeedbackResponseTooLarge(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "r.json")
	renderDump(t, filepath.Join(dir, "state.json"), dump)
	resp := filepath.Join(dir, "response.txt")
	if err := os.WriteFile(resp, []byte(strings.Repeat("lorem ipsum ", 200_000)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "feedback", "--state", filepath.Join(dir, "state.json"), "--render", dump, "--response", resp)
	if code != exitUsage || !strings.Contains(stderr, "response too large to check against the violation patterns") ||
		!strings.Contains(stderr, "Limits.MaxResponseBytes") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// validate streams a memories file: it holds a batch of declarations at a
// time, not the set. On 50,000 declarations of 2 KB (100 MB of content)
// its heap stays far below the content; loaded whole, it held all of it
// (a million small declarations took 1.9 GB, where docs/limits.md says
// what a load may take). Heap, not time, is asserted.
func TestValidateStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB: not in -short runs")
	}
	path := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	body := strings.Repeat("x", 2000)
	const n = 50_000
	for i := range n {
		fmt.Fprintf(w, `{"request_id": "b-%06d", "memory_type": "context", "scope": "global", "content": "%s"}`+"\n", i, body)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var most uint64
		var ms runtime.MemStats
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				peak <- most
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > base.HeapInuse {
					most = max(most, ms.HeapInuse-base.HeapInuse)
				}
			}
		}
	}()
	code, stdout, stderr := runCLI(t, "validate", "-m", path)
	close(done)
	grew := <-peak
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("ok: %d declarations", n)) {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	t.Logf("heap grew by at most %d MB for %d MB of content", grew>>20, n*len(body)>>20)
	if limit := uint64(n*len(body)) / 3; grew > limit {
		t.Errorf("heap grew by %d MB, more than a third of the content (%d MB): the set is held", grew>>20, limit>>20)
	}
}
