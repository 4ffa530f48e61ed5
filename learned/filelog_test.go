package learned

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A writer killed while appending leaves its record torn at any byte:
// truncated at every offset of the log's last record, the file loads as
// the state without that batch (whole, it loads with it), the batch's
// resend is applied once, and the torn bytes are cut off first.
func TestLogTornAtEveryByte(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	s := NewFileStore(path)
	ctx := context.Background()
	for seq := uint64(1); seq <= 3; seq++ {
		if _, err := s.Apply(ctx, citeBatch("w", seq, fmt.Sprint("b", seq))); err != nil {
			t.Fatal(err)
		}
	}
	before, err := NewFileStore(path).Load()
	if err != nil {
		t.Fatal(err)
	}
	last := citeBatch("w", 4, "b1")
	last.Sessions = []SessionDelta{{Key: "k", Data: []byte(`{"x": "a line\nwith a newline"}`)}}
	if _, err := s.Apply(ctx, last); err != nil {
		t.Fatal(err)
	}
	after, err := NewFileStore(path).Load()
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(path + ".log")
	if err != nil {
		t.Fatal(err)
	}
	snapshot, _ := os.ReadFile(path)
	start := len(log) - 1
	for start > 0 && log[start-1] != '\n' {
		start--
	}
	if start == 0 || reflect.DeepEqual(before, after) {
		t.Fatalf("fixture: the log holds one record, or the last batch changed nothing:\n%s", log)
	}
	for cut := start; cut <= len(log); cut++ {
		d := t.TempDir()
		p := filepath.Join(d, "state.json")
		os.WriteFile(p, snapshot, 0o600)
		os.WriteFile(p+".log", log[:cut], 0o600)
		got, err := NewFileStore(p).Load()
		if err != nil {
			t.Fatalf("cut at %d of %d: %v", cut, len(log), err)
		}
		want := before
		if cut == len(log) {
			want = after
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("cut at %d of %d: loaded\n%+v\nwant\n%+v", cut, len(log), got, want)
		}
		// The writer resends the batch it did not see acknowledged.
		if _, err := NewFileStore(p).Apply(ctx, last); err != nil {
			t.Fatalf("cut at %d: the resend: %v", cut, err)
		}
		if got, err := NewFileStore(p).Load(); err != nil || !reflect.DeepEqual(got, after) {
			t.Fatalf("cut at %d: after the resend %+v, %v; want %+v", cut, got, err, after)
		}
		if data, _ := os.ReadFile(p + ".log"); bytes.Count(data, []byte("\n")) != bytes.Count(log, []byte("\n")) || data[len(data)-1] != '\n' {
			t.Fatalf("cut at %d: the log after the resend is\n%s\nwant its records whole, the torn bytes cut off", cut, data)
		}
	}
}

// A whole line of the log that is not a record (not one this release
// wrote, or changed since) is an error naming the file, never skipped.
func TestLogCorruptLineIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := NewFileStore(path)
	for seq := uint64(1); seq <= 2; seq++ {
		if _, err := s.Apply(context.Background(), citeBatch("w", seq, "a")); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path + ".log")
	data[20] ^= 1
	os.WriteFile(path+".log", data, 0o600)
	if _, err := NewFileStore(path).Load(); err == nil || !errors.Is(err, ErrInvalidState) {
		t.Errorf("Load of a corrupt log = %v, want ErrInvalidState", err)
	}
}

// The files stay in proportion to the live state: however many batches
// are applied, the log is compacted into the snapshot once it passes
// LogFactor times it (or 64 KiB), and the state is what every batch made.
func TestLogCompactedInProportion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := NewFileStore(path)
	want := NewState()
	for seq := uint64(1); seq <= 1000; seq++ {
		b := citeBatch("w", seq, fmt.Sprint("b", seq%50))
		if _, err := s.Apply(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		want.Apply(b)
		snap, _ := os.Stat(path)
		var logSize int64
		if fi, err := os.Stat(path + ".log"); err == nil {
			logSize = fi.Size()
		}
		if logSize > max(LogFactor*snap.Size(), minLog)+4096 {
			t.Fatalf("batch %d: log %d bytes beside a snapshot of %d", seq, logSize, snap.Size())
		}
	}
	got, err := NewFileStore(path).Load()
	if err != nil || !reflect.DeepEqual(got.Trust, want.Trust) || !reflect.DeepEqual(got.Heat, want.Heat) {
		t.Errorf("after 1,000 batches: %v, %v", got, err)
	}
}
