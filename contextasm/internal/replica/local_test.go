package replica

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/contextasm/contextasm/internal/storetest"
	"github.com/contextasm/contextasm/learned"
)

// store is a reference store: a state, the writers' last Seq, and the log
// of changes, as the real stores keep them.
type store struct {
	st    *learned.State
	seqs  map[string]uint64
	log   []learned.Change
	epoch string
}

func newStore() *store {
	return &store{st: learned.NewState(), seqs: map[string]uint64{}, epoch: "e1"}
}

func (s *store) apply(b *learned.Batch) error {
	if b.Seq <= s.seqs[b.Writer] {
		return nil
	}
	if b.Seq != s.seqs[b.Writer]+1 {
		return &learned.GapError{Writer: b.Writer, Last: s.seqs[b.Writer], Seq: b.Seq}
	}
	s.seqs[b.Writer] = b.Seq
	c := s.st.Apply(b)
	c.Version = uint64(len(s.log) + 1)
	s.log = append(s.log, c)
	return nil
}

func (s *store) version() learned.Version {
	return learned.Version{Epoch: s.epoch, N: uint64(len(s.log))}
}

// changes answers a reader at since, listing changes or (full) the state.
func (s *store) changes(since learned.Version, writer string, full bool) *learned.Update {
	v := s.version()
	if since == v {
		return &learned.Update{Version: v}
	}
	if full || since.Epoch != s.epoch || since.N == 0 {
		return &learned.Update{Version: v, Full: s.st.Clone(), Acked: s.seqs[writer]}
	}
	return &learned.Update{Version: v, Changes: append([]learned.Change(nil), s.log[since.N:]...)}
}

// at returns the trust and sessions at version n, from the log.
func (s *store) at(n uint64) *learned.State {
	st := learned.NewState()
	for i := range s.log[:n] {
		st.ApplyChange(&s.log[i])
	}
	return st
}

func (s *store) heatOf(w string) int64 { return s.st.Heat["by-"+w].Refs }

// countPending counts the writer's pending "by-" refs.
func countPending(r *local) int {
	n := 0
	for _, e := range r.pending {
		for _, d := range e.b.Heat {
			if d.ID == "by-"+r.Writer() {
				n += int(d.Heat.Refs)
			}
		}
	}
	return n
}

// wipe loses everything, as a store without persistence that restarted.
func (s *store) wipe(epoch string) {
	s.st, s.seqs, s.log, s.epoch = learned.NewState(), map[string]uint64{}, nil, epoch
}

// sessionKeys are the conversations random batches write: two of one
// session, one of another.
var sessionKeys = []string{learned.SessionKey("s1", "u", "t1"), learned.SessionKey("s1", "u", "t2"), learned.SessionKey("s2", "u", "t1")}

// sameSessionIndex fails unless r's index of session keys lists what a
// walk of its view's sessions finds.
func sameSessionIndex(t *testing.T, what string, r *local) {
	t.Helper()
	want := map[string]map[string]struct{}{}
	for k := range r.View().Sessions {
		s, _ := sessionOfKey(k)
		if want[s] == nil {
			want[s] = map[string]struct{}{}
		}
		want[s][k] = struct{}{}
	}
	for _, s := range []string{"s1", "s2"} {
		if got := r.SessionKeys(s); !maps.Equal(got, want[s]) {
			t.Fatalf("%s: session %s's keys indexed %v, in the view %v", what, s, got, want[s])
		}
	}
}

func randomBatch(rng *rand.Rand, view *learned.State, now time.Time) learned.Batch {
	var b learned.Batch
	keys := []string{"a", "b", "c", "d"}
	for range rng.IntN(4) {
		add := float64(rng.IntN(21)-8) / 100 // -0.08 .. +0.12
		b.Trust = append(b.Trust, learned.TrustDelta{ID: keys[rng.IntN(len(keys))], Base: float64(rng.IntN(99)) / 100, Add: add, Floor: 0.05 * float64(rng.IntN(2)), Ceiling: 0.99})
	}
	for range rng.IntN(3) {
		b.Heat = append(b.Heat, learned.HeatDelta{ID: keys[rng.IntN(len(keys))], Heat: learned.Heat{Included: int64(rng.IntN(3)), Refs: int64(rng.IntN(2))}})
	}
	for range rng.IntN(2) {
		key := sessionKeys[rng.IntN(len(sessionKeys))]
		if rng.IntN(5) == 0 {
			b.Sessions = append(b.Sessions, learned.SessionDelta{Key: key, Delete: true})
			continue
		}
		var base uint64
		if s := view.Sessions[key]; s != nil {
			base = s.Version
		}
		if rng.IntN(4) == 0 {
			base++ // a stale or wrong base: skipped everywhere alike
		}
		data, _ := json.Marshal(map[string]int{"n": rng.IntN(100)})
		b.Sessions = append(b.Sessions, learned.SessionDelta{Key: key, Base: base, Updated: now, Data: data})
	}
	return b
}

// replayed is base with the replica's pending batches applied in order:
// what the view must be.
func replayed(r *local) *learned.State {
	st := r.Base()
	for _, e := range r.pending {
		st.Apply(&e.b)
	}
	return st
}

func sameState(t *testing.T, what string, got, want *learned.State, heat bool) {
	t.Helper()
	if !storetest.SameState(t, what, got, want, heat) {
		t.FailNow()
	}
}

// Writers add, send (sometimes losing the acknowledgement), and catch up
// by changes or by whole states, in random order, with the store losing
// its data now and then. At every step each view is its base with its
// pending batches replayed; at the end every view is the store's state,
// and every batch was applied exactly once.
func TestReplicasConverge(t *testing.T) {
	for seed := range uint64(150) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			s := newStore()
			now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
			reps := []*local{newLocal("w0", true), newLocal("w1", true), newLocal("w2", true)}
			wiped := false
			added := map[string]int64{}
			for step := range 200 {
				r := reps[rng.IntN(len(reps))]
				switch op := rng.IntN(10); {
				case op < 4:
					b := randomBatch(rng, r.View(), now.Add(time.Duration(step)*time.Second))
					// Each writer counts refs under its own id: the store's
					// count must end equal (lost or doubled batches show).
					b.Heat = append(b.Heat, learned.HeatDelta{ID: "by-" + r.Writer(), Heat: learned.Heat{Refs: 1}})
					added[r.Writer()]++
					r.Add(b)
				case op < 7:
					if b := r.Next(1 + rng.IntN(6)); b != nil {
						var gap *learned.GapError
						if err := s.apply(b); errors.As(err, &gap) {
							r.Renumber(gap.Last)
						} else if rng.IntN(4) != 0 { // else the acknowledgement was lost
							r.Acked(b.Seq)
						}
					}
				case op < 9:
					r.Update(s.changes(r.Version(), r.Writer(), rng.IntN(6) == 0))
				default:
					if !wiped && rng.IntN(3) == 0 {
						s.wipe(fmt.Sprintf("e%d", step))
						wiped = true
						// What was added before is in the store or pending;
						// what the store lost is resent from pending only
						// if it was still pending: count from here.
						for _, r := range reps {
							added[r.Writer()] = int64(countPending(r))
						}
					}
				}
				sameState(t, fmt.Sprintf("step %d, %s's view", step, r.Writer()), r.View(), replayed(r), true)
				sameSessionIndex(t, fmt.Sprintf("step %d, %s", step, r.Writer()), r)
				if v := r.Version(); v.Epoch == s.epoch {
					sameState(t, fmt.Sprintf("step %d, %s's base", step, r.Writer()), r.Base(), s.at(v.N), false)
				}
			}
			// Drain: everyone sends everything and catches up.
			for range 3 {
				for _, r := range reps {
					for b := r.Next(4); b != nil; b = r.Next(4) {
						var gap *learned.GapError
						if err := s.apply(b); errors.As(err, &gap) {
							r.Renumber(gap.Last)
							continue
						}
						r.Acked(b.Seq)
					}
					r.Update(s.changes(r.Version(), r.Writer(), false))
				}
			}
			for _, r := range reps {
				if r.Pending() != 0 {
					t.Fatalf("%s still has %d deltas pending", r.Writer(), r.Pending())
				}
				sameState(t, r.Writer()+" at the end", r.View(), s.st, false)
				r.Update(s.changes(learned.Version{}, r.Writer(), true))
				sameState(t, r.Writer()+" after a full load", r.View(), s.st, true)
				sameSessionIndex(t, r.Writer()+" after a full load", r)
			}
			// Every batch of every writer is in the store once: the
			// writers' own records of what they added say so.
			for w, want := range added {
				if got := s.heatOf(w); got != want {
					t.Fatalf("%s added %d heat, the store holds %d", w, want, got)
				}
			}
			// Each applied change appears once: replaying the log gives the state.
			replay := learned.NewState()
			for i := range s.log {
				replay.ApplyChange(&s.log[i])
			}
			sameState(t, "log replay", replay, s.st, false)
		})
	}
}

// Without a store, Add applies at once and nothing is pending.
func TestLocalReplica(t *testing.T) {
	r := newLocal("w", false)
	r.Add(learned.Batch{Trust: []learned.TrustDelta{{ID: "a", Base: 0.5, Add: 0.05, Ceiling: 0.99}}})
	if r.View().Trust["a"] != 0.55 || r.Pending() != 0 || r.Next(10) != nil {
		t.Errorf("local replica: %+v, %d pending", r.View(), r.Pending())
	}
}

// A batch is resent as it was, under the same Seq, until acknowledged;
// waiting batches are merged up to the limit.
func TestNextResendsAndMerges(t *testing.T) {
	r := newLocal("w", true)
	one := func(id string) learned.Batch {
		return learned.Batch{Heat: []learned.HeatDelta{{ID: id, Heat: learned.Heat{Refs: 1}}}}
	}
	r.Add(one("a"))
	r.Add(one("b"))
	r.Add(one("c"))
	b := r.Next(2)
	if b.Seq != 1 || b.Writer != "w" || len(b.Heat) != 2 {
		t.Fatalf("first batch %+v, want a and b under Seq 1", b)
	}
	if again := r.Next(2); again != b {
		t.Errorf("unacknowledged batch not resent as it was: %+v", again)
	}
	r.Add(one("d"))
	r.Acked(1)
	if b := r.Next(10); b.Seq != 2 || len(b.Heat) != 2 {
		t.Errorf("second batch %+v, want c and d under Seq 2", b)
	}
	serial := r.Serial()
	if r.Stored(serial) {
		t.Error("Stored before the second batch was acknowledged")
	}
	r.Acked(2)
	if !r.Stored(serial) {
		t.Error("not Stored after every batch was acknowledged")
	}
}

// After a gap, the batches the store lost are sent again from the number
// after its last, the acknowledged ones first.
func TestRenumberResendsLostBatches(t *testing.T) {
	r := newLocal("w", true)
	r.Add(learned.Batch{Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Refs: 1}}}})
	a := r.Next(1)
	r.Acked(a.Seq)
	r.Add(learned.Batch{Heat: []learned.HeatDelta{{ID: "b", Heat: learned.Heat{Refs: 1}}}})
	b := r.Next(1)
	if a.Seq != 1 || b.Seq != 2 {
		t.Fatalf("seqs %d, %d", a.Seq, b.Seq)
	}
	// The store lost batch 1 and refuses 2: it has nothing of w.
	r.Renumber(0)
	if n := r.Next(1); n.Seq != 1 || n.Heat[0].ID != "a" {
		t.Fatalf("after the gap, next is %+v; want a under Seq 1", n)
	}
	r.Acked(1)
	if n := r.Next(1); n.Seq != 2 || n.Heat[0].ID != "b" {
		t.Fatalf("then %+v; want b under Seq 2", n)
	}
}

// A batch merged with later ones is not stored until the merge is: Stored
// of an early serial looked only at entries up to that serial, and a
// merged entry carried its last serial, so a delta in flight inside it
// was reported stored (found by contextasm serve's SIGKILL test: a
// feedback answered "stored" that never reached the store).
func TestStoredSeesInsideMerges(t *testing.T) {
	r := newLocal("w", true)
	r.Add(learned.Batch{Trust: []learned.TrustDelta{{ID: "a", Base: 0.5, Add: 0.05, Ceiling: 0.99}}})
	first := r.Serial()
	r.Add(learned.Batch{Heat: []learned.HeatDelta{{ID: "a", Heat: learned.Heat{Included: 1}}}})
	if b := r.Next(10); b.Seq != 1 || len(b.Trust) != 1 || len(b.Heat) != 1 {
		t.Fatalf("batch %+v, want both merged under Seq 1", b)
	}
	if r.Stored(first) {
		t.Fatal("the first batch is Stored while the merge holding it is not acknowledged")
	}
	r.Acked(1)
	if !r.Stored(first) || !r.Stored(r.Serial()) {
		t.Error("not Stored after the merge was acknowledged")
	}
}
