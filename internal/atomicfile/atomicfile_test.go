package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := Replace(name, []byte("one"), Options{Perm: 0o600, SyncDir: true}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v", fi.Mode().Perm())
	}
	os.Chmod(name, 0o640)
	old, _ := os.Stat(name)
	if err := Replace(name, []byte("two"), Options{Perm: 0o600, Old: old}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o640 {
		t.Errorf("replaced file mode %v, want the old 0640", fi.Mode().Perm())
	}
	// A failed rename leaves the old content and no temporary file.
	injected := errors.New("injected")
	err := Replace(name, []byte("three"), Options{Perm: 0o600, Rename: func(string, string) error { return injected }})
	if !errors.Is(err, injected) {
		t.Fatalf("Replace = %v", err)
	}
	if data, _ := os.ReadFile(name); string(data) != "two" {
		t.Errorf("content %q after a failed replace", data)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), TempPrefix(name)) {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}
