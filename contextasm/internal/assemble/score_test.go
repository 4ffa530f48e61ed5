package assemble_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/truncate"
)

func TestRank(t *testing.T) {
	r := func(id string, required bool, score float64) assemble.Ranked {
		return assemble.Ranked{ID: id, Required: required, Score: score}
	}
	tests := []struct {
		name string
		in   []assemble.Ranked
		want []string
	}{
		{"empty", nil, nil},
		{"score descending", []assemble.Ranked{r("a", false, 0.1), r("b", false, 0.9), r("c", false, 0.5)}, []string{"b", "c", "a"}},
		{"required first, whatever the score", []assemble.Ranked{r("a", false, 0.99), r("z", true, 0.01), r("m", true, 0.5)}, []string{"m", "z", "a"}},
		{"ties by id ascending", []assemble.Ranked{r("b", false, 0.5), r("c", false, 0.5), r("a", false, 0.5), r("A", false, 0.5)}, []string{"A", "a", "b", "c"}},
		{"required ties by id", []assemble.Ranked{r("y", true, 0.3), r("x", true, 0.3), r("w", false, 0.3)}, []string{"x", "y", "w"}},
		{"all together", []assemble.Ranked{
			r("n2", false, 0.7), r("r2", true, 0.2), r("n1", false, 0.7), r("r1", true, 0.8), r("n0", false, 0.9), r("r0", true, 0.2),
		}, []string{"r1", "r0", "r2", "n0", "n1", "n2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Every input order gives the same ranking.
			rng := rand.New(rand.NewPCG(1, 2))
			for range 20 {
				work := slices.Clone(tt.in)
				rng.Shuffle(len(work), func(i, j int) { work[i], work[j] = work[j], work[i] })
				assemble.Rank(work)
				var got []string
				for _, x := range work {
					got = append(got, x.ID)
				}
				if !slices.Equal(got, tt.want) {
					t.Fatalf("Rank = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestScore(t *testing.T) {
	at := now
	base := assemble.Block{ID: "b", Priority: 0.5, HasPriority: true, Weight: 0.5, Trust: 0.5}
	with := func(f func(*assemble.Block)) *assemble.Block { b := base; f(&b); return &b }
	s := truncate.DefaultScoring()
	score := func(b *assemble.Block) float64 { return assemble.Score(s, b, at) }

	t.Run("rises with priority, weight and trust", func(t *testing.T) {
		for _, f := range []struct {
			name string
			set  func(*assemble.Block, float64)
		}{
			{"priority", func(b *assemble.Block, v float64) { b.Priority = v }},
			{"weight", func(b *assemble.Block, v float64) { b.Weight = v }},
			{"trust", func(b *assemble.Block, v float64) { b.Trust = v }},
		} {
			prev := math.Inf(-1)
			for _, v := range []float64{0, 0.1, 0.25, 0.5, 0.75, 1} {
				got := score(with(func(b *assemble.Block) { f.set(b, v) }))
				if !(got > prev) {
					t.Errorf("%s %.2f: score %v, not above %v", f.name, v, got, prev)
				}
				if got < 0 || got > 1 {
					t.Errorf("%s %.2f: score %v outside [0, 1]", f.name, v, got)
				}
				prev = got
			}
		}
	})

	t.Run("falls with staleness", func(t *testing.T) {
		stale := func(from time.Duration, after time.Duration) *assemble.Block {
			return with(func(b *assemble.Block) { b.StaleFrom, b.StaleAfter = at.Add(from), after })
		}
		fresh := score(&base)
		steps := []*assemble.Block{
			stale(time.Second, time.Hour), // not stale yet
			stale(0, time.Hour),           // stale since now
			stale(-15*time.Minute, time.Hour),
			stale(-30*time.Minute, time.Hour),
			stale(-60*time.Minute, time.Hour), // through its window
		}
		if got := score(steps[0]); got != fresh {
			t.Errorf("not yet stale: %v, want the fresh score %v", got, fresh)
		}
		prev := fresh
		for i, b := range steps[1:] {
			got := score(b)
			if !(got < prev) {
				t.Errorf("stale step %d: score %v, not below %v", i+1, got, prev)
			}
			prev = got
		}
		// Past the window it costs no more; the documented bounds:
		// StalePenalty/2 just stale, all of StalePenalty at the end.
		if got := score(stale(-3*time.Hour, time.Hour)); got != prev {
			t.Errorf("past the window: %v, want %v", got, prev)
		}
		near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
		if got, want := score(steps[1]), fresh*(1-s.StalePenalty/2); !near(got, want) {
			t.Errorf("just stale: %v, want %v", got, want)
		}
		if got, want := score(steps[4]), fresh*(1-s.StalePenalty); !near(got, want) {
			t.Errorf("end of window: %v, want %v", got, want)
		}
		if got, want := score(stale(-time.Hour, 0)), fresh*(1-s.StalePenalty); !near(got, want) {
			t.Errorf("stale with no window: %v, want %v", got, want)
		}
	})

	t.Run("no priority means DefaultPriority", func(t *testing.T) {
		none := with(func(b *assemble.Block) { b.HasPriority, b.Priority = false, 0.99 })
		dflt := with(func(b *assemble.Block) { b.Priority = s.DefaultPriority })
		if got, want := score(none), score(dflt); got != want {
			t.Errorf("no priority: %v, want %v (priority %v)", got, want, s.DefaultPriority)
		}
		custom := truncate.Scoring{Priority: 1, SemanticWeight: 1, Trust: 1, DefaultPriority: 0.1}
		if got, want := assemble.Score(custom, none, at), assemble.Score(custom, with(func(b *assemble.Block) { b.Priority = 0.1 }), at); got != want {
			t.Errorf("custom DefaultPriority: %v, want %v", got, want)
		}
	})

	t.Run("zero Scoring means DefaultScoring", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for range 200 {
			b := assemble.Block{Priority: rng.Float64(), HasPriority: rng.IntN(2) == 0, Weight: rng.Float64(), Trust: rng.Float64()}
			if rng.IntN(3) == 0 {
				b.StaleFrom, b.StaleAfter = at.Add(-time.Duration(rng.IntN(100))*time.Minute), time.Hour
			}
			if got, want := assemble.Score(truncate.Scoring{}, &b, at), assemble.Score(truncate.DefaultScoring(), &b, at); got != want {
				t.Fatalf("zero Scoring: %v, DefaultScoring: %v, for %+v", got, want, b)
			}
		}
	})

	t.Run("formula", func(t *testing.T) {
		b := with(func(b *assemble.Block) { b.Priority, b.Weight, b.Trust = 1, 0.5, 0 })
		want := (0.4*1 + 0.35*0.5 + 0.25*0) / (0.4 + 0.35 + 0.25)
		if got := score(b); math.Abs(got-want) > 1e-12 {
			t.Errorf("score = %v, want %v", got, want)
		}
		// A partly filled Scoring keeps the defaults of the fields left
		// zero: only the trust weight changes here.
		partial := truncate.Scoring{Trust: 1}
		want = (0.4*1 + 0.35*0.5 + 1*0) / (0.4 + 0.35 + 1)
		if got := assemble.Score(partial, b, at); math.Abs(got-want) > 1e-12 {
			t.Errorf("Scoring{Trust: 1} score = %v, want %v (the other weights at their defaults)", got, want)
		}
		// Trust all but alone: the other weights tiny, not zero.
		custom := truncate.Scoring{Priority: 1e-12, SemanticWeight: 1e-12, Trust: 1}
		if got := assemble.Score(custom, b, at); got > 1e-9 {
			t.Errorf("trust-only score of a zero-trust block = %v, want about 0", got)
		}
	})

	// The Assembler ranks with its Scoring: a custom one changes the order.
	t.Run("assembler uses its Scoring", func(t *testing.T) {
		tpl := mustParse(t, `{"budget": 4096, "sections": [
		  {"name": "S", "priority": 1, "memory_types": ["context"], "max_tokens": 4000, "render": "{content}"}]}`)
		lowTrust := block("a", "context", "A")
		lowTrust.Weight, lowTrust.Trust = 1, 0
		highTrust := block("b", "context", "B")
		highTrust.Weight, highTrust.Trust = 0, 1
		order := func(sc truncate.Scoring) string {
			a := assemble.Assembler{Scoring: sc}
			out, err := a.Assemble(tpl, []assemble.Block{lowTrust, highTrust}, assemble.Request{Now: now}, realTokenizer(t))
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprint(out.Sections[0].Blocks[0].RequestID, out.Sections[0].Blocks[1].RequestID)
		}
		if got := order(truncate.Scoring{}); got != "ab" {
			t.Errorf("default scoring order %s, want ab (weight counts more than trust)", got)
		}
		if got := order(truncate.Scoring{Trust: 1, SemanticWeight: 0.1}); got != "ba" {
			t.Errorf("trust-heavy scoring order %s, want ba", got)
		}
	})
}

func TestRankAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	ranked := make([]assemble.Ranked, 1000)
	for i := range ranked {
		ranked[i] = assemble.Ranked{
			Index:    int32(i),
			Required: rng.IntN(10) == 0,
			Score:    float64(rng.IntN(50)) / 50, // many ties, broken by id
			ID:       fmt.Sprintf("mem-%04d", rng.IntN(10000)),
		}
	}
	work := make([]assemble.Ranked, len(ranked))
	if n := testing.AllocsPerRun(100, func() { copy(work, ranked); assemble.Rank(work) }); n != 0 {
		t.Errorf("Rank of 1,000 blocks allocates %v times, want 0", n)
	}
	if !slices.IsSortedFunc(work, func(a, b assemble.Ranked) int {
		switch {
		case a.Required != b.Required:
			if a.Required {
				return -1
			}
			return 1
		case a.Score != b.Score:
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	}) {
		t.Error("Rank did not sort")
	}
}

// The compact rank keys order every float as compareRanked does,
// negative scores (from negative weights) and -0 included.
func TestDescendingOrdersLikeFloats(t *testing.T) {
	vals := []float64{-1e9, -2.5, -1, -1e-300, math.Copysign(0, -1), 0, 1e-300, 0.25, 0.5, 1, 3, math.Inf(1), math.Inf(-1)}
	for _, a := range vals {
		for _, b := range vals {
			ka, kb := assemble.Descending(a), assemble.Descending(b)
			switch {
			case a > b && !(ka < kb), a < b && !(ka > kb), a == b && ka != kb:
				t.Errorf("descending(%v)=%x, descending(%v)=%x: wrong order", a, ka, b, kb)
			}
		}
	}
}

// The engine's ranking path (blocks in request_id order, compact keys)
// orders like Rank and, once its scratch has grown, allocates nothing.
func TestRankByIndexAllocationFree(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	ranked := make([]assemble.Ranked, 1000)
	for i := range ranked {
		ranked[i] = assemble.Ranked{Index: int32(i), Required: r.IntN(20) == 0, Score: float64(r.IntN(30)) / 30, ID: fmt.Sprintf("id-%05d", i)}
	}
	var a assemble.Assembler
	got := a.RankSection(ranked)
	want := slices.Clone(ranked)
	assemble.Rank(want)
	for i := range want {
		if got[i] != want[i].Index {
			t.Fatalf("position %d: index %d, Rank says %d", i, got[i], want[i].Index)
		}
	}
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	if n := testing.AllocsPerRun(100, func() { a.RankSectionNoResult(ranked) }); n != 0 {
		t.Errorf("ranking 1,000 blocks allocates %v times, want 0", n)
	}
}

// The radix path of the engine's ranking agrees with Rank on large
// sections of every kind of score: ties, negatives (negative weights), -0,
// all required, none required.
func TestRankByIndexMatchesRankOnLargeSections(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 4))
	gens := map[string]func(i int) assemble.Ranked{
		"ties": func(i int) assemble.Ranked {
			return assemble.Ranked{Score: float64(r.IntN(4)) / 4, Required: r.IntN(7) == 0}
		},
		"negatives": func(i int) assemble.Ranked {
			return assemble.Ranked{Score: r.NormFloat64() * 100, Required: r.IntN(50) == 0}
		},
		"signed zeros": func(i int) assemble.Ranked { return assemble.Ranked{Score: math.Copysign(0, float64(r.IntN(2))-0.5)} },
		"all required": func(i int) assemble.Ranked { return assemble.Ranked{Score: r.Float64(), Required: true} },
		"distinct":     func(i int) assemble.Ranked { return assemble.Ranked{Score: r.Float64()} },
	}
	var a assemble.Assembler
	for name, gen := range gens {
		for _, n := range []int{255, 256, 3000} {
			ranked := make([]assemble.Ranked, n)
			for i := range ranked {
				ranked[i] = gen(i)
				ranked[i].Index = int32(i)
				ranked[i].ID = fmt.Sprintf("b%06d", i)
			}
			got := a.RankSection(ranked)
			want := slices.Clone(ranked)
			assemble.Rank(want)
			for i := range want {
				if got[i] != want[i].Index {
					t.Fatalf("%s, %d blocks: position %d is block %d, Rank says %d", name, n, i, got[i], want[i].Index)
				}
			}
		}
	}
}
