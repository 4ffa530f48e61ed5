package lexical

import (
	"math"
	"strings"
	"testing"
)

// TestClassBounds: a posting's class bounds it (its highest frequency is
// at least the posting's, its least length at most its document's), and
// the bounds are of the class itself, so that a run's bound is as tight
// as its class allows.
func TestClassBounds(t *testing.T) {
	tfs := []uint16{1, 2, 3, 4, 5, 7, 8, 9, 100, 1000, 32767, 32768, math.MaxUint16}
	ns := []uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 15, 16, 23, 24, 25, 100, 1 << 20, 3 << 19, 1<<31 - 1, 1 << 31, 3 << 30, math.MaxUint32}
	for _, tf := range tfs {
		for _, n := range ns {
			c := classOf(tf, n)
			if c >= numClasses {
				t.Fatalf("tf %d, length %d: class %d of %d", tf, n, c, numClasses)
			}
			maxTF, minLen := classBounds(c)
			if maxTF < tf || minLen > n {
				t.Fatalf("tf %d, length %d: class %d bounds tf %d, length %d", tf, n, c, maxTF, minLen)
			}
			if classOf(maxTF, minLen) != c {
				t.Fatalf("tf %d, length %d: class %d's bounds (%d, %d) are of class %d", tf, n, c, maxTF, minLen, classOf(maxTF, minLen))
			}
		}
	}
}

// TestRemovalKeepsRuns: a removal leaves a stale posting where it was, so
// a list's runs stay; a compaction moves the postings, and drops them.
func TestRemovalKeepsRuns(t *testing.T) {
	defer ReadInRuns()()
	var x Index
	var hs []Handle
	for i := range 40 {
		hs = append(hs, x.Add(Analyze(strings.Repeat("fee ", 1+i%3)+"rate")))
	}
	q := NewQuery("fee")
	x.ScoreTop(q, 2, nil)
	li := x.lists[q.keys[0]]
	g := x.groups[li]
	if g == nil || g.n == 0 {
		t.Fatal("the list was not read in runs")
	}
	x.Remove(hs[0])
	if g.n == 0 {
		t.Fatal("a removal that compacted nothing dropped the runs")
	}
	for _, h := range hs[1 : len(hs)/2+1] { // more stale than live: compacted
		x.Remove(h)
	}
	if x.plists[li].dead != 0 || g.n != 0 {
		t.Fatalf("after a compaction (%d stale left) the runs stay (%d grouped)", x.plists[li].dead, g.n)
	}
}
