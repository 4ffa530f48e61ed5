package assemble

import (
	"maps"
	"strconv"
	"strings"

	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// Degrading before dropping (docs/degrade.md). A block may be written in
// one of several forms: its content (form 0) or one of its variants
// (form k is variants[k-1]), each clipped to max_tokens when it has one.
// A summary (a history block with replaces) stands in for the turns it
// replaces, with their groups, when some of them must go: a replacement.
// A block superseded by an eligible block is excluded before ranking.
//
// Degradation takes part in the decision where dropping would: a block
// that does not fit its section whole is written as the richest smaller
// form that fits; the budget cut writes a block in the richest smaller
// form that brings the estimate within budget before it drops it, and
// lets a summary stand in for its turns before it drops one of them. An
// assembly that had a form or a summary to weigh is then made again as if
// no block had either (plain), and the plain one is taken when it
// represents more blocks: degrading never leaves the model with less than
// dropping alone would.

// degradeState is one assembly's degradation state.
type degradeState struct {
	plain   bool // assemble as if no block had variants or replaced turns
	weighed bool // a summary or a smaller form took part: compare with plain
	tpl     *template.Template
	ctr     truncate.Counter
	// superseded maps a block's index to the request_id of the newest
	// eligible block superseding it.
	superseded map[int32]string
	// summarised holds the ids an eligible summary names (used or not):
	// they are not offered for summarising again. borrowed: it is an
	// Index's (replPlan.summarised), only read.
	summarised map[string]bool
	borrowed   bool
	repls      []repl
	replOf     map[int32]int32 // block index → its replacement in repls
}

// reset readies the state for an assembly.
func (d *degradeState) reset(tpl *template.Template, c truncate.Counter, plain bool) {
	d.plain, d.weighed, d.tpl, d.ctr = plain, false, tpl, c
	clear(d.superseded)
	if d.borrowed {
		d.summarised, d.borrowed = nil, false
	}
	clear(d.summarised)
	d.repls = d.repls[:0]
	clear(d.replOf)
}

// borrowSummarised adds the ids m holds to summarised, borrowing m when
// nothing else is there.
func (d *degradeState) borrowSummarised(m map[string]bool) {
	switch {
	case len(d.summarised) == 0:
		d.summarised, d.borrowed = m, true
	case d.borrowed:
		d.summarised, d.borrowed = maps.Clone(d.summarised), false
		fallthrough
	default:
		maps.Copy(d.summarised, m)
	}
}

// memoOf is what MemoKey.Of says of form f of a block and, with a tag
// other than 0, of a figure other than its count.
func memoOf(f int8, tag byte) uint16 { return uint16(uint8(f)) | uint16(tag)<<8 }

// content returns the text of b's form f as written: the content or a
// variant, clipped to max_tokens with its marker, and how many tokens the
// clip left out (0 when it did not clip).
func (a *Assembler) content(sec *template.Section, b *Block, f int8) (string, int) {
	if f == formCleared {
		return a.placeholder(b, a.clearedTokens(sec, b)), 0
	}
	s := b.Content
	if f > 0 {
		s = b.Variants()[f-1]
	}
	limit := clipOf(sec, b)
	if limit <= 0 {
		return s, 0
	}
	var kn, kl MemoKey
	if a.Memo != nil && b.Key != ([16]byte{}) {
		kn = MemoKey{Block: b.Key, Section: sec.Key(), Of: memoOf(f, 0xC1)}
		kl = MemoKey{Block: b.Key, Section: sec.Key(), Of: memoOf(f, 0xC2)}
		n, ok1 := a.Memo.Get(kn)
		left, ok2 := a.Memo.Get(kl)
		if ok1 && ok2 && n <= len(s) {
			return clipped(s, n, left)
		}
	}
	c := a.deg.ctr
	n, left := len(s), 0
	if total := c.Count(s); total > limit {
		part := c.Cut(s, limit)
		if !strings.HasPrefix(s, part) { // a Counter's contract; never write what it broke
			part = ""
		}
		n, left = len(part), max(1, total-c.Count(part))
	}
	if kn != (MemoKey{}) {
		a.Memo.Add(kn, n)
		a.Memo.Add(kl, left)
	}
	return clipped(s, n, left)
}

// clipOf returns what b's content is clipped to in section sec, in
// tokens (0: not clipped): its own max_tokens, else, for a tool result,
// the section's tool_result_max_tokens.
func clipOf(sec *template.Section, b *Block) int {
	if n := b.MaxTokens(); n > 0 || b.ToolCallID() == "" {
		return n
	}
	return sec.ToolResultMaxTokens()
}

// clipped returns s cut to n bytes and marked with how many tokens were
// left out, or s itself when nothing was.
func clipped(s string, n, left int) (string, int) {
	if left == 0 {
		return s, 0
	}
	return s[:n] + ClipMarker(left), left
}

// ClipMarker is what follows a content clipped to its max_tokens: a line
// saying how many tokens were left out.
func ClipMarker(left int) string {
	return "\n[clipped: " + strconv.Itoa(left) + " tokens left out]"
}

// setForm makes cd be written in form f, to be counted and rendered anew.
func setForm(cd *candidate, f int8) {
	if cd.form == f {
		return
	}
	cd.form = f
	cd.text, cd.rendered, cd.escaped, cd.tokens = "", false, false, 0
}

// formSave is what setForm and counting change of a candidate.
type formSave struct {
	form              int8
	text              string
	rendered, escaped bool
	tokens            int
}

func saveForm(cd *candidate) formSave {
	return formSave{cd.form, cd.text, cd.rendered, cd.escaped, cd.tokens}
}

func (s formSave) restore(cd *candidate) {
	cd.form, cd.text, cd.rendered, cd.escaped, cd.tokens = s.form, s.text, s.rendered, s.escaped, s.tokens
}

// degrade writes cd, which does not fit room in its form, as the richest
// of its smaller forms that does, and reports whether one did. A required
// block degrades only in a section that allows it.
func (a *Assembler) degrade(sec *template.Section, b *Block, cd *candidate, room int, c truncate.Counter) bool {
	if a.deg.plain || cd.form < 0 || int(cd.form) >= len(b.Variants()) || (cd.Required && !sec.DegradeRequired()) {
		return false
	}
	saved := saveForm(cd)
	for f := cd.form + 1; int(f) <= len(b.Variants()); f++ {
		setForm(cd, f)
		a.blockTokens(sec, b, cd, c)
		if cd.tokens <= room {
			a.deg.weighed = true
			return true
		}
	}
	saved.restore(cd)
	return false
}

// degradeUnit writes the members of a unit that does not fit whole in
// smaller forms, level by level (at level L each member takes its L-th
// variant, or its last), until need, which counts the unit as its
// members stand, fits room. It reports whether a level did; otherwise the
// members are as they were.
func (a *Assembler) degradeUnit(sec *template.Section, blocks []*Block, u *unit, room int, need func() int, c truncate.Counter) bool {
	if a.deg.plain || (u.required && !sec.DegradeRequired()) {
		return false
	}
	cands := a.secs[sec.Index()].cands
	levels := 0
	for _, j := range u.cands {
		levels = max(levels, len(blocks[cands[j].Index].Variants()))
	}
	if levels == 0 {
		return false
	}
	saved := make([]formSave, len(u.cands))
	for k, j := range u.cands {
		saved[k] = saveForm(&cands[j])
	}
	for l := 1; l <= levels; l++ {
		for _, j := range u.cands {
			cd := &cands[j]
			if cd.form == formCleared {
				continue // smaller than any variant
			}
			setForm(cd, int8(min(l, len(blocks[cd.Index].Variants()))))
			a.blockTokens(sec, blocks[cd.Index], cd, c)
		}
		if need() <= room {
			a.deg.weighed = true
			return true
		}
	}
	for k, j := range u.cands {
		saved[k].restore(&cands[j])
	}
	return false
}

// sectionSum is what a section adds to the total with the given sums, as
// sectionTokens counts it.
func (a *Assembler) sectionSum(sec *template.Section, used, kept, msgs int) int {
	switch {
	case kept == 0:
		return msgs
	case lineMode(sec):
		return used + msgs
	}
	return used + a.join + msgs
}

// addBlock puts cands[si][j] into the section's sums, as the last block
// of its text.
func (a *Assembler) addBlock(si int, cd *candidate) {
	if cd.msg {
		a.secs[si].msgs += cd.tokens
		return
	}
	if a.secs[si].kept > 0 {
		a.secs[si].used += a.secs[si].sep
	}
	a.secs[si].used += cd.tokens
	a.secs[si].kept++
}

// resized counts cd, in section si's text or messages, delta tokens
// larger than it was (smaller, for a degraded block), and moves the
// estimate by what the section's total moved from before.
func (a *Assembler) resized(tpl *template.Template, si int, cd *candidate, delta, before int, estimate *int) {
	if cd.msg {
		a.secs[si].msgs += delta
	} else {
		a.secs[si].used += delta
	}
	*estimate -= before - a.sectionTokens(tpl, si)
}

// degradeOnBudget is the budget cut's "degrade before dropping", for the
// block it would drop next, cands[si][j]: a turn's summary stands in for
// its turns when that lowers the estimate (and the cut starts over); a
// block with smaller forms is written as the richest that brings the
// estimate within budget, or, when it is already degraded, as the next
// smaller one (and the cut comes back to it). It reports whether the
// block stays.
func (a *Assembler) degradeOnBudget(tpl *template.Template, si, j, budget int, estimate *int, cursor *dropCursor, blocks []*Block, out *Output, c truncate.Counter) bool {
	if a.deg.plain {
		return false
	}
	cd := &a.secs[si].cands[j]
	if r := a.replOfCand(cd); r != nil && !cd.summary {
		if a.standIn(r, budget, estimate, blocks, out, c, false) {
			*cursor = dropCursor{k: tpl.NumSections() - 1, j: -2}
			return true
		}
		return false
	}
	b := blocks[cd.Index]
	if cd.unit != 0 || cd.status != outcome.StatusKept || int(cd.form) >= len(b.Variants()) || cd.Required {
		return false
	}
	sec := tpl.Section(si)
	before := a.sectionTokens(tpl, si)
	saved := saveForm(cd)
	again := cd.form > 0
	for f := cd.form + 1; int(f) <= len(b.Variants()); f++ {
		setForm(cd, f)
		a.blockTokens(sec, b, cd, c)
		delta := cd.tokens - saved.tokens
		if delta >= 0 || !again && *estimate+delta > budget {
			continue
		}
		a.resized(tpl, si, cd, delta, before, estimate)
		cursor.j = j // back to it, should the text still not fit
		a.deg.weighed = true
		return true
	}
	saved.restore(cd)
	return false
}

// degradeRequired writes one required block of a section that allows it
// (the least important section first, the lowest-ranked block first) in
// a smaller form: the richest that brings the estimate within budget,
// else its smallest. It reports whether it did; the budget cut calls it
// once nothing is left to drop.
func (a *Assembler) degradeRequired(tpl *template.Template, budget int, estimate *int, blocks []*Block, c truncate.Counter) bool {
	if a.deg.plain {
		return false
	}
	for k := tpl.NumSections() - 1; k >= 0; k-- {
		si := tpl.ByPriority(k)
		sec := tpl.Section(si)
		if !sec.DegradeRequired() {
			continue
		}
		for j := len(a.secs[si].cands) - 1; j >= 0; j-- {
			cd := &a.secs[si].cands[j]
			b := blocks[cd.Index]
			if !cd.Required || cd.status != outcome.StatusKept || cd.unit != 0 || int(cd.form) >= len(b.Variants()) {
				continue
			}
			before := a.sectionTokens(tpl, si)
			saved := saveForm(cd)
			best := saveForm(cd)
			for f := cd.form + 1; int(f) <= len(b.Variants()); f++ {
				setForm(cd, f)
				a.blockTokens(sec, b, cd, c)
				if cd.tokens < best.tokens {
					best = saveForm(cd)
					if *estimate+cd.tokens-saved.tokens <= budget {
						break
					}
				}
			}
			best.restore(cd)
			if cd.form == saved.form {
				saved.restore(cd)
				continue
			}
			a.resized(tpl, si, cd, cd.tokens-saved.tokens, before, estimate)
			a.deg.weighed = true
			return true
		}
	}
	return false
}

// degradeNotices appends cd's degraded and clipped notices, when it is in
// the text in a variant or clipped.
func (a *Assembler) degradeNotices(sec *template.Section, cd *candidate, b *Block, out *Output) {
	if !cd.inText() {
		return
	}
	if cd.form > 0 {
		out.Events = append(out.Events, outcome.Event{Kind: outcome.KindNotice, Section: sec.Name(), RequestID: cd.ID, Reason: outcome.ReasonDegraded, Variant: int(cd.form)})
	}
	if clipOf(sec, b) > 0 {
		if _, left := a.content(sec, b, cd.form); left > 0 {
			out.Events = append(out.Events, outcome.Event{Kind: outcome.KindNotice, Section: sec.Name(), RequestID: cd.ID, Reason: outcome.ReasonClipped, Tokens: left})
		}
	}
}
