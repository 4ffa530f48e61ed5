package lexical

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// vocab is a small vocabulary, so that random texts share terms, with
// words of several scripts.
var vocab = strings.Fields(`fee fees rate loan bank transfer friday payment income debt
	ratio review support group painting paint dog cat beach camping book concert
	taxa juro comissão cliente resumo Straße Gebühr 北京 東京タワー 手数料 ภาษาไทย
	Caroline Melanie adoption race charity 3,450 2023 feeAmount debt-to-income`)

func randomText(r *rand.Rand) string {
	n := r.IntN(30)
	words := make([]string, n)
	for i := range words {
		words[i] = vocab[r.IntN(len(vocab))]
		if r.IntN(8) == 0 {
			words[i] = "the" // a stop word: length without a term
		}
	}
	return strings.Join(words, " ")
}

func randomQuery(r *rand.Rand) *Query {
	text := randomText(r)
	if r.IntN(4) == 0 {
		text += " unseenterm" // a term no document has
	}
	return NewQuery(text)
}

// scanAll returns the relevance of every document from scratch, by Scan.
func scanAll(q *Query, docs []Doc) []float64 {
	var s Scan
	s.Reset(q)
	for i := range docs {
		s.Count(&docs[i])
	}
	out := make([]float64, len(docs))
	for i := range docs {
		out[i] = s.Relevance(&docs[i])
	}
	return out
}

// model is an Index and the documents it should hold.
type model struct {
	x    Index
	live map[Handle]Doc
	sc   Scorer // reused by every check, as the assembler reuses its own
}

func (m *model) scoreMap(q *Query) map[Handle]float64 {
	got := make(map[Handle]float64)
	for _, h := range m.x.Score(q, nil) {
		if _, dup := got[h.Doc]; dup {
			panic(fmt.Sprintf("handle %d twice", h.Doc))
		}
		got[h.Doc] = h.Relevance
	}
	return got
}

// check compares the Index with a from-scratch computation: its
// statistics, the postings' room Bytes counts, and every document's
// relevance to q, bit for bit.
func (m *model) check(t *testing.T, q *Query) {
	t.Helper()
	held := 0
	for _, pl := range m.x.plists {
		held += cap(pl.p)
	}
	if held != m.x.pcap {
		t.Fatalf("the lists hold %d postings' room, Bytes counts %d", held, m.x.pcap)
	}
	handles := make([]Handle, 0, len(m.live))
	for h := range m.live {
		handles = append(handles, h)
	}
	slices.Sort(handles)
	docs := make([]Doc, len(handles))
	var length uint64
	df := make(map[uint64]int32)
	for i, h := range handles {
		docs[i] = m.live[h]
		length += uint64(docs[i].length)
		for _, e := range docs[i].terms {
			df[e>>16]++
		}
	}
	if m.x.docs != len(docs) || m.x.length != length {
		t.Fatalf("index has %d docs of length %d, want %d, %d", m.x.docs, m.x.length, len(docs), length)
	}
	if len(m.x.lists) != len(df) {
		t.Fatalf("index has %d terms, want %d", len(m.x.lists), len(df))
	}
	for k, n := range df {
		li, ok := m.x.lists[k]
		if !ok || m.x.plists[li].df != n {
			t.Fatalf("term %x: df %d in the index, want %d", k, m.x.plists[li].df, n)
		}
		if pl := m.x.plists[li]; int(pl.dead) > max(int(pl.df), minCompact) {
			t.Fatalf("term %x: %d stale postings for %d live", k, pl.dead, pl.df)
		}
	}
	want := scanAll(q, docs)
	// A document outside the index is scored under its statistics as a
	// scan scores one it did not count (a summary, in the assembler).
	outside := Analyze(randomText(rand.New(rand.NewPCG(uint64(len(docs)), 9))))
	var s Scan
	s.Reset(q)
	for i := range docs {
		s.Count(&docs[i])
	}
	if got, want := m.x.Relevance(q, &outside), s.Relevance(&outside); got != want {
		t.Fatalf("a document outside: relevance %v from the index, %v from scratch", got, want)
	}
	// A Scorer gives the Index's Relevance, for every document, after
	// the scores of another query (its previous Reset).
	m.sc.Reset(&m.x, q)
	if got, want := m.sc.Relevance(&outside), s.Relevance(&outside); got != want {
		t.Fatalf("a document outside: relevance %v from a Scorer, %v from scratch", got, want)
	}
	for i := range docs {
		if got, want := m.sc.Relevance(&docs[i]), s.Relevance(&docs[i]); got != want {
			t.Fatalf("doc %d scored as outside: relevance %v from a Scorer, %v from scratch", handles[i], got, want)
		}
	}
	got := m.scoreMap(q)
	for i, h := range handles {
		if got[h] != want[i] {
			t.Fatalf("doc %d: relevance %v from the index, %v from scratch", h, got[h], want[i])
		}
		if want[i] < 0 || want[i] >= 1 {
			t.Fatalf("doc %d: relevance %v outside [0, 1)", h, want[i])
		}
		delete(got, h)
	}
	if len(got) > 0 {
		t.Fatalf("index scored documents it does not hold: %v", got)
	}
}

// TestIndexMatchesScan: after any sequence of adds and removes, the
// incremental statistics and scores are those computed from scratch over
// the documents left.
func TestIndexMatchesScan(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		m := model{live: make(map[Handle]Doc)}
		var handles []Handle
		for step := range 400 {
			if len(handles) > 0 && r.IntN(5) < 2 {
				i := r.IntN(len(handles))
				h := handles[i]
				handles = slices.Delete(handles, i, i+1)
				m.x.Remove(h)
				m.x.Remove(h) // twice: ignored
				delete(m.live, h)
			} else {
				d := Analyze(randomText(r))
				h := m.x.Add(d)
				if _, taken := m.live[h]; taken {
					t.Fatalf("handle %d given twice", h)
				}
				m.live[h] = d
				handles = append(handles, h)
			}
			if step%20 == 0 {
				m.check(t, randomQuery(r))
			}
		}
		m.check(t, randomQuery(r))
		for _, h := range handles { // empty it
			m.x.Remove(h)
			delete(m.live, h)
		}
		m.check(t, randomQuery(r))
		if len(m.x.plists) > 0 && len(m.x.spare) != len(m.x.plists) {
			t.Fatalf("empty index uses %d of its %d lists", len(m.x.plists)-len(m.x.spare), len(m.x.plists))
		}
	}
}

// TestSlotRetired: a slot whose generation is exhausted is not used again,
// so a stale posting can never be taken for a new document's.
func TestSlotRetired(t *testing.T) {
	var x Index
	keep := x.Add(Analyze("fee rate")) // holds the lists open, with stale postings of the slot below
	a := Analyze("fee")
	h := x.Add(a)
	x.slots[h].gen = retired - 1
	x.Remove(h)
	if h2 := x.Add(a); h2 == h {
		t.Fatalf("retired slot %d given again", h)
	}
	x.Remove(keep)
	if got := len(x.Score(NewQuery("fee"), nil)); got != 1 {
		t.Fatalf("%d hits, want 1", got)
	}
}

// TestScoreDeterministic: the same documents, added in any order, under
// any GOMAXPROCS, analysed concurrently, give the same relevance to each.
func TestScoreDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	texts := make([]string, 300)
	for i := range texts {
		texts[i] = randomText(r)
	}
	q := NewQuery("fee paint dog 北京 Caroline's adoption debt ratio taxa")
	var want map[string]float64
	for _, procs := range []int{1, 2, 8} {
		old := runtime.GOMAXPROCS(procs)
		for round := range 3 {
			order := r.Perm(len(texts))
			docs := make([]Doc, len(texts))
			var wg sync.WaitGroup
			for _, i := range order {
				wg.Go(func() { docs[i] = Analyze(texts[i]) })
			}
			wg.Wait()
			var x Index
			byHandle := make(map[Handle]string)
			for _, i := range order {
				byHandle[x.Add(docs[i])] = fmt.Sprintf("%d", i)
			}
			got := make(map[string]float64)
			for _, h := range x.Score(q, nil) {
				got[byHandle[h.Doc]] = h.Relevance
			}
			if want == nil {
				want = got
				if len(want) == 0 {
					t.Fatal("no document matched: the test proves nothing")
				}
				continue
			}
			if len(got) != len(want) {
				t.Fatalf("GOMAXPROCS %d, round %d: %d hits, want %d", procs, round, len(got), len(want))
			}
			for id, v := range want {
				if got[id] != v {
					t.Fatalf("GOMAXPROCS %d, round %d: doc %s relevance %v, want %v", procs, round, id, got[id], v)
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// TestTenantIsolation: in a store of several tenants where each request's
// index holds only what it may see (as the engine keeps one per request
// shape), another tenant's blocks — added, removed, sharing every term —
// never move this tenant's scores.
func TestTenantIsolation(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shared := make([]Doc, 50) // global blocks: both tenants see them
	mine := make([]Doc, 80)
	for i := range shared {
		shared[i] = Analyze(randomText(r))
	}
	for i := range mine {
		mine[i] = Analyze(randomText(r))
	}
	q := NewQuery("fee paint dog 北京 Caroline adoption debt")
	alone := scanAll(q, append(slices.Clone(shared), mine...))

	tenants := map[string]*Index{"ana": new(Index), "bob": new(Index)}
	for _, d := range shared {
		for _, x := range tenants {
			x.Add(d)
		}
	}
	ana := tenants["ana"]
	handles := make([]Handle, len(mine))
	for i, d := range mine {
		handles[i] = ana.Add(d)
		// bob declares and forgets blocks in between, with the same terms
		for range 3 {
			h := tenants["bob"].Add(Analyze(randomText(r) + " fee paint dog"))
			if r.IntN(2) == 0 {
				tenants["bob"].Remove(h)
			}
		}
	}
	got := make(map[Handle]float64)
	for _, h := range ana.Score(q, nil) {
		got[h.Doc] = h.Relevance
	}
	for i, h := range handles {
		if got[h] != alone[len(shared)+i] {
			t.Fatalf("block %d: relevance %v with another tenant, %v alone", i, got[h], alone[len(shared)+i])
		}
	}
}

// TestRelevanceBounds: a document with every query term, often, in a
// short text approaches 1 but stays below; one with none scores 0 and is
// not a hit; an empty query or index scores nothing.
func TestRelevanceBounds(t *testing.T) {
	var x Index
	best := x.Add(Analyze(strings.Repeat("adoption agency ", 200)))
	none := x.Add(Analyze("the beach at sunset"))
	x.Add(Analyze("an adoption story, long, with many other words in it about a family"))
	hits := x.Score(NewQuery("adoption agency"), nil)
	rel := make(map[Handle]float64)
	for _, h := range hits {
		rel[h.Doc] = h.Relevance
	}
	if _, ok := rel[none]; ok {
		t.Errorf("a document without the query's terms is a hit")
	}
	if v := rel[best]; v < 0.9 || v >= 1 {
		t.Errorf("best document relevance %v, want in [0.9, 1)", v)
	}
	for _, v := range rel {
		if v <= 0 || v > rel[best] {
			t.Errorf("relevance %v out of (0, best]", v)
		}
	}
	if got := x.Score(NewQuery("the and of"), nil); len(got) != 0 {
		t.Errorf("a query of stop words scored %d documents", len(got))
	}
	var empty Index
	if got := empty.Score(NewQuery("adoption"), nil); len(got) != 0 {
		t.Errorf("an empty index scored %d documents", len(got))
	}
}

// TestRelevanceOrder: BM25's orderings, as the formula promises: a rarer
// term outweighs a common one, a repeated term counts more (but less than
// twice), and of two documents with the same terms the shorter ranks
// first.
func TestRelevanceOrder(t *testing.T) {
	var x Index
	common := x.Add(Analyze("dog walk"))
	rare := x.Add(Analyze("dog adoption"))
	for range 8 {
		x.Add(Analyze("walk park"))
	}
	twice := x.Add(Analyze("concert concert ticket"))
	once := x.Add(Analyze("concert ticket price"))
	short := x.Add(Analyze("painting class"))
	long := x.Add(Analyze("painting class with many more words about other things entirely"))
	rel := func(q string) map[Handle]float64 {
		m := make(map[Handle]float64)
		for _, h := range x.Score(NewQuery(q), nil) {
			m[h.Doc] = h.Relevance
		}
		return m
	}
	if r := rel("walk adoption"); r[rare] <= r[common] {
		t.Errorf("rare term: %v, common term: %v", r[rare], r[common])
	}
	if r := rel("concert"); r[twice] <= r[once] || r[twice] >= 2*r[once] {
		t.Errorf("tf 2: %v, tf 1: %v", r[twice], r[once])
	}
	if r := rel("painting class"); r[short] <= r[long] {
		t.Errorf("short: %v, long: %v", r[short], r[long])
	}
}

// TestScoreAllocs: a query kept from one request to the next, and a kept
// slice of hits, make scoring allocation-free.
func TestScoreAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	r := rand.New(rand.NewPCG(9, 9))
	var x Index
	for range 500 {
		x.Add(Analyze(randomText(r)))
	}
	var q Query
	texts := []string{"fee paint dog 北京", "Caroline's adoption debt-to-income", "taxa de juro comissão"}
	var hits []Hit
	for _, s := range texts { // grow the buffers
		q.Set(s)
		hits = x.Score(&q, hits[:0])
		hits = x.ScoreTop(&q, 5, hits[:0])
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, s := range texts {
			q.Set(s)
			hits = x.Score(&q, hits[:0])
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run of three queries, want 0", allocs)
	}
	allocs = testing.AllocsPerRun(100, func() {
		for _, s := range texts {
			q.Set(s)
			if hits = x.ScoreTop(&q, 5, hits[:0]); len(hits) == 0 {
				t.Fatalf("no hits for %q", s)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run of three queries with ScoreTop, want 0", allocs)
	}
	var s Scan
	docs := []Doc{Analyze("fee paint"), Analyze("dog")}
	allocs = testing.AllocsPerRun(100, func() {
		s.Reset(&q)
		for i := range docs {
			s.Count(&docs[i])
		}
		for i := range docs {
			s.Relevance(&docs[i])
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per scan, want 0", allocs)
	}
}

// TestCloneIsApart: a clone scores as its original, and from then on
// the two change apart: each still matches a scan of its own documents
// after adds and removes (compactions among them) to either.
func TestCloneIsApart(t *testing.T) {
	defer ReadInRuns()() // the lists' runs are copied too (prune.go)
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 11))
		a := model{live: make(map[Handle]Doc)}
		var handles []Handle
		for range 150 {
			d := Analyze(randomText(r))
			h := a.x.Add(d)
			a.live[h] = d
			handles = append(handles, h)
		}
		for _, h := range handles[:40] {
			a.x.Remove(h)
			delete(a.live, h)
		}
		handles = handles[40:]
		q0 := randomQuery(r)
		a.check(t, q0)           // a query's scratch in the original
		a.x.ScoreTop(q0, 3, nil) // and its lists' runs
		b := model{x: a.x.Clone(), live: maps.Clone(a.live)}
		if len(a.x.groups) == 0 {
			t.Fatalf("seed %d: no list in runs", seed)
		}
		for li, g := range a.x.groups {
			if h := b.x.groups[li]; h == g || len(g.runs) > 0 && &h.runs[0] == &g.runs[0] {
				t.Fatalf("seed %d: list %d's runs shared with the clone", seed, li)
			}
		}
		q := randomQuery(r)
		a.check(t, q)
		b.check(t, q)
		// Change each apart: the original loses documents, the clone gains.
		for _, h := range handles[:60] {
			a.x.Remove(h)
			delete(a.live, h)
		}
		for range 60 {
			d := Analyze(randomText(r))
			h := b.x.Add(d)
			b.live[h] = d
		}
		for range 5 {
			q := randomQuery(r)
			a.check(t, q)
			b.check(t, q)
			for _, m := range []*model{&a, &b} {
				if msg := checkTop(m.x.Score(q, nil), m.x.ScoreTop(q, 3, nil), 3); msg != "" {
					t.Fatalf("seed %d: ScoreTop in runs: %s", seed, msg)
				}
			}
		}
	}
}
