package assemble

import (
	"fmt"

	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// The budget pass: while the estimate of the whole text (the sum of the
// counts of its parts) exceeds the budget, the lowest-ranked block of the
// least important section goes (cutter.next), after the chance to stay
// degraded (degradeOnBudget, degradeRequired). The writing pass then
// renders the text and goes on with the same cut until the text's exact
// count fits (write.go).
//
// In a section that follows its previous decision, when the cut drops a
// block that decision wrote while a block new to it is in the section,
// the section sheds: once the estimate fits, it keeps dropping the
// lowest-ranked blocks the previous decision wrote until its sum is at
// most slack times what it was (reason slack), so the next calls have
// room to append.

// cutter is the budget pass's state: the estimate and where the cut
// stands, which the writing pass goes on with.
type cutter struct {
	a        *Assembler
	r        *run
	budget   int
	estimate int
	cursor   dropCursor
}

// budgetCut cuts whole blocks until the estimate fits the budget, lets
// sections that the cut made shed, and gives summaries a chance to stand
// in for turns in the room left. It returns the cut, for the writing pass.
func (a *Assembler) budgetCut(r *run) cutter {
	tpl, c, blocks := r.tpl, r.c, a.view(r.blocks)
	n := tpl.NumSections()
	a.join = c.Count("\n")
	k := cutter{a: a, r: r, budget: r.blockBudget(), cursor: dropCursor{k: n - 1, j: -2}}
	k.estimate = c.Count(tpl.Header()+"\n") + a.chatFixed(c)
	for si := range n {
		k.estimate += a.sectionTokens(tpl, si)
	}
	for k.estimate > k.budget && k.next() {
	}
	for si := range n {
		if a.secs[si].sticky.on && a.secs[si].sticky.budget {
			// Only a shed the cut started: one the fill made is done.
			before := a.sectionTokens(tpl, si)
			a.shed(tpl.Section(si), si, int(r.stick.Slack*float64(a.secs[si].used+a.secs[si].msgs)), blocks, r.out)
			k.estimate -= before - a.sectionTokens(tpl, si)
		}
	}
	if a.standInAll(k.budget, &k.estimate, blocks, r.out, c) {
		k.cursor = dropCursor{k: n - 1, j: -2}
	}
	return k
}

// next takes the next block of the cut out of the text (or writes it, or
// a required block, smaller), and reports false when nothing is left to
// take.
func (k *cutter) next() bool {
	a, tpl, c, out := k.a, k.r.tpl, k.r.c, k.r.out
	blocks := a.view(k.r.blocks)
	si, j, ok := k.cursor.next(tpl, a.secs)
	if !ok {
		return a.degradeRequired(tpl, k.budget, &k.estimate, blocks, c)
	}
	if a.degradeOnBudget(tpl, si, j, k.budget, &k.estimate, &k.cursor, blocks, out, c) {
		return true
	}
	before := a.sectionTokens(tpl, si) // while the block still counts
	sec := tpl.Section(si)
	if cd := &a.secs[si].cands[j]; a.secs[si].sticky.on && cd.inc && !cd.prevRecall && !a.secs[si].sticky.shed && a.hasEntrants(si) {
		a.secs[si].sticky.shed, a.secs[si].sticky.budget = true, true
	}
	if u := a.unitOfCand(&a.secs[si].cands[j]); u != nil {
		for _, m := range u.cands {
			if a.secs[si].cands[m].inText() {
				a.dropBlock(sec, si, m, outcome.ReasonGroup, blocks, out)
			}
		}
	} else {
		a.dropBlock(sec, si, j, outcome.ReasonBudget, blocks, out)
	}
	k.estimate -= before - a.sectionTokens(tpl, si)
	return true
}

// sectionTokens returns what section si adds to the total: its text (a
// section not in line mode ends with a newline of its own) and its
// messages.
func (a *Assembler) sectionTokens(tpl *template.Template, si int) int {
	if a.secs[si].kept == 0 {
		return a.secs[si].msgs
	}
	if lineMode(tpl.Section(si)) {
		return a.secs[si].used + a.secs[si].msgs
	}
	return a.secs[si].used + a.join + a.secs[si].msgs
}

// dropBlock drops the block at cands[si][j], kept or cut so far, for
// reason: it leaves the text (or the messages), with its event, and the
// section's sums lose its count and the separator it no longer needs.
func (a *Assembler) dropBlock(sec *template.Section, si, j int, reason outcome.Reason, blocks []*Block, out *Output) {
	cd := &a.secs[si].cands[j]
	cd.text, cd.rendered = "", false
	a.drop(sec, cd, blocks[cd.Index], reason, out)
	if cd.msg {
		a.secs[si].msgs -= cd.tokens
		return
	}
	a.secs[si].kept--
	switch {
	case a.secs[si].kept == 0:
		a.secs[si].used = 0
	default:
		a.secs[si].used -= cd.tokens + a.secs[si].sep
	}
}

// overBudget builds the error for required blocks that alone exceed the
// budget.
func (a *Assembler) overBudget(tpl *template.Template, budget int, c truncate.Counter, current map[int32]bool) error {
	var misses []truncate.RequiredMiss
	for si := range a.secs {
		for _, cd := range a.secs[si].cands {
			if cd.inText() && cd.Required {
				misses = append(misses, truncate.RequiredMiss{RequestID: cd.ID, Section: tpl.Section(si).Name(), Tokens: cd.tokens, Limit: budget, Reason: outcome.ReasonBudget,
					Current: current[cd.Index]})
			}
		}
	}
	if len(misses) == 0 {
		return fmt.Errorf("%w: the protocol header alone takes %d tokens, more than the budget of %d",
			truncate.ErrBudgetTooSmall, c.Count(tpl.Header()), budget)
	}
	return &truncate.RequiredError{Misses: misses}
}

// dropCursor walks blocks in budget-cut order: sections from the least
// important, blocks from the lowest-ranked, skipping required blocks and
// blocks not in the text.
type dropCursor struct{ k, j int }

func (d *dropCursor) next(tpl *template.Template, secs []section) (si, j int, ok bool) {
	for d.k >= 0 {
		si = tpl.ByPriority(d.k)
		if d.j == -2 {
			d.j = len(secs[si].cands) - 1
		}
		for ; d.j >= 0; d.j-- {
			cd := &secs[si].cands[d.j]
			if cd.inText() && !cd.Required {
				j = d.j
				d.j--
				return si, j, true
			}
		}
		d.k--
		d.j = -2
	}
	return 0, 0, false
}
