package contextasm

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/contextasm/contextasm/learned"
)

// A session's state is replaced on the version it was read at, reaches the
// store, and is deleted; a stale replacement loses to the first.
func TestSessionState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	cfg := Config{State: learned.NewFileStore(path), StateOptions: StateOptions{Poll: 5 * time.Millisecond}}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	key := learned.SessionKey("s1", "u1", "sha256:0123456789abcdef")
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	if a.session(key) != nil {
		t.Fatal("a session before any was written")
	}
	if err := a.putSession(key, 0, now, json.RawMessage(`{"from":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if s := a.session(key); s == nil || s.Version != 1 || string(s.Data) != `{"from":"a"}` {
		t.Fatalf("a's own write: %+v", s)
	}
	// b read no session either, and writes version 1 too: a's came first.
	if err := a.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := b.putSession(key, 0, now, json.RawMessage(`{"from":"b"}`)); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s := b.session(key); s == nil || string(s.Data) != `{"from":"a"}`; s = b.session(key) {
		if time.Now().After(deadline) {
			t.Fatalf("b holds %+v; want a's, which the store kept", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := b.putSession(key, 1, now.Add(time.Minute), json.RawMessage(`{"from":"b","n":2}`)); err != nil {
		t.Fatal(err)
	}
	if err := b.dropSession("other"); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	st, _ := learned.NewFileStore(path).Load()
	if s := st.Sessions[key]; s == nil || s.Version != 2 || string(s.Data) != `{"from":"b","n":2}` {
		t.Fatalf("stored session %+v", s)
	}
	if err := a.dropSession(key); err != nil {
		t.Fatal(err)
	}
	if a.session(key) != nil {
		t.Error("a dropped session is still there")
	}
	if err := a.putSession(key, 0, now, json.RawMessage(`{`)); err == nil {
		t.Error("data that is not JSON was accepted")
	}
}
