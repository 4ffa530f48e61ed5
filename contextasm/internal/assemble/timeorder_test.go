package assemble

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/contextasm/contextasm/declare"
)

// extremeTimes are instants around the ends of what int64 nanoseconds
// hold, where newestKey clamps, and the zero time of a block of unknown
// age.
var extremeTimes = []time.Time{
	{},
	time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
	time.Date(1600, 5, 1, 0, 0, 0, 0, time.UTC),
	time.Unix(-9223372036, 0),
	time.Unix(-9223372036, 1),
	time.Unix(-9223372037, 999999999),
	time.Unix(9223372035, 999999999),
	time.Unix(9223372036, 0),
	time.Unix(9223372036, 854775807),
	time.Unix(9223372036, 854775808),
	time.Unix(9223372036, 999999999),
	time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC),
	time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
}

func randomTime(rng *rand.Rand) time.Time {
	switch rng.IntN(4) {
	case 0:
		return extremeTimes[rng.IntN(len(extremeTimes))]
	case 1: // a few instants, so that ties are common
		return time.Date(2026, 11, 30, 9, rng.IntN(3), 0, 0, time.UTC)
	default:
		return time.Unix(rng.Int64N(1<<40)-1<<39, rng.Int64N(1e9)).In(time.FixedZone("", 3600*(rng.IntN(5)-2)))
	}
}

// TestNewestKeyOrder: newestKey never orders two instants against
// Time.Compare, and tells apart any two that int64 nanoseconds hold.
func TestNewestKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		a, b := randomTime(rng), randomTime(rng)
		if i < len(extremeTimes)*len(extremeTimes) {
			a, b = extremeTimes[i/len(extremeTimes)], extremeTimes[i%len(extremeTimes)]
		}
		ka, kb := newestKey(a), newestKey(b)
		c := a.Compare(b)
		switch {
		case c > 0 && ka > kb, c < 0 && ka < kb, c == 0 && ka != kb:
			t.Fatalf("%v vs %v: Compare %d, keys %d and %d (newer must sort first)", a, b, c, ka, kb)
		}
		inRange := func(t time.Time) bool { return t.Unix() > -9223372036 && t.Unix() < 9223372036 }
		if c != 0 && ka == kb && inRange(a) && inRange(b) {
			t.Fatalf("%v and %v differ, keys equal", a, b)
		}
	}
}

// TestIndexTimeOrder: a section's time order (byTime, history) is the
// entries sorted by compareNewest, dead ones left out, above and below
// the radix sort's threshold, with ties, zero and clamped times, and with
// the buffers reused from one index to the next.
func TestIndexTimeOrder(t *testing.T) {
	var keys, tmp []rankKey
	var s ixSection
	for run, n := range []int{0, 1, 7, radixMin - 1, radixMin, 300, 3000, 40, 2000} {
		rng := rand.New(rand.NewPCG(uint64(run), 9))
		base := make([]ixEntry, n)
		ids := rng.Perm(n) // unique, as in a store, in no order
		for i := range base {
			b := &Block{ID: fmt.Sprintf("b%05d", ids[i]), Seq: int64(rng.IntN(4)), LastModified: randomTime(rng),
				Type: declare.MemoryTypes()[rng.IntN(declare.NumMemoryTypes)]}
			base[i] = ixEntry{b: b, dead: rng.IntN(10) == 0, min: int32(rng.IntN(50))}
		}
		s = ixSection{base: base, byTime: s.byTime[:0], history: s.history[:0]}
		s.index(&keys, &tmp)
		var want, wantHistory []int32
		for i := range base {
			if !base[i].dead {
				want = append(want, int32(i))
			}
		}
		slices.SortStableFunc(want, func(i, j int32) int { return compareNewest(base[i].b, base[j].b) })
		for _, i := range want {
			if base[i].b.Type == declare.History {
				wantHistory = append(wantHistory, i)
			}
		}
		checkOrder(t, fmt.Sprintf("n=%d: byTime", n), s.byTime, want)
		checkOrder(t, fmt.Sprintf("n=%d: history", n), s.history, wantHistory)
	}
}

func checkOrder(t *testing.T, what string, got, want []int32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: at %d entry %d, want %d", what, i, got[i], want[i])
		}
	}
}
