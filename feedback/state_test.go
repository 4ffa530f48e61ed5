package feedback

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestStateRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := NewFileStore(path)
	empty, err := s.Load()
	if err != nil || len(empty.Trust) != 0 || empty.Version != StateVersion {
		t.Fatalf("missing file: %+v, %v", empty, err)
	}
	st := NewState()
	st.Trust["a"] = 0.55
	st.Trust["mcp:srv:file:///x"] = 0.99
	st.Heat["a"] = Heat{Included: 3, Dropped: 1, Cut: 2, Refs: 4, StartRefs: 1}
	if err := s.Save(st); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st) {
		t.Errorf("round trip: got %+v, want %+v", got, st)
	}
	// Saving the same state twice writes the same bytes.
	b1, _ := os.ReadFile(path)
	if err := s.Save(got); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(path)
	if string(b1) != string(b2) {
		t.Error("state file is not deterministic")
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the state file", len(entries))
	}
}

func TestStateRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, data, want string
		version          bool
	}{
		{"unknown version", `{"version": 2, "trust": {}, "heat": {}}`, "version 2", true},
		{"no version", `{"trust": {}}`, "no version", true},
		{"not JSON", `{"version": 1,`, "not a state file", false},
		{"trust out of range", `{"version": 1, "trust": {"a": 1.5}, "heat": {}}`, `trust of "a"`, false},
		{"negative counter", `{"version": 1, "trust": {}, "heat": {"a": {"refs": -1}}}`, "negative", false},
		{"unknown field", `{"version": 1, "trust": {}, "heat": {}, "extra": 1}`, "extra", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".json")
			os.WriteFile(path, []byte(tt.data), 0o644)
			_, err := NewFileStore(path).Load()
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Load = %v, want an error naming %s and %q", err, path, tt.want)
			}
			if errors.Is(err, ErrStateVersion) != tt.version {
				t.Errorf("errors.Is(ErrStateVersion) = %v, want %v", !tt.version, tt.version)
			}
		})
	}
}

// A failure between writing the temporary file and renaming it leaves the
// previous state intact and no temporary file behind.
func TestSaveCrashBeforeRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	s := NewFileStore(path)
	old := NewState()
	old.Trust["a"] = 0.6
	if err := s.Save(old); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)

	injected := errors.New("injected crash before rename")
	var tmpSeen string
	s.rename = func(oldpath, newpath string) error {
		data, err := os.ReadFile(oldpath)
		if err != nil || !strings.Contains(string(data), `"a": 0.7`) {
			t.Errorf("temporary file not fully written before rename: %q, %v", data, err)
		}
		tmpSeen = oldpath
		return injected
	}
	next := old.Clone()
	next.Trust["a"] = 0.7
	if err := s.Save(next); !errors.Is(err, injected) {
		t.Fatalf("Save = %v, want the injected error", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Errorf("state changed by a failed save:\n%s\nwant\n%s", after, before)
	}
	if _, err := os.Stat(tmpSeen); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file %s left behind: %v", tmpSeen, err)
	}
	got, err := NewFileStore(path).Load()
	if err != nil || got.Trust["a"] != 0.6 {
		t.Errorf("reload after failed save: %+v, %v", got, err)
	}
}
