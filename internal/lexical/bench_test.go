package lexical

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/contextasm/contextasm/bench"
)

// The query benchmarks: an Index of n history-like turns (words drawn from
// a Zipf distribution over a 30,000-word vocabulary, 8 to 40 a turn, with
// stop words) or of the bench workload's blocks, and three queries:
//
//   - rare: five terms planted in 10 turns each, whatever n, so the
//     postings read stay the same while the index grows 100-fold;
//   - zipf: five words of ranks 200 to 2,000, whose postings grow with n;
//   - workload: a question over bench.Generate's blocks, whose twelve
//     phrases put nearly every query term in nearly every block (the worst
//     case: the postings are the store).
//
// Each reports postings/op (postings read) and ns/posting: the cost
// should follow postings, not n.

var (
	corporaMu sync.Mutex
	corpora   = map[string]*benchCorpus{}
)

type benchCorpus struct {
	x        Index
	postings map[string]int // per query: postings read
}

// pseudoWord returns the i-th word of the benchmark vocabulary.
func pseudoWord(i int) string {
	syl := [...]string{"ka", "lo", "mi", "ten", "sa", "ru", "vel", "dor", "pi", "nu", "gal", "zo", "fer", "bi", "ost", "qua"}
	var b strings.Builder
	for {
		b.WriteString(syl[i%len(syl)])
		i /= len(syl)
		if i == 0 {
			return b.String() + "x"
		}
	}
}

var benchQueries = map[string]string{
	"rare":     "plantedalpha plantedbeta plantedgamma planteddelta plantedepsilon",
	"zipf":     pseudoWord(200) + " " + pseudoWord(500) + " " + pseudoWord(900) + " " + pseudoWord(1400) + " " + pseudoWord(2000),
	"workload": "What are the fees and the arrival date of the transfer?",
}

func corpus(kind string, n int) *benchCorpus {
	key := fmt.Sprintf("%s/%d", kind, n)
	corporaMu.Lock()
	defer corporaMu.Unlock()
	if c, ok := corpora[key]; ok {
		return c
	}
	c := &benchCorpus{postings: map[string]int{}}
	if kind == "workload" {
		for _, d := range bench.Generate(n, 1) {
			c.x.Add(Analyze(d.Content))
		}
	} else {
		r := rand.New(rand.NewPCG(uint64(n), 1))
		z := rand.NewZipf(r, 1.07, 2, 29999)
		planted := strings.Fields(benchQueries["rare"])
		stops := [...]string{"the", "and", "I", "was", "to", "it", "so", "a"}
		var b strings.Builder
		for i := range n {
			b.Reset()
			for range 8 + r.IntN(33) {
				if r.IntN(3) == 0 {
					b.WriteString(stops[r.IntN(len(stops))])
				} else {
					b.WriteString(pseudoWord(int(z.Uint64())))
				}
				b.WriteByte(' ')
			}
			for j, w := range planted { // each in 10 turns, spread over the index
				if i%(n/10) == j {
					b.WriteString(w)
				}
			}
			c.x.Add(Analyze(b.String()))
		}
	}
	for name, q := range benchQueries {
		qq := NewQuery(q)
		for _, k := range qq.keys {
			if li, ok := c.x.lists[k]; ok {
				c.postings[name] += len(c.x.plists[li].p)
			}
		}
	}
	corpora[key] = c
	return c
}

// The top256 cases ask ScoreTop for the 256 most relevant, as an
// assembly with a query does (its cut-off's least maxHits).
func BenchmarkIndexScore(b *testing.B) {
	for _, kind := range []string{"rare", "zipf", "workload"} {
		for _, n := range []int{2000, 20000, 200000} {
			for _, k := range []int{0, 256} {
				name := fmt.Sprintf("%s/%d", kind, n)
				if k > 0 {
					name += fmt.Sprintf("/top%d", k)
				}
				b.Run(name, func(b *testing.B) {
					corp := "turns"
					if kind == "workload" {
						corp = "workload"
					}
					c := corpus(corp, n)
					var q Query
					var hits []Hit
					text := benchQueries[kind]
					b.ReportAllocs()
					for b.Loop() {
						q.Set(text)
						hits = c.x.ScoreTop(&q, k, hits[:0])
					}
					p := c.postings[kind]
					b.ReportMetric(float64(p), "postings/op")
					if k > 0 && c.x.read > 0 {
						b.ReportMetric(float64(c.x.read), "read/op") // pruned: the postings read
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(max(p, 1)), "ns/posting")
				})
			}
		}
	}
}

// BenchmarkIndexUpdate: a turn's block added and an old one removed, as a
// conversation's store changes by a turn.
func BenchmarkIndexUpdate(b *testing.B) {
	for _, n := range []int{2000, 20000, 200000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var x Index
			r := rand.New(rand.NewPCG(1, 2))
			z := rand.NewZipf(r, 1.07, 2, 29999)
			turn := func() Doc {
				var s strings.Builder
				for range 20 {
					s.WriteString(pseudoWord(int(z.Uint64())))
					s.WriteByte(' ')
				}
				return Analyze(s.String())
			}
			ring := make([]Handle, n)
			for i := range ring {
				ring[i] = x.Add(turn())
			}
			docs := make([]Doc, 1024)
			for i := range docs {
				docs[i] = turn()
			}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				x.Remove(ring[i%n])
				ring[i%n] = x.Add(docs[i%len(docs)])
				i++
			}
		})
	}
}
