package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noTemps fails if dir holds a temporary file of writeOutput.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestWriteOutputStdout(t *testing.T) {
	for _, name := range []string{"", "-"} {
		var stdout bytes.Buffer
		if err := writeOutput(&stdout, name, []byte("hello\n")); err != nil || stdout.String() != "hello\n" {
			t.Errorf("-o %q: %q, %v", name, stdout.String(), err)
		}
	}
	// Through the CLI: "-o -" is standard output, not a file named "-".
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := runCLI(t, "demo", "--format", "json", "-o", "-")
	if code != exitOK || !strings.HasPrefix(stdout, "{") {
		t.Errorf("demo -o -: exit %d, stdout %.40q, stderr %s", code, stdout, stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
		t.Error(`-o - made a file named "-"`)
	}
}

// An existing regular file is replaced atomically and keeps its mode.
func TestWriteOutputKeepsMode(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, 0o640); err != nil { // exactly, whatever the umask
		t.Fatal(err)
	}
	if err := writeOutput(nil, name, []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(name)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(name); string(got) != "new" || fi.Mode() != 0o640 {
		t.Errorf("after -o: %q, mode %v; want \"new\", -rw-r-----", got, fi.Mode())
	}
	noTemps(t, dir)
}

// A symbolic link is refused, and neither it nor its target changes.
func TestWriteOutputRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target.txt"), filepath.Join(dir, "link.txt")
	if err := os.WriteFile(target, []byte("target"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	err := writeOutput(nil, link, []byte("new"))
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link (to "+target+"); give the file itself") {
		t.Fatalf("err = %v", err)
	}
	if report(err, &bytes.Buffer{}) != exitUsage {
		t.Error("a refused -o is a usage error")
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
	if got, _ := os.ReadFile(target); string(got) != "target" {
		t.Errorf("the target changed: %q", got)
	}
	// Through the CLI, with the same message and exit code.
	code, _, stderr := runCLI(t, "demo", "-o", link)
	if code != exitUsage || !strings.Contains(stderr, "is a symbolic link") {
		t.Errorf("demo -o LINK: exit %d, stderr %s", code, stderr)
	}
	noTemps(t, dir)
}

func TestWriteOutputRefusesDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := writeOutput(nil, dir, []byte("x")); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("err = %v", err)
	}
	noTemps(t, filepath.Dir(dir))
}
