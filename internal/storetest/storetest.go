package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/contextasm/contextasm/learned"
)

// Run runs the suite; open returns a new, empty store for each test.
func Run(t *testing.T, open func(t *testing.T) learned.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, learned.Store)
	}{
		{"Empty", testEmpty},
		{"TrustAddsAndClamps", testTrust},
		{"HeatAdds", testHeat},
		{"HeatDeletes", testHeatDelete},
		{"BatchAppliedOnce", testOnce},
		{"SkippedSeqRefused", testGap},
		{"SessionsCompareAndSwap", testSessions},
		{"ChangesReplay", testChanges},
		{"InvalidBatchAppliesNothing", testInvalid},
		{"ConcurrentWritersLoseNothing", testConcurrent},
		{"UnusualKeys", testKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

// Full returns the store's whole state and version, as a reader that has
// nothing yet gets it.
func Full(t testing.TB, s learned.Store) (*learned.State, learned.Version) {
	t.Helper()
	u, err := s.Changes(context.Background(), learned.Version{}, "reader")
	if err != nil {
		t.Fatalf("Changes(zero): %v", err)
	}
	if len(u.Changes) > 0 {
		t.Fatalf("Changes(zero) listed %d changes; a reader with nothing gets the whole state", len(u.Changes))
	}
	if u.Full == nil {
		if u.Version.N != 0 {
			t.Fatalf("Changes(zero) = version %+v without a state", u.Version)
		}
		return learned.NewState(), u.Version
	}
	return u.Full, u.Version
}

func apply(t testing.TB, s learned.Store, b *learned.Batch) learned.Version {
	t.Helper()
	v, err := s.Apply(context.Background(), b)
	if err != nil {
		t.Fatalf("Apply(%s/%d): %v", b.Writer, b.Seq, err)
	}
	return v
}

// SameState reports whether got holds want's trust, sessions and (when
// heat is set) heat, not comparing versions, and says what differs.
func SameState(t testing.TB, what string, got, want *learned.State, heat bool) bool {
	t.Helper()
	same := true
	if !maps.Equal(got.Trust, want.Trust) {
		t.Errorf("%s: trust\n got %v\nwant %v", what, got.Trust, want.Trust)
		same = false
	}
	if heat && !maps.Equal(got.Heat, want.Heat) {
		t.Errorf("%s: heat\n got %v\nwant %v", what, got.Heat, want.Heat)
		same = false
	}
	if len(got.Sessions) != len(want.Sessions) {
		t.Errorf("%s: %d sessions, want %d", what, len(got.Sessions), len(want.Sessions))
		same = false
	}
	for k, w := range want.Sessions {
		g := got.Sessions[k]
		if g == nil || g.Version != w.Version || !g.Updated.Equal(w.Updated) || string(g.Data) != string(w.Data) {
			t.Errorf("%s: session %q = %+v, want %+v", what, k, g, w)
			same = false
		}
	}
	return same
}

func testEmpty(t *testing.T, s learned.Store) {
	st, v := Full(t, s)
	if v.N != 0 || len(st.Trust)+len(st.Heat)+len(st.Sessions) != 0 {
		t.Errorf("empty store: version %+v, state %+v", v, st)
	}
	u, err := s.Changes(context.Background(), v, "w")
	if err != nil || u.Full != nil || len(u.Changes) != 0 || u.Version != v {
		t.Errorf("Changes at the current version = %+v, %v; want nothing changed", u, err)
	}
}

func testTrust(t *testing.T, s learned.Store) {
	b := &learned.Batch{Writer: "w1", Seq: 1, Trust: []learned.TrustDelta{
		{ID: "a", Base: 0.5, Add: 0.05, Ceiling: 0.99},
		{ID: "ceiling", Base: 0.98, Add: 0.05, Ceiling: 0.99},
		{ID: "floor", Base: 0.02, Add: -0.05, Ceiling: 0.99},
		{ID: "max", Base: 0.99, Add: 0.05, Ceiling: 1}, // clamped to MaxTrust anyway
		{ID: "own-bounds", Base: 0.5, Add: 0.3, Floor: 0.4, Ceiling: 0.7},
		{ID: "own-bounds", Base: 0.1, Add: -0.1, Floor: 0.4, Ceiling: 0.7}, // base ignored: it has trust now
		{ID: "noise", Base: 0.1, Add: 0.2, Ceiling: 0.99},
	}}
	v := apply(t, s, b)
	if v.N != 1 {
		t.Errorf("version after the first batch = %d, want 1", v.N)
	}
	got, gv := Full(t, s)
	if gv != v {
		t.Errorf("Full's version %+v, Apply's %+v", gv, v)
	}
	want := map[string]float64{"a": 0.55, "ceiling": 0.99, "floor": 0, "max": 0.99, "own-bounds": 0.6, "noise": 0.3}
	if !maps.Equal(got.Trust, want) {
		t.Errorf("trust %v, want %v", got.Trust, want)
	}
	// A second batch starts from the stored trust, not its Base.
	apply(t, s, &learned.Batch{Writer: "w1", Seq: 2, Trust: []learned.TrustDelta{{ID: "a", Base: 0.1, Add: 0.05, Ceiling: 0.99}}})
	if got, _ := Full(t, s); got.Trust["a"] != 0.6 {
		t.Errorf("a = %v after a second +0.05, want 0.6", got.Trust["a"])
	}
}

func testHeat(t *testing.T, s learned.Store) {
	apply(t, s, &learned.Batch{Writer: "w", Seq: 1, Heat: []learned.HeatDelta{
		{ID: "a", Heat: learned.Heat{Included: 2, Refs: 1, StartRefs: 1}},
		{ID: "b", Heat: learned.Heat{Dropped: 3}},
	}})
	apply(t, s, &learned.Batch{Writer: "w", Seq: 2, Heat: []learned.HeatDelta{
		{ID: "a", Heat: learned.Heat{Included: 1, Cut: 4, Refs: 1}},
	}})
	got, _ := Full(t, s)
	want := map[string]learned.Heat{
		"a": {Included: 3, Cut: 4, Refs: 2, StartRefs: 1},
		"b": {Dropped: 3},
	}
	if !maps.Equal(got.Heat, want) {
		t.Errorf("heat %v, want %v", got.Heat, want)
	}
}

// A heat deletion removes the block's counters, in the batch's order:
// heat added after it in the same batch counts from zero.
func testHeatDelete(t *testing.T, s learned.Store) {
	apply(t, s, &learned.Batch{Writer: "w", Seq: 1, Heat: []learned.HeatDelta{
		{ID: "a", Heat: learned.Heat{Included: 2, Refs: 1}},
		{ID: "b", Heat: learned.Heat{Dropped: 3, StartRefs: 2}},
		{ID: "c", Heat: learned.Heat{Cut: 1}},
	}})
	apply(t, s, &learned.Batch{Writer: "w", Seq: 2, Heat: []learned.HeatDelta{
		{ID: "a", Delete: true},
		{ID: "b", Delete: true},
		{ID: "b", Heat: learned.Heat{Included: 1}},
		{ID: "never", Delete: true},
	}})
	got, _ := Full(t, s)
	want := map[string]learned.Heat{"b": {Included: 1}, "c": {Cut: 1}}
	if !maps.Equal(got.Heat, want) {
		t.Errorf("heat %v, want %v", got.Heat, want)
	}
}

func testOnce(t *testing.T, s learned.Store) {
	b := &learned.Batch{Writer: "w", Seq: 1, Trust: []learned.TrustDelta{{ID: "a", Base: 0.5, Add: 0.05, Ceiling: 0.99}},
		Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}}
	v1 := apply(t, s, b)
	// A resend (its acknowledgement was lost) is acknowledged, not applied.
	if v := apply(t, s, b); v != v1 {
		t.Errorf("resend moved the version %+v -> %+v", v1, v)
	}
	// Another batch under the same name, or an older one, is a resend too.
	other := *b
	other.Trust = []learned.TrustDelta{{ID: "a", Base: 0.5, Add: 0.3, Ceiling: 0.99}}
	apply(t, s, &other)
	b2 := &learned.Batch{Writer: "w", Seq: 2, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}}
	v2 := apply(t, s, b2)
	if v2.N != v1.N+1 {
		t.Errorf("version after the second batch = %d, want %d", v2.N, v1.N+1)
	}
	apply(t, s, b)
	// The same Seq from another writer is another batch.
	apply(t, s, &learned.Batch{Writer: "w-other", Seq: 1, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}})
	got, _ := Full(t, s)
	if got.Trust["a"] != 0.55 || got.Heat["a"].Refs != 3 {
		t.Errorf("trust %v, refs %d; want 0.55 and 3 (each batch once)", got.Trust["a"], got.Heat["a"].Refs)
	}
	u, err := s.Changes(context.Background(), learned.Version{}, "w")
	if err != nil || u.Full == nil || u.Acked != 2 {
		t.Errorf("Changes(zero) for writer w: acked %d, %v; want 2", u.Acked, err)
	}
}

func testGap(t *testing.T, s learned.Store) {
	apply(t, s, &learned.Batch{Writer: "w", Seq: 1, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}})
	_, err := s.Apply(context.Background(), &learned.Batch{Writer: "w", Seq: 3, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}})
	var gap *learned.GapError
	if !errors.As(err, &gap) || gap.Last != 1 || gap.Seq != 3 || gap.Writer != "w" {
		t.Fatalf("Apply of Seq 3 after 1 = %v, want a *GapError with Last 1", err)
	}
	// A writer the store does not know starts at 1.
	if _, err := s.Apply(context.Background(), &learned.Batch{Writer: "new", Seq: 2, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}}); !errors.As(err, &gap) || gap.Last != 0 {
		t.Fatalf("Apply of Seq 2 from a new writer = %v, want a *GapError with Last 0", err)
	}
	if got, v := Full(t, s); got.Heat["a"].Refs != 1 || v.N != 1 {
		t.Errorf("refused batches applied: refs %d, version %d", got.Heat["a"].Refs, v.N)
	}
}

var (
	t0 = time.Date(2026, 11, 30, 9, 0, 0, 123456789, time.UTC)
	t1 = t0.Add(3 * time.Minute)
)

func testSessions(t *testing.T, s learned.Store) {
	data1 := json.RawMessage(`{"kept":["a","b"],"n":1}`)
	data2 := json.RawMessage(`{"kept":["a"], "n":2}`)
	apply(t, s, &learned.Batch{Writer: "w", Seq: 1, Sessions: []learned.SessionDelta{{Key: "k", Base: 0, Updated: t0, Data: data1}}})
	// A writer that read version 0 too loses: the store keeps the first.
	apply(t, s, &learned.Batch{Writer: "w2", Seq: 1, Sessions: []learned.SessionDelta{{Key: "k", Base: 0, Updated: t1, Data: data2}}})
	got, _ := Full(t, s)
	if k := got.Sessions["k"]; k == nil || k.Version != 1 || string(k.Data) != string(data1) || !k.Updated.Equal(t0) {
		t.Fatalf("session after a conflicting put: %+v", k)
	}
	apply(t, s, &learned.Batch{Writer: "w2", Seq: 2, Sessions: []learned.SessionDelta{
		{Key: "k", Base: 1, Updated: t1, Data: data2},
		{Key: "other", Base: 0, Updated: t1, Data: data1},
	}})
	got, _ = Full(t, s)
	// Data is kept compact: the space after the comma is gone.
	if k := got.Sessions["k"]; k == nil || k.Version != 2 || string(k.Data) != `{"kept":["a"],"n":2}` || !k.Updated.Equal(t1) {
		t.Fatalf("session after a put on version 1: %+v (data %s)", k, k.Data)
	}
	apply(t, s, &learned.Batch{Writer: "w", Seq: 2, Sessions: []learned.SessionDelta{{Key: "k", Delete: true}, {Key: "absent", Delete: true}}})
	got, _ = Full(t, s)
	if _, ok := got.Sessions["k"]; ok || got.Sessions["other"] == nil || len(got.Sessions) != 1 {
		t.Errorf("after deleting k: %v", got.Sessions)
	}
	// A deleted session starts again at version 1.
	apply(t, s, &learned.Batch{Writer: "w", Seq: 3, Sessions: []learned.SessionDelta{{Key: "k", Base: 0, Updated: t1, Data: data1}}})
	got, _ = Full(t, s)
	if k := got.Sessions["k"]; k == nil || k.Version != 1 {
		t.Errorf("recreated session: %+v", k)
	}
}

// A reader that replays the changes since its version ends where a full
// reader does, and each batch is listed with its writer and Seq.
func testChanges(t *testing.T, s learned.Store) {
	apply(t, s, &learned.Batch{Writer: "w1", Seq: 1, Trust: []learned.TrustDelta{{ID: "a", Base: 0.5, Add: 0.05, Ceiling: 0.99}}})
	reader, v := Full(t, s)
	batches := []*learned.Batch{
		{Writer: "w1", Seq: 2, Trust: []learned.TrustDelta{{ID: "a", Base: 0.5, Add: 0.05, Ceiling: 0.99}, {ID: "b", Base: 0.2, Add: -0.5, Ceiling: 0.99}}},
		{Writer: "w2", Seq: 1, Sessions: []learned.SessionDelta{{Key: "s", Updated: t0, Data: json.RawMessage(`[1,2,3]`)}}},
		{Writer: "w1", Seq: 3, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 5}}}, Sessions: []learned.SessionDelta{{Key: "s", Delete: true}, {Key: "t", Updated: t1}}},
	}
	for _, b := range batches {
		apply(t, s, b)
	}
	u, err := s.Changes(context.Background(), v, "w1")
	if err != nil {
		t.Fatal(err)
	}
	want, wv := Full(t, s)
	if u.Version != wv {
		t.Errorf("Changes brings the reader to %+v, the store is at %+v", u.Version, wv)
	}
	if u.Full != nil {
		reader = u.Full
		if u.Acked != 3 {
			t.Errorf("full update acknowledges w1 up to %d, want 3", u.Acked)
		}
	} else {
		if len(u.Changes) != len(batches) {
			t.Fatalf("%d changes, want %d", len(u.Changes), len(batches))
		}
		for i, c := range u.Changes {
			if c.Writer != batches[i].Writer || c.Seq != batches[i].Seq || c.Version != v.N+uint64(i)+1 {
				t.Errorf("change %d is %s/%d at %d, want %s/%d at %d", i, c.Writer, c.Seq, c.Version, batches[i].Writer, batches[i].Seq, v.N+uint64(i)+1)
			}
			reader.ApplyChange(&c)
		}
	}
	SameState(t, "replayed reader", reader, want, u.Full != nil)
	// Nothing more: nothing changed.
	if u2, err := s.Changes(context.Background(), wv, "w1"); err != nil || u2.Full != nil || len(u2.Changes) != 0 {
		t.Errorf("Changes at the store's version: %+v, %v", u2, err)
	}
}

func testInvalid(t *testing.T, s learned.Store) {
	v0 := apply(t, s, &learned.Batch{Writer: "w", Seq: 1, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}})
	bad := []*learned.Batch{
		{Writer: "w", Seq: 2, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}, Trust: []learned.TrustDelta{{ID: "a", Add: nan()}}},
		{Writer: "w", Seq: 2, Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: -1}}}},
		{Writer: "w", Seq: 2, Trust: []learned.TrustDelta{{ID: "a", Floor: 0.5, Ceiling: 0.4}}},
		{Writer: "w", Seq: 2, Sessions: []learned.SessionDelta{{Key: "k", Data: json.RawMessage(`{`)}}},
		{Writer: "", Seq: 2},
		{Writer: "w", Seq: 0},
	}
	for i, b := range bad {
		if _, err := s.Apply(context.Background(), b); err == nil {
			t.Errorf("bad batch %d applied", i)
		}
	}
	got, v := Full(t, s)
	if v != v0 || got.Heat["a"].Refs != 1 || len(got.Trust) != 0 {
		t.Errorf("after bad batches: version %+v (want %+v), %+v", v, v0, got)
	}
}

func nan() float64 { var z float64; return z / z }

// Writers apply batches at once; the store ends at exactly the state that
// replaying every batch gives, and every batch moved the version by one.
func testConcurrent(t *testing.T, s learned.Store) {
	const writers, each = 6, 40
	want := learned.NewState()
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				b := &learned.Batch{Writer: fmt.Sprintf("w%d", w), Seq: uint64(i + 1),
					Trust: []learned.TrustDelta{{ID: "shared", Base: 0.3, Add: 0.002, Ceiling: 0.99}, {ID: fmt.Sprintf("own-%d", w), Base: 0.5, Add: 0.01, Ceiling: 0.99}},
					Heat:  []learned.HeatDelta{{ID: "shared", Heat: learned.Heat{Refs: 1, StartRefs: int64(i % 2)}}}}
				if _, err := s.Apply(context.Background(), b); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				want.Apply(b) // gains only: the order does not change the sum
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, v := Full(t, s)
	if v.N != writers*each {
		t.Errorf("version %d after %d batches", v.N, writers*each)
	}
	SameState(t, "after concurrent writers", got, want, true)
	if w := learned.TrustFromUnits(learned.TrustUnits(0.3) + writers*each*learned.TrustUnits(0.002)); got.Trust["shared"] != w {
		t.Errorf("shared trust %v, want %v", got.Trust["shared"], w)
	}
}

func testKeys(t *testing.T, s learned.Store) {
	ids := []string{"mcp:srv:file:///x y.md", "é-ünïcödé-日本", "a\"quote\\back", "1:2:3", "tab\tid"}
	key := learned.SessionKey("sess:1", "user 2", "sha256:0123456789abcdef")
	b := &learned.Batch{Writer: "w:1 é", Seq: 1, Sessions: []learned.SessionDelta{{Key: key, Updated: t0, Data: json.RawMessage(`"x"`)}}}
	for _, id := range ids {
		b.Trust = append(b.Trust, learned.TrustDelta{ID: id, Base: 0.5, Add: 0.01, Ceiling: 0.99})
		b.Heat = append(b.Heat, learned.HeatDelta{ID: id, Heat: learned.Heat{Refs: 1}})
	}
	apply(t, s, b)
	want := learned.NewState()
	want.Apply(b)
	got, _ := Full(t, s)
	SameState(t, "unusual keys", got, want, true)
}
