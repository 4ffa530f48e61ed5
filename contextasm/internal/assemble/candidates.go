package assemble

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// candidateReason reports whether a history block dropped for r is
// offered to the host for summarising: it was left out for room.
func candidateReason(r outcome.Reason) bool {
	switch r {
	case outcome.ReasonSectionCap, outcome.ReasonBudget, outcome.ReasonSlack, outcome.ReasonSticky, outcome.ReasonGroup:
		return true
	}
	return false
}

// summarizeCandidates lists, per section, the runs of consecutive history
// blocks (in time order) that were dropped for room and that nothing in
// the text stands for: a block in the text ends a run, and so does the
// border between blocks the previous decision wrote and blocks it did
// not (each batch a section sheds is a run of its own). Runs are found
// from the newest block back, until they hold the section's max_tokens;
// a group's members are never split between runs. A block an eligible
// summary names is never offered (the host summarised it already); that
// summary is, when it was left out for room.
func (a *Assembler) summarizeCandidates(tpl *template.Template, blocks []*Block, out *Output, c truncate.Counter) {
	for si := range a.secs {
		sec := tpl.Section(si)
		hist := a.historyInTime(si, blocks)
		if len(hist) == 0 {
			continue
		}
		runs := a.dropRuns(sec, hist, blocks, c)
		cands := a.secs[si].cands
		runs = mergeUnitRuns(cands, hist, runs)
		slices.Reverse(runs)
		for _, r := range runs {
			slices.Sort(r.at)
			sc := outcome.SummarizeCandidate{Section: sec.Name(), Tokens: r.tokens}
			for _, k := range r.at {
				sc.IDs = append(sc.IDs, cands[hist[k]].ID)
			}
			first, last := &cands[hist[r.at[0]]], &cands[hist[r.at[len(r.at)-1]]]
			if t, _ := a.placeOf(first, blocks[first.Index]); !t.IsZero() {
				sc.From = t.UTC().Format(time.RFC3339Nano)
			}
			if t, _ := a.placeOf(last, blocks[last.Index]); !t.IsZero() {
				sc.To = t.UTC().Format(time.RFC3339Nano)
			}
			out.SummarizeCandidates = append(out.SummarizeCandidates, sc)
		}
	}
}

// historyInTime returns the positions of section si's history candidates
// in time order (placeOf), then declaration, then request_id.
func (a *Assembler) historyInTime(si int, blocks []*Block) []int {
	cands := a.secs[si].cands
	var hist []int
	for i := range cands {
		if blocks[cands[i].Index].Type == declare.History {
			hist = append(hist, i)
		}
	}
	if len(hist) == 0 {
		return nil
	}
	// Each candidate's place looked up once, not at every comparison,
	// and as an integer when every one is one.
	keys := slices.Grow(a.histKeys[:0], len(hist))
	exact := true
	for _, i := range hist {
		t, seq := a.placeOf(&cands[i], blocks[cands[i].Index])
		k := histKey{t: t, seq: seq, id: cands[i].ID, i: i}
		switch {
		case t.IsZero():
			k.ns = math.MinInt64
		case inNanos(t):
			k.ns = t.UnixNano()
		default:
			exact = false
		}
		keys = append(keys, k)
	}
	if exact {
		// Radix-sorted by time as rank keys, not compared as histKeys:
		// declaration and id only break ties of time.
		rk := a.keys[:0]
		for k := range keys {
			rk = append(rk, rankKey{score: uint64(keys[k].ns) ^ 1<<63, index: uint32(k), req: 1})
		}
		rk = a.sortRankKeys(rk)
		sortKeyTies(rk, func(x, y rankKey) int {
			if c := cmp.Compare(keys[x.index].seq, keys[y.index].seq); c != 0 {
				return c
			}
			return strings.Compare(keys[x.index].id, keys[y.index].id)
		})
		for k := range rk {
			hist[k] = keys[rk[k].index].i
		}
		a.keys = rk[:0]
	} else {
		slices.SortFunc(keys, func(x, y histKey) int {
			if c := x.t.Compare(y.t); c != 0 {
				return c
			}
			if c := cmp.Compare(x.seq, y.seq); c != 0 {
				return c
			}
			return strings.Compare(x.id, y.id) // cmp.Or would compare the ids every time
		})
		for k := range keys {
			hist[k] = keys[k].i
		}
	}
	clear(keys)
	a.histKeys = keys[:0]
	return hist
}

// dropRun is a run of history dropped for room: positions in hist, their
// tokens, and whether the previous decision wrote them.
type dropRun struct {
	at     []int
	tokens int
	inc    bool
}

// dropRuns finds the runs of history dropped for room, from the newest
// block back, until they hold the section's max_tokens. A block in the
// text ends a run, and so does the border between blocks the previous
// decision wrote and blocks it did not.
func (a *Assembler) dropRuns(sec *template.Section, hist []int, blocks []*Block, c truncate.Counter) []dropRun {
	cands := a.secs[sec.Index()].cands
	var runs []dropRun
	open, total := false, 0
	for k := len(hist) - 1; k >= 0 && total < sec.MaxTokens(); k-- {
		cd := &cands[hist[k]]
		if a.deg.summarised[cd.ID] && !cd.inText() {
			continue // a summary stands for it already: offered is the summary, if anything
		}
		if cd.inText() || !candidateReason(cd.reason) {
			open = false // in the text, stood for by a summary, or not left out for room
			continue
		}
		if open && runs[len(runs)-1].inc != cd.inc {
			open = false
		}
		if !open {
			runs = append(runs, dropRun{inc: cd.inc})
			open = true
		}
		n := a.wholeTokens(sec, blocks[cd.Index], cd, c)
		total += n
		runs[len(runs)-1].tokens += n
		runs[len(runs)-1].at = append(runs[len(runs)-1].at, k)
	}
	return runs
}

// mergeUnitRuns merges the runs that share a unit: a group's members are
// never split between runs.
func mergeUnitRuns(cands []candidate, hist []int, runs []dropRun) []dropRun {
	for x := 0; x < len(runs); x++ {
		for y := x + 1; y < len(runs); y++ {
			if sharesUnit(cands, hist, runs[x].at, runs[y].at) {
				runs[x].at = append(runs[x].at, runs[y].at...)
				runs[x].tokens += runs[y].tokens
				runs = slices.Delete(runs, y, y+1)
				y = x
			}
		}
	}
	return runs
}

// wholeTokens returns cd's count written whole (not as a variant or
// clipped), counting it when the fill did not, and leaving cd as it was:
// what a run of summarize candidates holds.
func (a *Assembler) wholeTokens(sec *template.Section, b *Block, cd *candidate, c truncate.Counter) int {
	if cd.tokens != 0 && cd.form == 0 {
		return cd.tokens
	}
	saved := saveForm(cd)
	setForm(cd, 0)
	a.blockTokens(sec, b, cd, c)
	n := cd.tokens
	saved.restore(cd)
	return n
}

// histKey is a history candidate's place in time order (placeOf), and
// its position i in the section's candidates.
type histKey struct {
	ns  int64 // t in Unix nanoseconds (math.MinInt64 for the zero time), when exact
	t   time.Time
	seq int64
	id  string
	i   int
}

// sharesUnit reports whether two runs (positions in hist) hold members of
// one unit.
func sharesUnit(cands []candidate, hist, x, y []int) bool {
	for _, i := range x {
		u := cands[hist[i]].unit
		if u == 0 {
			continue
		}
		for _, j := range y {
			if cands[hist[j]].unit == u {
				return true
			}
		}
	}
	return false
}
