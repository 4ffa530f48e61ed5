//go:build unix

package contextasm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
)

// holdLock takes the state file's sidecar lock, as another process in the
// middle of a write would, until the returned function is called.
func holdLock(t *testing.T, path string) func() {
	t.Helper()
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			f.Close()
		}
	}
	t.Cleanup(release)
	return release
}

func hasStateEvent(res *contextasm.Result) bool {
	return slices.ContainsFunc(res.Events(), func(e contextasm.Event) bool {
		return e.Reason == outcome.ReasonStateUnavailable && e.RequestID == contextasm.StateEventID && e.Kind == outcome.KindSource
	})
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var fastSync = contextasm.StateOptions{Poll: 5 * time.Millisecond, Timeout: 100 * time.Millisecond, HeatEvery: 20 * time.Millisecond}

// Two Engines on one state file: a citation one of them learns reaches the
// other's ranking without either reloading the file by hand, and each
// Result names the state version it ranked with.
func TestEnginesShareAFile(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	path := filepath.Join(t.TempDir(), "state.json")
	cfg := contextasm.Config{State: learned.NewFileStore(path), StateOptions: fastSync}
	a := newEngine(t, cfg, learnDecls()[1:]...)
	b := newEngine(t, cfg, learnDecls()[1:]...)
	req := contextasm.Request{Template: tpl, Now: demoNow}
	res := assemble(t, a, req)
	if res.StateVersion != 0 {
		t.Errorf("first assembly on an empty file: state version %d", res.StateVersion)
	}
	if _, err := a.Feedback(t.Context(), res, `<memory_ref id="fact-b"/>`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "engine b to rank with a's lesson", func() bool {
		r := assemble(t, b, req)
		for _, blk := range r.Sections()[1].Blocks {
			if blk.RequestID == "fact-b" {
				return blk.Trust == 0.55 && r.StateVersion > 0
			}
		}
		return false
	})
	r := assemble(t, b, req)
	var dump map[string]json.RawMessage
	data, _ := json.Marshal(r.Dump())
	json.Unmarshal(data, &dump)
	if string(dump["state_version"]) != jsonUint(r.StateVersion) {
		t.Errorf("dump state_version %s, result %d", dump["state_version"], r.StateVersion)
	}
	// b cites too: both lessons add up in the file and in both engines.
	if _, err := b.Feedback(t.Context(), r, `<memory_ref id="fact-b"/>`); err != nil {
		t.Fatal(err)
	}
	for _, e := range []*contextasm.Engine{a, b} {
		if err := e.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "both engines at 0.6", func() bool {
		return a.State().Trust["fact-b"] == 0.6 && b.State().Trust["fact-b"] == 0.6
	})
	st, _ := learned.NewFileStore(path).Load()
	if st.Trust["fact-b"] != 0.6 || st.Heat["fact-b"].Refs != 2 {
		t.Errorf("file: trust %v, refs %d; want 0.6 and 2", st.Trust["fact-b"], st.Heat["fact-b"].Refs)
	}
}

func jsonUint(n uint64) string { b, _ := json.Marshal(n); return string(b) }

// While the store cannot be reached (here: another process holds the
// file's lock), assemblies go on from the snapshot and say
// state_unavailable; the deltas wait and are stored once it can be.
func TestStoreOutOfReach(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	path := filepath.Join(t.TempDir(), "state.json")
	cfg := contextasm.Config{State: learned.NewFileStore(path), StateOptions: fastSync}
	eng := newEngine(t, cfg, learnDecls()[1:]...)
	req := contextasm.Request{Template: tpl, Now: demoNow}
	res := assemble(t, eng, req)
	if hasStateEvent(res) {
		t.Fatal("state_unavailable with the store in reach")
	}
	release := holdLock(t, path)
	if _, err := eng.Feedback(t.Context(), res, `<memory_ref id="fact-b"/>`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "state_unavailable", func() bool { return hasStateEvent(assemble(t, eng, req)) })
	// The engine's own lesson holds locally meanwhile.
	if got := eng.State().Trust["fact-b"]; got != 0.55 {
		t.Errorf("local trust while out of reach: %v", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	err := eng.Flush(ctx)
	cancel()
	if !errors.Is(err, learned.ErrUnavailable) {
		t.Errorf("Flush out of reach = %v, want ErrUnavailable", err)
	}
	if st := eng.StateStatus(); st.Queued == 0 || !errors.Is(st.Err, learned.ErrUnavailable) {
		t.Errorf("status out of reach: %+v", st)
	}
	release()
	if err := eng.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the event to clear", func() bool { return !hasStateEvent(assemble(t, eng, req)) })
	st, _ := learned.NewFileStore(path).Load()
	if st.Trust["fact-b"] != 0.55 || st.Heat["fact-b"].Refs != 1 {
		t.Errorf("file after reconnect: trust %v, refs %d", st.Trust["fact-b"], st.Heat["fact-b"].Refs)
	}
}

// A full queue refuses a Feedback whole and says so; heat waits in its
// counters instead of being dropped, and is not what fills the queue.
func TestQueueOverflowIsReported(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	path := filepath.Join(t.TempDir(), "state.json")
	opts := fastSync
	opts.MaxQueued = 1
	eng := newEngine(t, contextasm.Config{State: learned.NewFileStore(path), StateOptions: opts}, learnDecls()[1:]...)
	res := assemble(t, eng, contextasm.Request{Template: tpl, Now: demoNow})
	holdLock(t, path)
	// One citation is a trust delta (its heat is bounded apart): the
	// second does not fit.
	if _, err := eng.Feedback(t.Context(), res, `<memory_ref id="fact-b"/>`); err != nil {
		t.Fatal(err)
	}
	before := eng.State()
	fb, err := eng.Feedback(t.Context(), res, `<memory_ref id="fact-b"/>`)
	if !errors.Is(err, contextasm.ErrStateQueueFull) || fb == nil {
		t.Fatalf("Feedback over the bound = %v, %v; want the result and ErrStateQueueFull", fb, err)
	}
	if after := eng.State(); after.Trust["fact-b"] != before.Trust["fact-b"] || after.Heat["fact-b"].Refs != before.Heat["fact-b"].Refs {
		t.Errorf("a refused Feedback changed the state: %+v -> %+v", before.Heat["fact-b"], after.Heat["fact-b"])
	}
	if st := eng.StateStatus(); st.Rejected != 1 {
		t.Errorf("status: %+v; want 1 rejected", st)
	}
}

// Assembly does not wait for the store: while the store's goroutine is
// stuck (the lock is held and every call runs to its timeout), assemblies
// finish one after another. The bound asserted is generous on purpose:
// it only shows that no assembly waited for a store call.
func TestAssemblyDoesNotWaitForTheStore(t *testing.T) {
	tpl := parseTemplate(t, learnTemplate)
	path := filepath.Join(t.TempDir(), "state.json")
	opts := contextasm.StateOptions{Poll: time.Millisecond, Timeout: time.Hour}
	eng := newEngine(t, contextasm.Config{State: learned.NewFileStore(path), StateOptions: opts}, learnDecls()[1:]...)
	req := contextasm.Request{Template: tpl, Now: demoNow}
	release := holdLock(t, path)
	res := assemble(t, eng, req)
	if _, err := eng.Feedback(t.Context(), res, `<memory_ref id="fact-b"/>`); err != nil {
		t.Fatal(err)
	}
	// The goroutine is now waiting for the lock, for up to an hour.
	done := make(chan struct{})
	go func() {
		for i := range 50 {
			req.Now = demoNow.Add(time.Duration(i) * time.Minute)
			eng.Assemble(context.Background(), req)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("assemblies blocked while the store's goroutine waited")
	}
	release()
	if err := eng.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// Close stops every goroutine the Engine started.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	eng, err := contextasm.New(contextasm.Config{State: learned.NewFileStore(filepath.Join(t.TempDir(), "s.json")), StateOptions: fastSync})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Declare(learnDecls()...); err != nil {
		t.Fatal(err)
	}
	assemble(t, eng, contextasm.Request{Template: parseTemplate(t, learnTemplate), Now: demoNow})
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Negative options are refused.
func TestStateOptionsValidated(t *testing.T) {
	if _, err := contextasm.New(contextasm.Config{StateOptions: contextasm.StateOptions{Poll: -1}}); err == nil {
		t.Error("a negative StateOptions.Poll was accepted")
	}
}

// heldChanges is a file store that, once it applied a batch of render
// heat, holds every later Changes until release is closed: a store that
// acknowledged a batch the Engine has not yet read back.
type heldChanges struct {
	*learned.FileStore
	armed   atomic.Bool
	release chan struct{}
}

func (s *heldChanges) Apply(ctx context.Context, b *learned.Batch) (learned.Version, error) {
	v, err := s.FileStore.Apply(ctx, b)
	if err == nil && slices.ContainsFunc(b.Heat, func(d learned.HeatDelta) bool { return d.Heat.Included > 0 }) {
		s.armed.Store(true)
	}
	return v, err
}

func (s *heldChanges) Changes(ctx context.Context, since learned.Version, writer string) (*learned.Update, error) {
	if s.armed.Load() {
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", learned.ErrUnavailable, ctx.Err())
		}
	}
	return s.FileStore.Changes(ctx, since, writer)
}

// After a successful Flush nothing is queued: StateStatus counts the
// deltas the store has not acknowledged, not those it acknowledged and
// the Engine has not yet seen in its changes.
func TestFlushLeavesNothingQueued(t *testing.T) {
	store := &heldChanges{FileStore: learned.NewFileStore(filepath.Join(t.TempDir(), "state.json")), release: make(chan struct{})}
	// Render heat is sent by Flush only: the store holds its changes from then on.
	opts := contextasm.StateOptions{Poll: 5 * time.Millisecond, Timeout: time.Minute, HeatEvery: time.Hour}
	eng := newEngine(t, contextasm.Config{State: store, StateOptions: opts}, learnDecls()[1:]...)
	defer close(store.release)
	res := assemble(t, eng, contextasm.Request{Template: parseTemplate(t, learnTemplate), Now: demoNow})
	if _, err := eng.Feedback(t.Context(), res, `<memory_ref id="fact-b"/>`); err != nil {
		t.Fatal(err)
	}
	if err := eng.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !store.armed.Load() {
		t.Fatal("fixture: Flush stored no render heat")
	}
	if st := eng.StateStatus(); st.Queued != 0 || st.Err != nil {
		t.Errorf("right after a successful Flush: %+v; want nothing queued, no error", st)
	}
}
