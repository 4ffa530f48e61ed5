//go:build unix

package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO is written to, not replaced: a reader at its other end gets the
// output.
func TestWriteOutputFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	if err := writeOutput(nil, fifo, []byte("through the pipe\n")); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "through the pipe\n" {
		t.Errorf("the reader got %q", b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v, %v", fi, err)
	}
	noTemps(t, dir)
}

// A device is written to and stays the device. As root, the old -o
// renamed a regular file over /dev/null; this test makes a null device of
// its own (as root) so that it can fail without harm, then checks the
// system's /dev/null and /dev/full (whose writes fail: proof that the
// device itself was written, not a file beside it).
func TestWriteOutputDevices(t *testing.T) {
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		own := filepath.Join(dir, "null")
		if err := syscall.Mknod(own, syscall.S_IFCHR|0o666, int(mkdev(1, 3))); err != nil {
			t.Fatalf("mknod: %v", err)
		}
		checkDevice(t, own, nil)
		noTemps(t, dir)
	} else {
		t.Log("not root: no device of our own; /dev/null only")
	}
	checkDevice(t, os.DevNull, nil)
	if _, err := os.Stat("/dev/full"); err == nil {
		checkDevice(t, "/dev/full", syscall.ENOSPC)
	}
}

func mkdev(major, minor uint32) uint64 {
	return uint64(major)<<8 | uint64(minor) // the Linux encoding of small numbers
}

func checkDevice(t *testing.T, name string, wantErr error) {
	t.Helper()
	before, err := os.Lstat(name)
	if err != nil || before.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("premise: %s is not a character device: %v, %v", name, before, err)
	}
	err = writeOutput(nil, name, []byte("rendered context\n"))
	if wantErr == nil && err != nil || wantErr != nil && !errors.Is(err, wantErr) {
		t.Errorf("-o %s: %v, want %v", name, err, wantErr)
	}
	after, err := os.Lstat(name)
	if err != nil || after.Mode()&fs.ModeCharDevice == 0 || !os.SameFile(before, after) {
		t.Fatalf("-o %s replaced the device: %v, %v", name, after, err)
	}
}

// A new file gets 0644 less the umask, like any program's output.
func TestWriteOutputNewFileMode(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	name := filepath.Join(t.TempDir(), "new.txt")
	if err := writeOutput(nil, name, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(name); err != nil || fi.Mode() != 0o640 {
		t.Errorf("new file mode %v, %v; want -rw-r----- (0644 under umask 027)", fi.Mode(), err)
	}
}

// The owner and group of a replaced file are kept where the process may
// set them (as root: any).
func TestWriteOutputKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give a file another owner")
	}
	name := filepath.Join(t.TempDir(), "owned.txt")
	if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(name, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := writeOutput(nil, name, []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 {
		t.Errorf("owner %d:%d, want 65534:65534", st.Uid, st.Gid)
	}
}
