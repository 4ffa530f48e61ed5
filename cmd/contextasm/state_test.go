package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/contextasm/contextasm/learned"
)

// TestMain lets a test run the CLI as a process of its own: the test
// binary, started again with CONTEXTASM_TEST_CLI=1, is the CLI.
func TestMain(m *testing.M) {
	if os.Getenv("CONTEXTASM_TEST_CLI") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// cliCommand returns the CLI with args, as a process.
func cliCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "CONTEXTASM_TEST_CLI=1")
	return cmd
}

// runProcesses runs n CLI processes at once and fails on any failure.
func runProcesses(t *testing.T, n int, args func(i int) []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			out, err := cliCommand(args(i)...).CombinedOutput()
			if err != nil {
				errs <- fmt.Errorf("process %d: %v: %s", i, err, out)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Eight feedback processes at once on one state file record eight
// citations (each applies its deltas under the file's lock), the file
// keeps its mode, and the temporary file a killed process left is gone.
func TestConcurrentFeedbackProcesses(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	dump := filepath.Join(dir, "r.json")
	renderDump(t, state, dump)
	if err := os.Chmod(state, 0o640); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, ".state.json.tmp-4242")
	if err := os.WriteFile(leftover, []byte(strings.Repeat("{", 1<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	const n = 8
	runProcesses(t, n, func(int) []string {
		return []string{"feedback", "--state", state, "--render", dump, "--response", "testdata/feedback/response.txt"}
	})
	st, err := learned.NewFileStore(state).Load()
	if err != nil {
		t.Fatal(err)
	}
	if h := st.Heat["app-4711-dti"]; h.Refs != n || h.StartRefs != n {
		t.Errorf("app-4711-dti heat %+v, want %d citations", h, n)
	}
	// 0.5 + 8 × 0.05 and 0.8 + 8 × 0.05 clamped to 0.99.
	if st.Trust["app-4711-dti"] != 0.9 || st.Trust["policy-dti-limit"] != 0.99 {
		t.Errorf("trust %v / %v, want 0.9 / 0.99", st.Trust["app-4711-dti"], st.Trust["policy-dti-limit"])
	}
	if fi, err := os.Stat(state); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("state file mode %v, %v; want 0640 kept", fi.Mode().Perm(), err)
	}
	if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed process's temporary file is still there: %v", err)
	}
}
