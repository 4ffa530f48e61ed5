package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
