package tokfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const tinyJSON = `{"model": {"type": "BPE", "vocab": {}, "merges": []}}`

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestIdentityInConfines checks what a template may name: a file inside
// its directory, never one outside it, by an absolute path, by "..", by a
// symbolic link or through a spec's rank file.
func TestIdentityInConfines(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "tpl")
	outside := filepath.Join(base, "secret.json")
	write(t, outside, tinyJSON)
	write(t, filepath.Join(dir, "tok", "tokenizer.json"), tinyJSON)
	write(t, filepath.Join(dir, "ranks.model"), "YQ== 0\n")
	write(t, filepath.Join(dir, "spec.json"), `{"format": "tiktoken", "ranks": "ranks.model", "pattern": "cl100k_base"}`)
	write(t, filepath.Join(dir, "spec-abs.json"), `{"format": "tiktoken", "ranks": "`+outside+`", "pattern": "cl100k_base"}`)
	write(t, filepath.Join(dir, "spec-up.json"), `{"format": "tiktoken", "ranks": "../secret.json", "pattern": "cl100k_base"}`)
	if err := os.Symlink(outside, filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("tok/tokenizer.json", filepath.Join(dir, "inside-link.json")); err != nil {
		t.Fatal(err)
	}
	want, err := Identity(filepath.Join(dir, "tok", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tok/tokenizer.json", "./tok/tokenizer.json", "inside-link.json"} {
		id, path, err := IdentityIn(dir, name)
		if err != nil || id != want || path != filepath.Join(dir, name) {
			t.Errorf("%s: %q %q %v, want %q", name, id, path, err, want)
		}
	}
	if _, _, err := IdentityIn(dir, "spec.json"); err != nil {
		t.Errorf("spec with a local rank file: %v", err)
	}
	for _, name := range []string{outside, "../secret.json", "tok/../../secret.json", "spec-abs.json", "spec-up.json"} {
		if _, _, err := IdentityIn(dir, name); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: got %v, want ErrOutside", name, err)
		}
	}
	// A link out is refused by the root, which names the escape.
	if _, _, err := IdentityIn(dir, "link.json"); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Errorf("link out: got %v", err)
	}
}

// TestRefusedBeforeRead checks that a device, a FIFO and a file past
// MaxFileBytes are refused without being read: /dev/zero used to be
// hashed for ever.
func TestRefusedBeforeRead(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil { // sparse: no disk
		t.Fatal(err)
	}
	f.Close()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		want error
	}{{big, ErrTooLarge}, {fifo, ErrNotRegular}, {"/dev/zero", ErrNotRegular}}
	for _, c := range cases {
		if _, err := Identity(c.path); !errors.Is(err, c.want) {
			t.Errorf("Identity(%s): got %v, want %v", c.path, err, c.want)
		}
		if _, err := ReadFile(c.path); !errors.Is(err, c.want) {
			t.Errorf("ReadFile(%s): got %v, want %v", c.path, err, c.want)
		}
		if _, _, err := Sniff(c.path); !errors.Is(err, c.want) {
			t.Errorf("Sniff(%s): got %v, want %v", c.path, err, c.want)
		}
	}
}
