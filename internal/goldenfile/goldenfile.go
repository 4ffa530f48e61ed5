// Package goldenfile compares test output with golden files under testdata/,
// and rewrites them when the calling test runs with its -update flag. It is
// for tests only; each test package declares its own flag:
//
//	var update = flag.Bool("update", false, "rewrite golden files")
//	…
//	goldenfile.Check(t, "demo.txt", got, *update)
package goldenfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Check compares got with testdata/name, or writes it there when update is
// set. A missing file is a failure that says how to create it.
func Check(t testing.TB, name, got string, update bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update after checking the change):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
