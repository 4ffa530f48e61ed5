package assemble

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/declare"
)

// splitTied keeps the keep smallest request_ids, whatever their number
// and order (a heap when few of many are kept, a sort else), and leaves
// out every other one.
func TestSplitTiedKeepsTheSmallest(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for trial := range 2000 {
		n := r.IntN(300)
		tied := make([]relCand, n)
		for i, k := range r.Perm(n) {
			tied[i] = relCand{id: fmt.Sprintf("b%0*d", 1+r.IntN(3), k), j: int32(k)} // ids of different lengths
		}
		keep := 0
		if n > 0 {
			keep = r.IntN(n + 1)
		}
		want := slices.Clone(tied)
		slices.SortFunc(want, func(a, b relCand) int { return strings.Compare(a.id, b.id) })
		kept, left := splitTied(tied, keep)
		kept = slices.Clone(kept)
		slices.SortFunc(kept, func(a, b relCand) int { return strings.Compare(a.id, b.id) })
		if !slices.Equal(kept, want[:keep]) {
			t.Fatalf("trial %d (%d tied, keep %d): kept %v, want %v", trial, n, keep, kept, want[:keep])
		}
		left = slices.Clone(left)
		slices.SortFunc(left, func(a, b relCand) int { return strings.Compare(a.id, b.id) })
		if !slices.Equal(left, want[keep:]) {
			t.Fatalf("trial %d (%d tied, keep %d): left %v, want %v", trial, n, keep, left, want[keep:])
		}
	}
}

// historyInTime orders history by last_modified, declaration and
// request_id, whether every time is in Unix nanoseconds' range (compared
// as integers) or not (the zero time, years before 1700 and after 2250
// among them), as time.Time.Compare orders them.
func TestHistoryInTimeOrdersTimes(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 3))
	base := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	for trial := range 500 {
		n := 1 + r.IntN(40)
		var blocks []*Block
		var a Assembler
		a.secs = make([]section, 1)
		for i := range n {
			var lm time.Time
			switch k := r.IntN(10); {
			case k == 0 && trial%2 == 0:
				lm = time.Time{}
			case k == 1 && trial%3 == 0:
				lm = time.Date(2400+r.IntN(3), 1, 1, 0, 0, 0, 0, time.UTC)
			case k == 2 && trial%3 == 0:
				lm = time.Date(1600, 1, 1, 0, 0, r.IntN(3), 0, time.UTC)
			case k == 3:
				lm = time.Date(1800, 1, 1, 0, 0, r.IntN(3), 0, time.UTC) // before 1970: negative nanoseconds
			default:
				lm = base.Add(time.Duration(r.IntN(5)) * time.Second)
			}
			b := &Block{ID: fmt.Sprintf("h%03d", r.IntN(1000)), Type: declare.History, LastModified: lm, Seq: int64(r.IntN(3))}
			blocks = append(blocks, b)
			a.secs[0].cands = append(a.secs[0].cands, candidate{Ranked: Ranked{Index: int32(i), ID: b.ID}})
		}
		got := a.historyInTime(0, blocks)
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		slices.SortFunc(want, func(x, y int) int {
			p, q := blocks[x], blocks[y]
			if c := p.LastModified.Compare(q.LastModified); c != 0 {
				return c
			}
			if c := cmp.Compare(p.Seq, q.Seq); c != 0 {
				return c
			}
			return strings.Compare(p.ID, q.ID)
		})
		for k := range want {
			if blocks[got[k]] != blocks[want[k]] && (blocks[got[k]].ID != blocks[want[k]].ID || !blocks[got[k]].LastModified.Equal(blocks[want[k]].LastModified) || blocks[got[k]].Seq != blocks[want[k]].Seq) {
				t.Fatalf("trial %d: at %d, %v, want %v", trial, k, blocks[got[k]], blocks[want[k]])
			}
		}
	}
}
