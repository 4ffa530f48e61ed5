package assemble

import (
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// The fill pass: each section takes its candidates in the order the
// ranking pass left them (for a section that follows its previous
// decision, the sticky order of prepareSticky), under its max_tokens.
// There is one loop, fill, for every section and both policies (fresh,
// or following the previous decision); what a candidate is decides how
// it is taken:
//
//   - a replacement (a summary and the turns it replaces) is decided
//     whole when its summary or one of its turns comes up (fillRepl);
//   - a unit (a group, a tool call with its results) is kept or dropped
//     whole when its best-ranked member comes up (takeUnit);
//   - a required block is kept whatever it costs; one that does not fit
//     is a miss, and the assembly fails (takeRequired);
//   - an incumbent, a block the previous decision wrote, comes back as it
//     was written, cut where it was cut (takeIncumbent);
//   - every other block enters if it fits, else as a smaller form, else
//     cut to the room left, else it is dropped (takeBlock).
//
// Under fill "stop", the first candidate that does not fit ends the
// section: what follows is dropped without being counted.

// fillState is a section's running sums while it is filled.
type fillState struct {
	sums
	stopped, cutDone bool
	clearing         bool // older tool results are written cleared (clear.go)
}

// filler is the fill pass's state for one section: what the section is
// filled from and with, and its running sums.
type filler struct {
	a      *Assembler
	sec    *template.Section
	si     int
	blocks []*Block // the assembly's blocks; an incremental one's are pulled (see view)
	c      truncate.Counter
	out    *Output
	misses []truncate.RequiredMiss
	// current holds the chat's current turn's block indexes (run.current).
	current map[int32]bool
	bounded bool // c promises lower bounds (truncate.LowerBounded)
	st      fillState
	// entrants counts the blocks in the text that the previous decision
	// did not write: when they take an incumbent's room, the section sheds.
	entrants int
}

// fillSection is the fill pass for section si: it takes the section's
// candidates in order, and adds a miss for each required block that does
// not fit. The policy is the section's: fresh, or following its previous
// decision (a.secs[si].sticky, set by the ranking pass).
func (a *Assembler) fillSection(r *run, si int) {
	sec := r.tpl.Section(si)
	f := filler{a: a, sec: sec, si: si, blocks: r.blocks, c: r.c, out: r.out, misses: r.misses, current: r.current}
	c := r.c
	if !lineMode(sec) {
		f.st.sep = c.Count(sec.Separator())
	}
	lb, ok := c.(truncate.LowerBounded)
	f.bounded = ok && lb.LowerBounded()
	for i := 0; a.more(sec, i, &f.st, f.bounded, f.c); i++ {
		if cd := &a.secs[f.si].cands[i]; !cd.done {
			f.take(cd)
		}
	}
	if a.inc.w.lateInc && f.entrants > 0 {
		// An incremental fill that stopped never came to a unit that
		// would have shed (takeUnit): it sheds as that one would have.
		a.secs[f.si].sticky.shed = true
	}
	a.secs[f.si].sums = f.st.sums
	if a.secs[f.si].sticky.shed {
		a.shed(sec, f.si, int(r.stick.Slack*float64(sec.MaxTokens())), f.view(), r.out)
	}
	f.needOfMisses()
	r.misses = f.misses
}

// view returns the blocks candidates index (see Assembler.view).
func (f *filler) view() []*Block { return f.a.view(f.blocks) }

// block returns cd's block.
func (f *filler) block(cd *candidate) *Block { return f.view()[cd.Index] }

// cands returns the section's candidates (a pull may have grown them).
func (f *filler) cands() []candidate { return f.a.secs[f.si].cands }

// room returns what is left of the cap for cd, the separator it needs
// taken off.
func (f *filler) room(cd *candidate) int {
	return f.sec.MaxTokens() - f.st.used - f.st.msgs - f.st.sepBefore(cd)
}

// keep puts cd in the text (or the messages) with status, kept or cut.
func (f *filler) keep(cd *candidate, status outcome.Status) {
	cd.status = status
	f.st.add(cd)
	if !cd.inc {
		f.entrants++
	}
}

// drop leaves cd out for reason, with its event; it keeps only its count.
func (f *filler) drop(cd *candidate, reason outcome.Reason) {
	cd.text, cd.rendered = "", false
	f.a.drop(f.sec, cd, f.block(cd), reason, f.out)
}

// miss records that required cd does not fit the section's cap.
func (f *filler) miss(cd *candidate) {
	f.misses = append(f.misses, truncate.RequiredMiss{RequestID: cd.ID, Section: f.sec.Name(), Tokens: cd.tokens, Limit: f.sec.MaxTokens(), Reason: outcome.ReasonSectionCap,
		Current: f.current[cd.Index]})
}

// misfit ends the section under fill "stop".
func (f *filler) misfit() {
	if f.sec.Fill() == template.FillStop {
		f.st.stopped = true
	}
}

// take decides cd, by what it is.
func (f *filler) take(cd *candidate) {
	if r := f.a.replOfCand(cd); r != nil && r.state == replOpen && f.fillRepl(r, cd) {
		return
	}
	if u := f.a.unitOfCand(cd); u != nil {
		f.takeUnit(u)
		return
	}
	switch {
	case f.st.stopped && !cd.Required:
		f.drop(cd, outcome.ReasonSectionCap) // not counted: it cannot enter
	case cd.Required:
		f.takeRequired(cd)
	case cd.inc:
		f.takeIncumbent(cd)
	case f.belowFloor(cd):
		f.drop(cd, outcome.ReasonSlack) // let go when the section shed
	default:
		f.takeBlock(cd)
	}
}

// takeRequired keeps a required block, in a smaller form if its section
// allows and it does not fit whole, and records a miss if it still does
// not fit.
func (f *filler) takeRequired(cd *candidate) {
	b, room := f.block(cd), f.room(cd)
	f.a.blockTokens(f.sec, b, cd, f.c)
	if cd.tokens > room && !f.a.degrade(f.sec, b, cd, room, f.c) {
		f.miss(cd)
	}
	f.keep(cd, outcome.StatusKept)
}

// takeIncumbent brings back a block the previous decision wrote as it was
// written (cut where it was cut). When it no longer fits because blocks
// new to the section took its room, the section sheds (see shed) rather
// than cut it anew on every call that follows; otherwise it may be cut
// as any block.
func (f *filler) takeIncumbent(cd *candidate) {
	b, room := f.block(cd), f.room(cd)
	if cd.prevCut > 0 {
		f.a.recut(f.sec, b, cd, f.c)
	} else {
		f.a.blockTokens(f.sec, b, cd, f.c)
	}
	switch {
	case cd.tokens <= room && cd.prevCut > 0:
		cutEvent(f.sec, cd, b, f.out)
		f.keep(cd, outcome.StatusCut)
		f.st.cutDone = true
		return
	case cd.tokens <= room, f.a.degrade(f.sec, b, cd, room, f.c):
		f.keep(cd, outcome.StatusKept)
		return
	case f.entrants > 0 && !cd.prevRecall:
		f.a.secs[f.si].sticky.shed = true
		f.drop(cd, outcome.ReasonSectionCap)
	default:
		cd.prevCut = 0
		if !f.cut(cd, b, room) {
			f.drop(cd, outcome.ReasonSectionCap)
		}
	}
	f.misfit()
}

// takeBlock keeps a block if it fits, else writes it as its richest
// smaller form that does, else cuts it to the room left (once a section,
// when the section is partial), else drops it.
func (f *filler) takeBlock(cd *candidate) {
	b, room := f.block(cd), f.room(cd)
	// A block that cannot fit whatever its exact count (its lower bound
	// exceeds the room) is a misfit without being counted.
	uncounted := f.bounded && int(b.MinTokens) > room
	if !uncounted {
		f.a.blockTokens(f.sec, b, cd, f.c)
	}
	if !uncounted && cd.tokens <= room || f.a.degrade(f.sec, b, cd, room, f.c) {
		f.keep(cd, outcome.StatusKept)
		return
	}
	if !f.cut(cd, b, room) {
		f.drop(cd, outcome.ReasonSectionCap)
	}
	f.misfit()
}

// cut keeps cd cut to room, when the section is partial, has not cut a
// block yet, has not shed, and room is worth a cut.
func (f *filler) cut(cd *candidate, b *Block, room int) bool {
	if !f.sec.Partial() || f.st.cutDone || f.a.secs[f.si].sticky.shed || room < f.sec.MinPartialTokens() || !f.a.cutAny(f.sec, b, cd, room, f.c) {
		return false
	}
	cutEvent(f.sec, cd, b, f.out)
	f.keep(cd, outcome.StatusCut)
	f.st.cutDone = true
	return true
}

// belowFloor reports whether cd stays out because its section shed: it
// scores no higher than the best block the shed let go, and is not new.
func (f *filler) belowFloor(cd *candidate) bool {
	ss := &f.a.secs[f.si].sticky
	return ss.hasFloor && cd.Score <= ss.floor && !cd.news && !cd.recall
}

// takeUnit decides a unit when its best-ranked member comes up: it keeps
// every member if all fit the room left (or one is required), in smaller
// forms if need be, and drops every member otherwise. A unit is never
// cut. A section that shed lets a unit below its floor go; when new
// blocks took an incumbent unit's room, the section sheds.
func (f *filler) takeUnit(u *unit) {
	cands := f.cands()
	for _, j := range u.cands {
		cands[j].done = true
	}
	if f.a.belowFloor(f.si, u) {
		for _, j := range u.cands {
			f.drop(&cands[j], outcome.ReasonSlack) // let go when the section shed
		}
		return
	}
	if f.st.stopped && !u.required {
		for _, j := range u.cands {
			f.a.drop(f.sec, &cands[j], f.block(&cands[j]), outcome.ReasonGroup, f.out) // not counted: it cannot enter
		}
		f.shedFor(u)
		return
	}
	for _, j := range u.cands {
		f.a.blockTokens(f.sec, f.block(&cands[j]), &cands[j], f.c)
	}
	if f.st.clearing {
		f.a.clearUnit(f.sec, f.si, u, f.view()) // older than one that had to: cleared too
	}
	capTokens := f.sec.MaxTokens()
	fits := f.st.used+f.st.msgs+f.unitNeed(u) <= capTokens
	if !fits {
		fits = f.a.degradeUnit(f.sec, f.view(), u, capTokens-f.st.used-f.st.msgs, func() int { return f.unitNeed(u) }, f.c)
	}
	if on, _, _ := f.sec.ClearToolResults(); !fits && on && !f.st.clearing && !f.a.secs[f.si].sticky.on && f.a.clearUnit(f.sec, f.si, u, f.view()) > 0 {
		f.st.clearing = true // a fresh fill clears from here on (a sticky one when it sheds)
		fits = f.st.used+f.st.msgs+f.unitNeed(u) <= capTokens
	}
	if fits || u.required {
		for _, j := range u.cands {
			if !fits {
				f.miss(&cands[j])
			}
			f.keep(&cands[j], outcome.StatusKept)
		}
		return
	}
	for _, j := range u.cands {
		f.drop(&cands[j], outcome.ReasonGroup)
	}
	f.shedFor(u)
	f.misfit()
}

// shedFor makes the section shed when unit u, dropped, was written by the
// previous decision and blocks new to the section took its room, as for
// a lone incumbent.
func (f *filler) shedFor(u *unit) {
	if f.entrants == 0 {
		return
	}
	for _, j := range u.cands {
		if m := &f.cands()[j]; m.inc && !m.prevRecall {
			f.a.secs[f.si].sticky.shed = true
			return
		}
	}
}

// unitNeed returns what a unit's members, counted, take in the section as
// filled so far: their counts, and the separators their text blocks need.
func (f *filler) unitNeed(u *unit) int {
	cands := f.cands()
	need, texts := 0, 0
	for _, j := range u.cands {
		need += cands[j].tokens
		if !cands[j].msg {
			texts++
		}
	}
	if texts > 0 {
		need += (texts - 1) * f.st.sep
		if f.st.kept > 0 {
			need += f.st.sep
		}
	}
	return need
}

// needOfMisses gives the section's misses what its required blocks need
// together. Required blocks rank first, so they were kept first: what
// they need is the sum up to the last of them.
func (f *filler) needOfMisses() {
	n := len(f.misses)
	if n == 0 || f.misses[n-1].Section != f.sec.Name() || f.misses[n-1].Reason != outcome.ReasonSectionCap {
		return
	}
	need, placed := 0, 0
	for _, cd := range f.cands() {
		if cd.Required {
			if placed > 0 {
				need += f.st.sep
			}
			need += cd.tokens
			placed++
		}
	}
	for i := n - 1; i >= 0 && f.misses[i].Section == f.sec.Name() && f.misses[i].Reason == outcome.ReasonSectionCap; i-- {
		f.misses[i].Need = need
	}
}

// cutEvent gives cd, cut, its reason and event.
func cutEvent(sec *template.Section, cd *candidate, b *Block, out *Output) {
	cd.reason = outcome.ReasonCut
	out.Events = append(out.Events, outcome.Event{Kind: outcome.KindCut, Section: sec.Name(), RequestID: cd.ID, Reason: outcome.ReasonCut, Tokens: cd.tokens, Group: b.Group()})
}
