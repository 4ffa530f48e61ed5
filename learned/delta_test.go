package learned

import (
	"encoding/json"
	"maps"
	"math/rand/v2"
	"testing"
	"time"
)

// Gains commute: whatever the order in which positive trust deltas
// arrive at a trust within its bounds, the clamped sum is the same; and a
// trust never leaves its bounds, whatever the deltas. (From a trust below
// the floor, order matters: the first gain is partly absorbed by the
// floor, as the policy's own clamp does.)
func TestTrustDeltasCommuteAndStayInBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		floor, ceiling := float64(rng.IntN(30))/100, 0.5+float64(rng.IntN(60))/100
		base := floor + float64(rng.IntN(100))/100*(min(ceiling, MaxTrust)-floor)
		var ds []TrustDelta
		for range 1 + rng.IntN(30) {
			ds = append(ds, TrustDelta{ID: "x", Base: base, Add: float64(rng.IntN(1000)) / 1e4, Floor: floor, Ceiling: ceiling})
		}
		apply := func(order []TrustDelta) float64 {
			st := NewState()
			st.Apply(&Batch{Trust: order})
			return st.Trust["x"]
		}
		want := apply(ds)
		shuffled := append([]TrustDelta(nil), ds...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := apply(shuffled); got != want {
			t.Fatalf("order changed the sum: %v then %v (%+v)", want, got, ds)
		}
		// Signed deltas: any order, always within bounds.
		for i := range shuffled {
			shuffled[i].Add -= 0.05
		}
		// Bounds hold in the unit stores add in (billionths).
		if got := TrustUnits(apply(shuffled)); got < TrustUnits(max(floor, 0)) || got > TrustUnits(min(ceiling, MaxTrust)) {
			t.Fatalf("trust %v outside [%v, %v]", got, floor, ceiling)
		}
	}
}

// The change Apply returns, applied to a copy of the state before it, gives
// the state after it: readers that replay changes end where the writer did.
func TestApplyChangeReplays(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	writer, reader := NewState(), NewState()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i := range 500 {
		var b Batch
		for range rng.IntN(4) {
			b.Trust = append(b.Trust, TrustDelta{ID: string(rune('a' + rng.IntN(4))), Base: 0.5, Add: float64(rng.IntN(21)-10) / 100, Ceiling: 0.99})
		}
		for range rng.IntN(3) {
			key := string(rune('p' + rng.IntN(3)))
			if rng.IntN(4) == 0 {
				b.Sessions = append(b.Sessions, SessionDelta{Key: key, Delete: true})
				continue
			}
			var base uint64
			if s := writer.Sessions[key]; s != nil {
				base = s.Version
			}
			data, _ := json.Marshal(map[string]int{"i": i})
			b.Sessions = append(b.Sessions, SessionDelta{Key: key, Base: base + uint64(rng.IntN(2)), Updated: now, Data: data})
		}
		c := writer.Apply(&b)
		reader.ApplyChange(&c)
		if !maps.Equal(reader.Trust, writer.Trust) || len(reader.Sessions) != len(writer.Sessions) {
			t.Fatalf("step %d: reader %+v, writer %+v", i, reader, writer)
		}
		for k, w := range writer.Sessions {
			if r := reader.Sessions[k]; r == nil || r.Version != w.Version || string(r.Data) != string(w.Data) {
				t.Fatalf("step %d: session %s: reader %+v, writer %+v", i, k, r, w)
			}
		}
	}
}

// FuzzDecodeState reads state files: nothing panics, and a file that is
// accepted is accepted again, unchanged, once written back.
func FuzzDecodeState(f *testing.F) {
	f.Add([]byte(`{"version": 1, "trust": {"a": 0.55}, "heat": {"a": {"refs": 2}}}`))
	f.Add([]byte(`{"version": 1, "trust": {}, "heat": {}, "sessions": {"k": {"version": 2, "updated": "2026-11-30T09:00:00Z", "data": {"x": [1, 2]}}}, "revision": 3, "epoch": "e", "writers": {"w": {"seq": 3, "at": "2026-11-30T09:00:00Z"}}}`))
	f.Add([]byte(`{"version": 2}`))
	f.Add([]byte(`{"version": 1, "trust": {"a": 1.5}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := decodeFile(data, "fuzz")
		if err != nil {
			return
		}
		out, err := json.Marshal(file)
		if err != nil {
			t.Fatalf("an accepted state does not encode: %v", err)
		}
		again, err := decodeFile(out, "fuzz")
		if err != nil {
			t.Fatalf("written back, refused: %v\n%s", err, out)
		}
		if !maps.Equal(again.Trust, file.Trust) || !maps.Equal(again.Heat, file.Heat) || len(again.Sessions) != len(file.Sessions) || again.version() != file.version() {
			t.Fatalf("written back, changed:\n%s", out)
		}
	})
}
