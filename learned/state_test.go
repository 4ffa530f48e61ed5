package learned

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func citeBatch(writer string, seq uint64, id string) *Batch {
	return &Batch{Writer: writer, Seq: seq,
		Trust: []TrustDelta{{ID: id, Base: 0.5, Add: 0.05, Ceiling: 0.99}},
		Heat:  []HeatDelta{{ID: id, Heat: Heat{Refs: 1, StartRefs: 1}}}}
}

func TestStateRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := NewFileStore(path)
	empty, err := s.Load()
	if err != nil || len(empty.Trust) != 0 || empty.Version != StateVersion {
		t.Fatalf("missing file: %+v, %v", empty, err)
	}
	b := citeBatch("w", 1, "a")
	b.Trust = append(b.Trust, TrustDelta{ID: "mcp:srv:file:///x", Base: 0.98, Add: 0.05, Ceiling: 0.99})
	b.Heat = append(b.Heat, HeatDelta{ID: "a", Heat: Heat{Included: 3, Dropped: 1, Cut: 2, Refs: 3}})
	if _, err := s.Apply(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := NewState()
	want.Apply(b)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip: got %+v, want %+v", got, want)
	}
	if got.Trust["a"] != 0.55 || got.Trust["mcp:srv:file:///x"] != 0.99 || got.Heat["a"] != (Heat{Included: 3, Dropped: 1, Cut: 2, Refs: 4, StartRefs: 1}) {
		t.Errorf("state %+v", got)
	}
	// Only the state file and its lock are left in the directory.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 2 || entries[0].Name() != "state.json" || entries[1].Name() != "state.json.lock" {
		t.Errorf("directory holds %v, want the state file and its lock", entries)
	}
}

func TestStateRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, data, want string
		version          bool
	}{
		{"unknown version", `{"version": 99, "trust": {}, "heat": {}}`, "version 99", true},
		{"no version", `{"trust": {}}`, "no version", true},
		{"not JSON", `{"version": 1,`, "not a state file", false},
		{"trust out of range", `{"version": 1, "trust": {"a": 1.5}, "heat": {}}`, `trust of "a"`, false},
		{"negative counter", `{"version": 1, "trust": {}, "heat": {"a": {"refs": -1}}}`, "negative", false},
		{"unknown field", `{"version": 1, "trust": {}, "heat": {}, "extra": 1}`, "extra", false},
		{"null session", `{"version": 1, "trust": {}, "heat": {}, "sessions": {"k": null}}`, `session "k"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".json")
			os.WriteFile(path, []byte(tt.data), 0o644)
			for _, op := range []string{"Load", "Apply"} {
				var err error
				if op == "Load" {
					_, err = NewFileStore(path).Load()
				} else {
					_, err = NewFileStore(path).Apply(context.Background(), citeBatch("w", 1, "a"))
				}
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
					t.Fatalf("%s = %v, want an error naming %s and %q", op, err, path, tt.want)
				}
				if errors.Is(err, ErrStateVersion) != tt.version {
					t.Errorf("%s: errors.Is(ErrStateVersion) = %v, want %v", op, !tt.version, tt.version)
				}
				if errors.Is(err, ErrInvalidState) == tt.version {
					t.Errorf("%s: errors.Is(ErrInvalidState) = %v, want %v", op, tt.version, !tt.version)
				}
			}
			if data, _ := os.ReadFile(path); string(data) != tt.data {
				t.Errorf("a refused file was changed: %s", data)
			}
		})
	}
}

// A state file written by an earlier release (no revision, epoch or
// writers) is read, and the first Apply gives it an epoch.
func TestStateFileOfEarlierRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	os.WriteFile(path, []byte(`{"version": 1, "trust": {"a": 0.6}, "heat": {"a": {"refs": 2}}}`), 0o644)
	s := NewFileStore(path)
	u, err := s.Changes(context.Background(), Version{}, "w")
	if err != nil || u.Full == nil || u.Full.Trust["a"] != 0.6 || u.Version != (Version{Epoch: "unnamed"}) {
		t.Fatalf("Changes = %+v, %v", u, err)
	}
	v, err := s.Apply(context.Background(), citeBatch("w", 1, "a"))
	if err != nil || v != (Version{Epoch: "unnamed", N: 1}) {
		t.Fatalf("Apply = %+v, %v", v, err)
	}
	st, _ := s.Load()
	if st.Trust["a"] != 0.65 || st.Heat["a"].Refs != 3 {
		t.Errorf("state %+v", st)
	}
}

// A failure between writing the temporary file and renaming it leaves the
// previous state intact and no temporary file behind.
func TestApplyCrashBeforeRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	s := NewFileStore(path)
	if _, err := s.Apply(context.Background(), citeBatch("w", 1, "a")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)

	s.compactAlways = true // the snapshot is replaced: what this test is about
	injected := errors.New("injected crash before rename")
	var tmpSeen string
	s.rename = func(oldpath, newpath string) error {
		data, err := os.ReadFile(oldpath)
		if err != nil || !strings.Contains(string(data), `"a": 0.6`) {
			t.Errorf("temporary file not fully written before rename: %q, %v", data, err)
		}
		tmpSeen = oldpath
		return injected
	}
	if _, err := s.Apply(context.Background(), citeBatch("w", 2, "a")); !errors.Is(err, injected) {
		t.Fatalf("Apply = %v, want the injected error", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Errorf("state changed by a failed apply:\n%s\nwant\n%s", after, before)
	}
	if _, err := os.Stat(tmpSeen); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file %s left behind: %v", tmpSeen, err)
	}
	// The failed batch was not applied, so its resend is.
	s.rename = os.Rename
	if _, err := s.Apply(context.Background(), citeBatch("w", 2, "a")); err != nil {
		t.Fatal(err)
	}
	if got, _ := NewFileStore(path).Load(); got.Trust["a"] != 0.6 || got.Heat["a"].Refs != 2 {
		t.Errorf("after the resend: %+v", got)
	}
}

// The state file keeps its mode; a new one is private.
func TestApplyKeepsMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	s := NewFileStore(path)
	if _, err := s.Apply(context.Background(), citeBatch("w", 1, "a")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("new state file mode %v, want 0600", fi.Mode().Perm())
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(context.Background(), citeBatch("w", 2, "a")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("state file mode %v after Apply, want the 0640 it had", fi.Mode().Perm())
	}
}

// A symbolic link is refused, naming its target, and left alone (as for
// the CLI's -o); so is a directory; a link in place of the lock file is
// not followed.
func TestApplyRefusesLinksAndOthers(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious"), 0o600)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(victim, link); err != nil {
		t.Skip(err)
	}
	_, err := NewFileStore(link).Apply(context.Background(), citeBatch("w", 1, "a"))
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), victim) {
		t.Errorf("Apply through a link: %v; want a refusal naming %s", err, victim)
	}
	if data, _ := os.ReadFile(victim); string(data) != "precious" {
		t.Errorf("the link's target changed: %q", data)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
	sub := filepath.Join(dir, "dir.json")
	os.Mkdir(sub, 0o755)
	if _, err := NewFileStore(sub).Apply(context.Background(), citeBatch("w", 1, "a")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Apply to a directory: %v", err)
	}
	state := filepath.Join(dir, "state.json")
	if err := os.Symlink(victim, state+".lock"); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFileStore(state).Apply(context.Background(), citeBatch("w", 1, "a")); err == nil {
		t.Error("a symbolic link in place of the lock file was followed")
	}
}

// Temporary files a killed writer left behind are removed by a store's
// first Apply, and those left later by its next compaction; other files
// are not touched.
func TestApplyRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	stale := filepath.Join(dir, ".state.json.tmp-12345")
	other := filepath.Join(dir, ".other.json.tmp-12345")
	for _, p := range []string{stale, other} {
		if err := os.WriteFile(p, []byte(strings.Repeat("x", 1<<20)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewFileStore(path).Apply(context.Background(), citeBatch("w", 1, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temporary file still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another file's temporary file was removed: %v", err)
	}
	s := NewFileStore(path)
	if _, err := s.Apply(context.Background(), citeBatch("w", 2, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, nil, 0o600); err != nil { // a writer killed since
		t.Fatal(err)
	}
	if err := s.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temporary file still there after a compaction: %v", err)
	}
}

// A held lock makes Apply wait, and give up with ErrUnavailable when its
// context ends.
func TestApplyWaitsForTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	release, err := lockFile(context.Background(), path+".lock")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := NewFileStore(path).Apply(ctx, citeBatch("w", 1, "a")); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Apply under a held lock = %v, want ErrUnavailable", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := NewFileStore(path).Apply(context.Background(), citeBatch("w", 1, "a"))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	release()
	if err := <-done; err != nil {
		t.Errorf("Apply after the lock was released: %v", err)
	}
}

// Old writers are forgotten after DedupWindow, when the snapshot is
// written.
func TestWritersPruned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := NewFileStore(path)
	s.compactAlways = true
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	s.Apply(context.Background(), citeBatch("old", 1, "a"))
	now = now.Add(DedupWindow + time.Minute)
	s.Apply(context.Background(), citeBatch("new", 1, "a"))
	f, _, err := s.read()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Writers["old"]; ok || f.Writers["new"].Seq != 1 {
		t.Errorf("writers %v", f.Writers)
	}
}

// A store's own last write is told as a change, not read back; a write by
// another store is read from the log, as a change; after another store
// compacted the log, the state is read whole.
func TestChangesOfOwnWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := NewFileStore(path)
	v1, err := s.Apply(context.Background(), citeBatch("w", 1, "a"))
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := s.Apply(context.Background(), citeBatch("w", 2, "a"))
	u, err := s.Changes(context.Background(), v1, "w")
	if err != nil || u.Full != nil || len(u.Changes) != 1 || u.Version != v2 || u.Changes[0].Trust["a"] != 0.6 || u.Changes[0].Seq != 2 {
		t.Fatalf("own write: %+v, %v", u, err)
	}
	if u, _ := s.Changes(context.Background(), v2, "w"); u.Full != nil || len(u.Changes) != 0 {
		t.Errorf("nothing new: %+v", u)
	}
	if _, err := NewFileStore(path).Apply(context.Background(), citeBatch("other", 1, "a")); err != nil {
		t.Fatal(err)
	}
	u, err = s.Changes(context.Background(), v2, "w")
	if err != nil || u.Full != nil || len(u.Changes) != 1 || u.Changes[0].Writer != "other" || u.Changes[0].Trust["a"] != 0.65 {
		t.Errorf("another store's write: %+v, %v", u, err)
	}
	other := NewFileStore(path)
	other.compactAlways = true
	if _, err := other.Apply(context.Background(), citeBatch("other", 2, "a")); err != nil {
		t.Fatal(err)
	}
	u, err = s.Changes(context.Background(), u.Version, "w")
	if err != nil || u.Full == nil || u.Full.Trust["a"] != 0.7 || u.Acked != 2 {
		t.Errorf("after another store compacted: %+v, %v", u, err)
	}
}

// A version 1 file (trust and heat only, before sessions and the store's
// bookkeeping) is read and upgraded; a newer version is refused by its
// number.
func TestStateVersionOneIsRead(t *testing.T) {
	st, err := DecodeState([]byte(`{"version":1,"trust":{"a":0.6},"heat":{}}`), "old.json")
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != StateVersion || st.Trust["a"] != 0.6 {
		t.Errorf("version 1 read as %+v", st)
	}
	if _, err := DecodeState([]byte(`{"version":3,"trust":{},"heat":{}}`), "new.json"); !errors.Is(err, ErrStateVersion) {
		t.Errorf("version 3: %v, want ErrStateVersion", err)
	}
}
