package lexical

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// checkTop reports what is wrong with top, ScoreTop(q, k)'s hits, given
// all, Score(q)'s: a hit not Score's or with other bits, a document
// twice, a document missing that is at least the k-th largest relevance
// (all of them when k <= 0 or k >= len(all)), or one appended far below
// it (ScoreTop would then not be cutting).
func checkTop(all, top []Hit, k int) string {
	rel := make(map[Handle]float64, len(all))
	for _, h := range all {
		if _, dup := rel[h.Doc]; dup {
			return "Score gave a document twice"
		}
		rel[h.Doc] = h.Relevance
	}
	got := make(map[Handle]bool, len(top))
	for _, h := range top {
		v, ok := rel[h.Doc]
		switch {
		case !ok:
			return "a hit Score does not give"
		case math.Float64bits(v) != math.Float64bits(h.Relevance):
			return "a relevance other than Score's"
		case got[h.Doc]:
			return "a document twice"
		}
		got[h.Doc] = true
	}
	if k <= 0 || len(all) <= k {
		if len(top) != len(all) {
			return "not every hit, with k <= 0 or k >= the hits"
		}
		return ""
	}
	sorted := make([]float64, 0, len(all))
	for _, h := range all {
		sorted = append(sorted, h.Relevance)
	}
	slices.Sort(sorted)
	u := sorted[len(sorted)-k] // the k-th largest
	for _, h := range all {
		if h.Relevance >= u && !got[h.Doc] {
			return "a document at or above the k-th largest relevance left out"
		}
	}
	for _, h := range top {
		if h.Relevance < u*(1-1e-6) {
			return "a document far below the k-th largest relevance"
		}
	}
	return ""
}

// tieText returns a text of few words from the first v of vocab, the
// earlier ones likelier: documents then share their terms, with the same
// frequencies and lengths, so that many score alike.
func tieText(r *rand.Rand, v int) string {
	words := make([]string, r.IntN(7))
	for i := range words {
		words[i] = vocab[min(r.IntN(v), r.IntN(v))]
	}
	return strings.Join(words, " ")
}

// TestScoreTopMatchesScore: over random indexes of documents that tie
// often and share common terms, with removals (stale postings, slots
// used again), and every kind of k, ScoreTop gives Score's hits from the
// k-th largest relevance up, bit for bit, and leaves the index scoring
// as before.
func TestScoreTopMatchesScore(t *testing.T) {
	never := func(int) int { return math.MaxInt / 2 }
	for _, c := range []struct {
		name                 string
		least, total, giveUp int
		rescore              func(int) int
	}{
		{"default", pruneMin, pruneTotal, pruneGiveUp, rescoreCost},
		{"stop-when-it-can", 1, 0, 1, func(int) int { return 0 }},
		{"runs-of-6", 6, 0, 1, func(int) int { return 0 }},
		{"priced", 1, 0, pruneGiveUp, rescoreCost},
		{"never-stop", 1, 0, 1, never},
		{"give-up-soon", 1, 0, 64, func(int) int { return 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(m, n, g int, r func(int) int) { pruneMin, pruneTotal, pruneGiveUp, rescoreCost = m, n, g, r }(pruneMin, pruneTotal, pruneGiveUp, rescoreCost)
			pruneMin, pruneTotal, pruneGiveUp, rescoreCost = c.least, c.total, c.giveUp, c.rescore
			stopped := scoreTopMatchesScore(t)
			if c.rescore(1) == 0 && c.giveUp == 1 && stopped == 0 {
				t.Error("no query stopped before reading every posting")
			}
		})
	}
}

func scoreTopMatchesScore(t *testing.T) (stopped int) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 13))
		v := 2 + r.IntN(14)
		var x Index
		var handles []Handle
		for range r.IntN(400) {
			if len(handles) > 0 && r.IntN(3) == 0 {
				i := r.IntN(len(handles))
				x.Remove(handles[i])
				handles = slices.Delete(handles, i, i+1)
			} else {
				handles = append(handles, x.Add(Analyze(tieText(r, v))))
			}
		}
		for range 4 {
			q := NewQuery(tieText(r, v) + " " + tieText(r, v))
			all := x.Score(q, nil)
			n := len(all)
			for _, k := range []int{-1, 0, 1, 2, 3, r.IntN(10), r.IntN(n + 1), n - 1, n, n + 1 + r.IntN(5)} {
				prefix := []Hit{{Doc: 12345, Relevance: 0.5}}
				top := x.ScoreTop(q, k, prefix)
				if top[0] != prefix[0] {
					t.Fatalf("seed %d, k %d: dst's hits overwritten", seed, k)
				}
				if msg := checkTop(all, top[1:], k); msg != "" {
					t.Fatalf("seed %d, k %d of %d hits: %s", seed, k, n, msg)
				}
				// In no particular order: reading lists in runs moves
				// their postings.
				byDoc := func(a, b Hit) int { return cmp.Compare(a.Doc, b.Doc) }
				again := x.Score(q, nil)
				slices.SortFunc(again, byDoc)
				slices.SortFunc(all, byDoc)
				if !slices.Equal(again, all) {
					t.Fatalf("seed %d, k %d: Score after ScoreTop differs", seed, k)
				}
			}
		}
		stopped += x.stopped
	}
	return stopped
}

// TestScoreTopRounding: two sums an ulp apart may divide to one
// relevance; when the larger is the k-th largest, the smaller ties with
// it and is in too.
func TestScoreTopRounding(t *testing.T) {
	const max = 3.0
	a, b := 0.7, 0.0
	for i := range 1000 { // a sum whose predecessor divides to the same
		a = 0.7 + float64(i)*1e-3
		if b = math.Nextafter(a, 0); b/max == a/max {
			break
		}
	}
	if b/max != a/max {
		t.Fatal("no sums an ulp apart that divide alike")
	}
	sums := []float64{0.9, a, b, 0.1}
	want := map[Handle]bool{0: true, 1: true, 2: true}
	// The smaller before the larger, and after it (when the heap's
	// least is the larger already).
	for _, seen := range [][]Handle{{3, 2, 1, 0}, {0, 1, 3, 2}, {1, 3, 2, 0}} {
		x := Index{acc: slices.Clone(sums), seen: seen}
		top := x.appendTop(2, max, nil)
		if len(top) != len(want) {
			t.Fatalf("order %v: %d hits, want %d: %v", seen, len(top), len(want), top)
		}
		for _, h := range top {
			if !want[h.Doc] || h.Relevance != sums[h.Doc]/max {
				t.Fatalf("order %v: hit %v", seen, h)
			}
		}
		if slices.ContainsFunc(x.acc, func(v float64) bool { return v != 0 }) {
			t.Fatalf("order %v: accumulators left: %v", seen, x.acc)
		}
	}
}

// FuzzScoreTop: ScoreTop against Score on an index the input makes, a
// byte a step: a document of the next few words added, or one removed;
// the last bytes make the query and k.
func FuzzScoreTop(f *testing.F) {
	f.Add([]byte("abcabcaab\x01\x02\x03xaby"), 2)
	f.Add([]byte("aaaaaaaaaaaaaaaa\x00\x00bbbbb"), 5)
	f.Fuzz(func(t *testing.T, in []byte, k int) {
		var x Index
		var handles []Handle
		word := func(c byte) string { return vocab[int(c)%12] }
		for len(in) > 2 {
			c := in[0]
			in = in[1:]
			if c < 32 && len(handles) > 0 {
				i := int(c) % len(handles)
				x.Remove(handles[i])
				handles = slices.Delete(handles, i, i+1)
				continue
			}
			n := min(int(c)%5, len(in))
			words := make([]string, n)
			for i := range words {
				words[i] = word(in[i])
			}
			in = in[n:]
			handles = append(handles, x.Add(Analyze(strings.Join(words, " "))))
		}
		text := "fee"
		for _, c := range in {
			text += " " + word(c)
		}
		q := NewQuery(text)
		all := x.Score(q, nil)
		if msg := checkTop(all, x.ScoreTop(q, k, nil), k); msg != "" {
			t.Fatalf("k %d of %d hits: %s", k, len(all), msg)
		}
		// Again with every list read in runs, stopping when it can.
		defer func(m, n, g int, r func(int) int) { pruneMin, pruneTotal, pruneGiveUp, rescoreCost = m, n, g, r }(pruneMin, pruneTotal, pruneGiveUp, rescoreCost)
		pruneMin, pruneTotal, pruneGiveUp, rescoreCost = 1, 0, 1, func(int) int { return 0 }
		if msg := checkTop(all, x.ScoreTop(q, k, nil), k); msg != "" {
			t.Fatalf("k %d of %d hits, read in runs: %s", k, len(all), msg)
		}
	})
}
