package contextasm

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
)

// TestBlockSetProperties puts and removes random blocks in a blockSet and
// in a plain sorted slice, checking after every step that the set holds
// exactly the slice's blocks, in order, that its changes say what
// changed, that no chunk grew past twice chunkSize and that the set it was
// made from is unchanged.
func TestBlockSetProperties(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		var want []*assemble.Block
		var set blockSet
		ids := 1 + r.IntN(5000)
		for step := range 60 {
			before, beforeSet := slices.Clone(want), set
			var changes []change
			if r.IntN(3) > 0 {
				// Put: a few, or, now and then, many.
				k := 1 + r.IntN(8)
				if r.IntN(10) == 0 {
					k = r.IntN(3000)
				}
				byID := map[string]*assemble.Block{}
				for range k {
					id := fmt.Sprintf("b%05d", r.IntN(ids))
					byID[id] = &assemble.Block{ID: id, Seq: int64(step)}
				}
				put := slices.SortedFunc(maps.Values(byID), func(a, b *assemble.Block) int { return strings.Compare(a.ID, b.ID) })
				set, changes = set.put(put)
				for _, b := range put {
					i, found := slices.BinarySearchFunc(want, b.ID, compareID)
					if found {
						want[i] = b
					} else {
						want = slices.Insert(want, i, b)
					}
				}
				if len(changes) != len(put) {
					t.Fatalf("seed %d step %d: %d changes for %d blocks put", seed, step, len(changes), len(put))
				}
				for i, c := range changes {
					j, found := slices.BinarySearchFunc(before, put[i].ID, compareID)
					if c.new != put[i] || (found && c.old != before[j]) || (!found && c.old != nil) {
						t.Fatalf("seed %d step %d: change %d is %+v", seed, step, i, c)
					}
				}
			} else {
				var rm []string
				for range 1 + r.IntN(10) {
					rm = append(rm, fmt.Sprintf("b%05d", r.IntN(ids)))
				}
				slices.Sort(rm)
				rm = slices.Compact(rm)
				set, changes = set.remove(rm)
				n := 0
				for _, id := range rm {
					if i, found := slices.BinarySearchFunc(want, id, compareID); found {
						if changes[n].old != want[i] || changes[n].new != nil {
							t.Fatalf("seed %d step %d: change %d is %+v", seed, step, n, changes[n])
						}
						n++
						want = slices.Delete(want, i, i+1)
					}
				}
				if n != len(changes) {
					t.Fatalf("seed %d step %d: %d changes for %d removed", seed, step, len(changes), n)
				}
			}
			checkSet(t, set, want)
			checkSet(t, beforeSet, before)
		}
	}
}

func checkSet(t *testing.T, s blockSet, want []*assemble.Block) {
	t.Helper()
	got := s.appendTo(nil)
	if s.len() != len(want) || !slices.Equal(got, want) {
		t.Fatalf("set holds %d blocks (len %d), want %d", len(got), s.len(), len(want))
	}
	for _, c := range s.chunks {
		if len(c) == 0 || len(c) > 2*chunkSize {
			t.Fatalf("a chunk of %d blocks", len(c))
		}
	}
	for _, b := range want {
		if g, ok := s.get(b.ID); !ok || g != b {
			t.Fatalf("get(%s) = %v, %v", b.ID, g, ok)
		}
	}
	if _, ok := s.get("a"); ok {
		t.Fatal("get of an id before every block found one")
	}
	if _, ok := s.get("c"); ok {
		t.Fatal("get of an id after every block found one")
	}
	if len(want) > 0 {
		from := want[len(want)/2].ID
		var seen []*assemble.Block
		s.ascend(from, func(b *assemble.Block) bool { seen = append(seen, b); return true })
		if !slices.Equal(seen, want[len(want)/2:]) {
			t.Fatalf("ascend from %s saw %d blocks, want %d", from, len(seen), len(want)-len(want)/2)
		}
	}
}

// TestIdleIndexIncremental checks that the idle index a snapshot gets by
// applying its changes (nextIdle) is the one reading the whole store
// gives (idleIndex).
func TestIdleIndexIncremental(t *testing.T) {
	epoch := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 2))
		snap := empty
		for step := range 80 {
			var changes []change
			set := snap.set
			if r.IntN(4) > 0 {
				byID := map[string]*assemble.Block{}
				for range 1 + r.IntN(4) {
					b := &assemble.Block{ID: fmt.Sprintf("b%03d", r.IntN(60)), Scope: declare.ScopeSession,
						SessionID: fmt.Sprintf("s%d", r.IntN(3)), LastModified: epoch.Add(time.Duration(r.IntN(100)) * time.Minute)}
					switch r.IntN(4) {
					case 0:
						b.Scope, b.SessionID = declare.ScopeGlobal, ""
					case 1:
						b.EditRare().IdleTTL = time.Duration(1+r.IntN(5)) * time.Hour
					}
					byID[b.ID] = b
				}
				put := slices.SortedFunc(maps.Values(byID), func(a, b *assemble.Block) int { return strings.Compare(a.ID, b.ID) })
				set, changes = set.put(put)
			} else {
				rm := []string{fmt.Sprintf("b%03d", r.IntN(60))}
				set, changes = set.remove(rm)
			}
			next := &snapshot{set: set, version: snap.version + 1, idle: nextIdle(snap, set, changes)}
			want := idleIndex(set.appendTo(nil))
			if !idleEqual(next.idle, want) {
				t.Fatalf("seed %d step %d: incremental idle index %v, want %v", seed, step, idleString(next.idle), idleString(want))
			}
			snap = next
		}
	}
}

func idleEqual(a, b map[string]*idleSet) bool {
	return maps.EqualFunc(a, b, func(x, y *idleSet) bool {
		return x.longest == y.longest && x.dated.Equal(y.dated) && maps.Equal(x.ttl, y.ttl)
	})
}

func idleString(m map[string]*idleSet) string {
	var b strings.Builder
	for _, s := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s:{%v %v %v} ", s, m[s].ttl, m[s].longest, m[s].dated)
	}
	return b.String()
}
