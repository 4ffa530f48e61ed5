package assemble_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/truncate"
)

// summaryHistory returns runs of ten turns, each with a summary naming
// its turns and, when chained, the summary before it: what a host
// declares summarising every run it was told of.
func summaryHistory(runs int, chained bool) []assemble.Block {
	var blocks []assemble.Block
	for r := range runs {
		var ids []string
		for k := range 10 {
			id := fmt.Sprintf("t%04d-%d", r, k)
			blocks = append(blocks, turnAt(id, 6, 100000-r*11-k))
			ids = append(ids, id)
		}
		if chained && r > 0 {
			ids = append(ids, fmt.Sprintf("s%04d", r-1))
		}
		blocks = append(blocks, summaryOf(fmt.Sprintf("s%04d", r), 5, 100000-r*11-10, ids...))
	}
	return blocks
}

// manySummariesTemplate has one history section in time order, room for
// about fifty turns.
const manySummariesTemplate = `{"budget": 8192, "sections": [
 {"name": "HISTORY", "priority": 1, "memory_types": ["history"], "max_tokens": 400, "render": "{content}", "order": "time", "fill": "stop"}]}`

// Many summaries: chained, each superseded by the newest, which stands
// for all of their turns; independent, none superseded. Every block is
// explained either way.
func TestManySummaries(t *testing.T) {
	tpl := mustParse(t, manySummariesTemplate)
	for _, chained := range []bool{true, false} {
		t.Run(fmt.Sprint("chained=", chained), func(t *testing.T) {
			const runs = 300
			out := mustAssemble(t, tpl, summaryHistory(runs, chained), assemble.Request{})
			checkExplained(t, out)
			newest := fmt.Sprintf("s%04d", runs-1)
			superseded := 0
			for r := range runs {
				for _, e := range eventsOf(out, fmt.Sprintf("s%04d", r)) {
					if e.Reason == outcome.ReasonSuperseded {
						superseded++
						if e.By != newest {
							t.Errorf("s%04d superseded by %s, want %s", r, e.By, newest)
						}
					}
				}
			}
			if want := map[bool]int{true: runs - 1, false: 0}[chained]; superseded != want {
				t.Errorf("%d summaries superseded, want %d", superseded, want)
			}
		})
	}
}

// BenchmarkManySummaries assembles a history of chained summaries: the
// cost grows with the blocks, not with their square (10× the runs, about
// 10× the time).
func BenchmarkManySummaries(b *testing.B) {
	for _, runs := range []int{100, 1000} {
		b.Run(fmt.Sprintf("summaries=%d", runs), func(b *testing.B) {
			tpl := mustParse(b, manySummariesTemplate)
			blocks := summaryHistory(runs, true)
			a := assemble.Assembler{}
			tok := realTokenizer(b)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Assemble(tpl, blocks, assemble.Request{}, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIndexedSummaries is one call at a clock moving a second a
// call, on a history of runs of turns each with its summary (chained:
// each naming the one before too, the worst case: the newest stands for
// every turn), in the OpenAI format: from scratch (full) and from an
// Index kept at the clock (indexed), which must give the same text.
func BenchmarkIndexedSummaries(b *testing.B) {
	for _, runs := range []int{200, 2000} {
		for _, chained := range []bool{false, true} {
			tpl := mustParse(b, manySummariesTemplate)
			var blocks []*assemble.Block
			for _, bl := range summaryHistory(runs, chained) {
				blocks = append(blocks, &bl)
			}
			slices.SortFunc(blocks, func(p, q *assemble.Block) int { return strings.Compare(p.ID, q.ID) })
			get := func(id string) (*assemble.Block, bool) {
				i, ok := slices.BinarySearchFunc(blocks, id, func(x *assemble.Block, id string) int { return strings.Compare(x.ID, id) })
				if !ok {
					return nil, false
				}
				return blocks[i], true
			}
			tok := &memoCounter{Counter: realTokenizer(b), counts: map[string]int{}}
			req := assemble.Request{Chat: assemble.ChatCost{Format: chat.FormatOpenAI, PerMessage: 3, Reply: 3}}
			name := fmt.Sprintf("blocks=%d/chained=%v", len(blocks), chained)
			b.Run(name+"/full", func(b *testing.B) {
				a := assemble.Assembler{SortedByID: true}
				at := now
				for b.Loop() {
					at = at.Add(time.Second)
					req.Now = at
					if _, err := a.AssembleRefs(tpl, blocks, req, tok); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/indexed", func(b *testing.B) {
				a, full := assemble.Assembler{SortedByID: true}, assemble.Assembler{SortedByID: true}
				x := assemble.NewIndex(tpl, req, truncate.Scoring{})
				at := now
				x.Build(blocks, at)
				for b.Loop() {
					at = at.Add(time.Second)
					req.Now = at
					if !x.Serves(at) {
						x.Refresh(blocks, at)
					}
					out, _, ok, err := a.AssembleIndexed(x, req, tok, get)
					if !ok || err != nil {
						b.Fatalf("not served: %v", err)
					}
					if b.N == 1 {
						want, _ := full.AssembleRefs(tpl, blocks, req, tok)
						if want.Text != out.Text || !reflect.DeepEqual(want.Messages, out.Messages) {
							b.Fatal("the indexed assembly differs from the full one")
						}
					}
				}
			})
		}
	}
}
