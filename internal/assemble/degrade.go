package assemble

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/contextasm/contextasm/declare"
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
	repls      []repl
	replOf     map[int32]int32 // block index → its replacement in repls
}

// reset readies the state for an assembly.
func (d *degradeState) reset(tpl *template.Template, c truncate.Counter, plain bool) {
	d.plain, d.weighed, d.tpl, d.ctr = plain, false, tpl, c
	clear(d.superseded)
	d.repls = d.repls[:0]
	clear(d.replOf)
}

// replState is how far a replacement is decided.
type replState uint8

const (
	replOpen      replState = iota // not decided yet
	replTurns                      // its turns were kept whole; the summary waits
	replOn                         // the summary stands in for its turns
	replDissolved                  // neither fitted whole: the turns are decided one by one
)

// repl is a summary and the turns it replaces in its section (with the
// groups they belong to): the summary stands in for all of them, or for
// none.
type repl struct {
	si       int
	summary  int32   // the summary's block index
	members  []int32 // the turns' block indices
	ids      int     // how many turns it stands for, present or not
	complete bool    // every id it names is a member
	unusable bool    // a member is required, and required blocks are never dropped
	wasOn    bool    // it stood in for its turns at some point
	state    replState
	sCand    int   // the summary's candidate, once bound
	mCands   []int // the members' candidates, once bound
	at       time.Time
	seq      int64 // the newest member's last_modified and declaration: where it is written
}

// replOfCand returns cd's replacement, or nil.
func (a *Assembler) replOfCand(cd *candidate) *repl {
	if cd.repl == 0 {
		return nil
	}
	return &a.deg.repls[cd.repl-1]
}

// formKey returns the memo key of b written in form f: b.Key for its
// content, a key of its own for each variant (b.Key covers them all).
func formKey(b *Block, f int8) [16]byte {
	k := b.Key
	if f > 0 && k != ([16]byte{}) {
		k[0] ^= byte(f)
		k[15] ^= 0xA7
	}
	return k
}

// tagKey derives a memo key for something else known about a form.
func tagKey(k [16]byte, tag byte) [16]byte {
	k[7] ^= tag
	k[8] ^= 0x3C
	return k
}

// content returns the text of b's form f as written: the content or a
// variant, clipped to max_tokens with its marker, and how many tokens the
// clip left out (0 when it did not clip).
func (a *Assembler) content(sec *template.Section, b *Block, f int8) (string, int) {
	s := b.Content
	if f > 0 {
		s = b.Variants[f-1]
	}
	if b.MaxTokens <= 0 {
		return s, 0
	}
	key := formKey(b, f)
	var kn, kl MemoKey
	if a.Memo != nil && key != ([16]byte{}) {
		kn = MemoKey{Block: tagKey(key, 0xC1), Section: sec.Key()}
		kl = MemoKey{Block: tagKey(key, 0xC2), Section: sec.Key()}
		n, ok1 := a.Memo.Get(kn)
		left, ok2 := a.Memo.Get(kl)
		if ok1 && ok2 && n <= len(s) {
			return clipped(s, n, left)
		}
	}
	c := a.deg.ctr
	n, left := len(s), 0
	if total := c.Count(s); total > b.MaxTokens {
		part := c.Cut(s, b.MaxTokens)
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
	if a.deg.plain || int(cd.form) >= len(b.Variants) || (cd.Required && !sec.DegradeRequired()) {
		return false
	}
	saved := saveForm(cd)
	for f := cd.form + 1; int(f) <= len(b.Variants); f++ {
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
	cands := a.cands[sec.Index()]
	levels := 0
	for _, j := range u.cands {
		levels = max(levels, len(blocks[cands[j].Index].Variants))
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
			setForm(cd, int8(min(l, len(blocks[cd.Index].Variants))))
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

// supersede finds the eligible blocks that an eligible block supersedes,
// each with the newest block of its chain: the one that supersedes it,
// directly or through others, and that nothing eligible supersedes (the
// smallest request_id among several).
func (a *Assembler) supersede(tpl *template.Template, blocks []*Block, req *Request, byID bool) {
	first := slices.IndexFunc(blocks, func(b *Block) bool { return len(b.Supersedes) > 0 })
	if first < 0 {
		return
	}
	var index map[string]int32
	find := func(id string) int32 {
		if byID {
			if i, ok := slices.BinarySearchFunc(blocks, id, func(b *Block, id string) int { return strings.Compare(b.ID, id) }); ok {
				return int32(i)
			}
			return -1
		}
		if index == nil {
			index = make(map[string]int32, len(blocks))
			for i, b := range blocks {
				index[b.ID] = int32(i)
			}
		}
		if i, ok := index[id]; ok {
			return i
		}
		return -1
	}
	newer := make(map[int32][]int32) // block → the eligible blocks superseding it
	for i := first; i < len(blocks); i++ {
		b := blocks[i]
		if len(b.Supersedes) == 0 {
			continue
		}
		if _, reason := eligibility(b, tpl, req); reason != "" {
			continue
		}
		for _, id := range b.Supersedes {
			if t := find(id); t >= 0 {
				newer[t] = append(newer[t], int32(i))
			}
		}
	}
	if len(newer) == 0 {
		return
	}
	newest := make(map[int32]string, len(newer))
	var resolve func(i int32) string
	resolve = func(i int32) string {
		ps, ok := newer[i]
		if !ok {
			return blocks[i].ID
		}
		if n, done := newest[i]; done {
			return n // "" while in progress: a cycle, which Declare refuses
		}
		newest[i] = ""
		best := ""
		for _, p := range ps {
			if n := resolve(p); n != "" && (best == "" || n < best) {
				best = n
			}
		}
		newest[i] = best
		return best
	}
	if a.deg.superseded == nil {
		a.deg.superseded = make(map[int32]string, len(newer))
	}
	for t := range newer {
		if n := resolve(t); n != "" {
			a.deg.superseded[t] = n
		}
	}
}

// lateExclusion returns why an eligible block is left out before ranking
// for degradation's sake: superseded (by whom), or, in a plain assembly,
// a summary.
func (a *Assembler) lateExclusion(i int, b *Block) (outcome.Reason, string) {
	if by, ok := a.deg.superseded[int32(i)]; ok {
		return outcome.ReasonSuperseded, by
	}
	if a.deg.plain && len(b.Replaces) > 0 && b.Type == declare.History {
		return outcome.ReasonNoGain, ""
	}
	return "", ""
}

// buildRepls finds, in every section, the summaries among the eligible
// blocks (a.ranked, before ranking) and the turns each replaces there.
func (a *Assembler) buildRepls(tpl *template.Template, blocks []*Block, out *Output) {
	if a.deg.plain {
		return
	}
	for si := range a.ranked {
		var sums []int
		for p, r := range a.ranked[si] {
			if b := blocks[r.Index]; len(b.Replaces) > 0 && b.Type == declare.History {
				sums = append(sums, p)
			}
		}
		if len(sums) > 0 {
			a.deg.weighed = true
			a.replSection(tpl.Section(si), blocks, sums, out)
		}
	}
}

// replSection makes the replacements of section sec, whose summaries are
// at sums in a.ranked. A summary stands for the turns it names, the turns
// a summary it names stands for, and the groups of all of them. Two
// summaries that stand for a common block, or one that names the other,
// cannot both stand: the one named by the other, else the older (by
// last_modified, then declaration), is excluded as superseded.
func (a *Assembler) replSection(sec *template.Section, blocks []*Block, sums []int, out *Output) {
	si := sec.Index()
	ranked := a.ranked[si]
	pos := make(map[string]int, len(ranked))
	for p, r := range ranked {
		pos[blocks[r.Index].ID] = p
	}
	var unitMembers map[int32][]int
	if len(a.unitOf) > 0 {
		unitMembers = make(map[int32][]int)
		for p, r := range ranked {
			if u, ok := a.unitOf[r.Index]; ok {
				unitMembers[u] = append(unitMembers[u], p)
			}
		}
	}
	type claim struct {
		set       []int    // the positions it stands for, sorted
		names     []string // every id it stands for, here or not
		ids       int      // how many turns it stands for, here or not
		complete  bool
		unusable  bool
		named     bool // another summary here names it
		summaryAt int
	}
	claims := make([]claim, len(sums))
	for k, p := range sums {
		b := blocks[ranked[p].Index]
		cl := claim{complete: true, summaryAt: p}
		for _, id := range b.Replaces {
			if _, ok := pos[id]; !ok {
				cl.complete = false
			}
		}
		seen := map[string]bool{b.ID: true}
		queue := slices.Clone(b.Replaces)
		for len(queue) > 0 {
			id := queue[0]
			queue = queue[1:]
			if seen[id] {
				continue
			}
			seen[id] = true
			cl.names = append(cl.names, id)
			q, ok := pos[id]
			if !ok {
				cl.ids++ // not here: the summary is all there is of it
				continue
			}
			qb := blocks[ranked[q].Index]
			if len(qb.Replaces) > 0 {
				queue = append(queue, qb.Replaces...)
			} else {
				cl.ids++
			}
			cl.set = append(cl.set, q)
			cl.unusable = cl.unusable || ranked[q].Required
			if u, ok := a.unitOf[ranked[q].Index]; ok {
				for _, m := range unitMembers[u] {
					queue = append(queue, blocks[ranked[m].Index].ID)
				}
			}
		}
		slices.Sort(cl.set)
		claims[k] = cl
	}
	for k := range claims {
		id := blocks[ranked[claims[k].summaryAt].Index].ID
		for j := range claims {
			if j != k && slices.Contains(claims[j].names, id) {
				claims[k].named = true
			}
		}
	}
	order := make([]int, len(claims))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(x, y int) int {
		cx, cy := &claims[x], &claims[y]
		if cx.named != cy.named {
			if cy.named {
				return -1
			}
			return 1
		}
		bx, by := blocks[ranked[cx.summaryAt].Index], blocks[ranked[cy.summaryAt].Index]
		if c := by.LastModified.Compare(bx.LastModified); c != 0 {
			return c
		}
		if c := cmp.Compare(by.Seq, bx.Seq); c != 0 {
			return c
		}
		return strings.Compare(by.ID, bx.ID)
	})
	taken := make(map[string]int) // id → the claim standing for it
	drop := make(map[int]bool)
	for _, k := range order {
		cl := &claims[k]
		b := blocks[ranked[cl.summaryAt].Index]
		owner, clash := taken[b.ID]
		for _, id := range cl.names {
			if clash {
				break
			}
			owner, clash = taken[id]
		}
		if clash {
			by := blocks[ranked[claims[owner].summaryAt].Index].ID
			out.Events = append(out.Events, outcome.Event{Kind: outcome.KindExcluded, Section: sec.Name(), RequestID: b.ID, Reason: outcome.ReasonSuperseded, By: by})
			drop[cl.summaryAt] = true
			continue
		}
		taken[b.ID] = k
		for _, id := range cl.names {
			taken[id] = k
		}
		// A summary of turns none of which is here still stands for them:
		// a replacement without members, decided as any block is.
		r := repl{si: si, summary: ranked[cl.summaryAt].Index, ids: cl.ids, complete: cl.complete, unusable: cl.unusable,
			at: b.LastModified, seq: b.Seq}
		for i, q := range cl.set {
			m := blocks[ranked[q].Index]
			r.members = append(r.members, ranked[q].Index)
			if i == 0 || m.LastModified.After(r.at) || (m.LastModified.Equal(r.at) && m.Seq > r.seq) {
				r.at, r.seq = m.LastModified, m.Seq
			}
		}
		if a.deg.replOf == nil {
			a.deg.replOf = make(map[int32]int32)
		}
		ri := int32(len(a.deg.repls))
		a.deg.replOf[r.summary] = ri
		for _, m := range r.members {
			a.deg.replOf[m] = ri
		}
		a.deg.repls = append(a.deg.repls, r)
	}
	if len(drop) > 0 {
		kept := ranked[:0]
		for p, r := range ranked {
			if !drop[p] {
				kept = append(kept, r)
			}
		}
		clear(ranked[len(kept):])
		a.ranked[si] = kept
	}
}

// bindRepls records where section si's replacements stand among its
// ranked candidates, and holds back each summary that is decided with its
// turns: one ranked below its best turn is decided when that comes up.
// A summary that is required, names a turn that is not here, or was
// written by the previous decision is decided when it or its best turn
// comes up, whichever is first, trying the summary before the turns; one
// ranked above all its turns, when it comes up (see fillRepl).
func (a *Assembler) bindRepls(si int, blocks []*Block, out *Output) {
	if len(a.deg.replOf) == 0 {
		return
	}
	cands := a.cands[si]
	for i := range cands {
		cd := &cands[i]
		ri, ok := a.deg.replOf[cd.Index]
		if !ok {
			continue
		}
		r := &a.deg.repls[ri]
		cd.repl = ri + 1
		if cd.Index == r.summary {
			cd.summary, r.sCand = true, i
		} else {
			r.mCands = append(r.mCands, i)
		}
	}
	sec := a.deg.tpl.Section(si)
	for ri := range a.deg.repls {
		r := &a.deg.repls[ri]
		if r.si != si {
			continue
		}
		s := &cands[r.sCand]
		switch {
		case r.unusable:
			s.done = true
			r.state = replDissolved
			a.drop(sec, s, blocks[s.Index], outcome.ReasonTurnsKept, out)
		case s.Required || !r.complete || s.inc:
		case len(r.mCands) > 0 && r.sCand < slices.Min(r.mCands):
			// Ranked above its turns: decided where it comes up, by what
			// would fit until the last of them (see fillRepl).
		default:
			s.done, s.status = true, outcome.StatusDropped // decided with its turns
		}
	}
}

// fillRepl decides replacement r when cur, its summary or one of its
// turns, comes up in section sec's fill: its turns, if all of them fit
// the room left (its summary then waits, with reason turns_kept unless
// the budget lets it stand in later); else its summary, in the richest
// form that fits, standing in for the turns (summarized); else neither:
// the summary is dropped and the turns are decided one by one. It
// reports whether cur is decided; when it is not, the fill goes on with
// cur as with any block.
func (a *Assembler) fillRepl(sec *template.Section, blocks []*Block, r *repl, cur *candidate, c truncate.Counter, out *Output, st *fillState, misses []truncate.RequiredMiss) (bool, []truncate.RequiredMiss) {
	si := sec.Index()
	cands := a.cands[si]
	s := &cands[r.sCand]
	sb := blocks[s.Index]
	capTokens := sec.MaxTokens()
	preferSummary := s.Required || !r.complete || s.inc
	turns := func() bool {
		if !r.complete || (st.stopped && !s.Required) {
			return false
		}
		ss := &a.sticky[si]
		need, texts := 0, 0
		for _, j := range r.mCands {
			m := &cands[j]
			if ss.on && ss.hasFloor && m.Score <= ss.floor && !m.news && !m.inc {
				return false // let go when the section shed: it stays out
			}
			a.blockTokens(sec, blocks[m.Index], m, c)
			need += m.tokens
			if !m.msg {
				texts++
			}
		}
		if texts > 0 {
			need += (texts - 1) * st.sepTokens
			if st.kept > 0 {
				need += st.sepTokens
			}
		}
		if st.used+st.msgs+need > capTokens {
			return false
		}
		for _, j := range r.mCands {
			m := &cands[j]
			m.done, m.status = true, outcome.StatusKept
			st.add(m)
		}
		r.state = replTurns
		return true
	}
	summary := func() bool {
		if st.stopped && !s.Required {
			return false
		}
		room := capTokens - st.used - st.msgs - st.sep(s)
		a.blockTokens(sec, sb, s, c)
		if s.tokens > room && !a.degrade(sec, sb, s, room, c) {
			if !s.Required {
				return false
			}
			misses = append(misses, truncate.RequiredMiss{RequestID: s.ID, Section: sec.Name(), Tokens: s.tokens, Limit: capTokens, Reason: outcome.ReasonSectionCap})
		}
		s.done, s.status = true, outcome.StatusKept
		st.add(s)
		r.state, r.wasOn = replOn, true
		for _, j := range r.mCands {
			m := &cands[j]
			m.done = true
			m.text, m.rendered = "", false
			a.dropFor(sec, m, blocks[m.Index], outcome.ReasonSummarized, s.ID, out)
		}
		return true
	}
	if cur == s && !preferSummary {
		// The summary comes up before its turns: if everything ranked from
		// here down to the last of them fits the room left, the turns will
		// fit and the summary waits for them; otherwise some must go, and
		// the summary takes its place now, at its own rank.
		if a.fitsUntil(sec, blocks, r, st, c) || !summary() {
			s.done, s.status = true, outcome.StatusDropped
		}
		return true, misses
	}
	if preferSummary && (summary() || turns()) || !preferSummary && (turns() || summary()) {
		return true, misses
	}
	r.state = replDissolved
	s.done = true
	s.text, s.rendered = "", false
	a.drop(sec, s, sb, outcome.ReasonSectionCap, out)
	return cur == s, misses
}

// fitsUntil reports whether every undecided block of the section ranked
// after r's summary, down to the last of its turns, fits the room left
// in st: then the turns fit when they come up. It counts blocks only
// until they overflow the room.
func (a *Assembler) fitsUntil(sec *template.Section, blocks []*Block, r *repl, st *fillState, c truncate.Counter) bool {
	cands := a.cands[sec.Index()]
	room := sec.MaxTokens() - st.used - st.msgs
	last := slices.Max(r.mCands)
	need, texts := 0, st.kept
	for i := r.sCand + 1; i <= last; i++ {
		cd := &cands[i]
		if cd.done {
			continue
		}
		a.blockTokens(sec, blocks[cd.Index], cd, c)
		need += cd.tokens
		if !cd.msg {
			if texts > 0 {
				need += st.sepTokens
			}
			texts++
		}
		if need > room {
			return false
		}
	}
	return true
}

// dropFor marks cd dropped for reason, with an event naming by, the block
// that stands for it.
func (a *Assembler) dropFor(sec *template.Section, cd *candidate, b *Block, reason outcome.Reason, by string, out *Output) {
	a.drop(sec, cd, b, reason, out)
	out.Events[cd.event-1].By = by
}

// void withdraws cd's dropped event: the block is back in the text.
func (a *Assembler) void(cd *candidate, out *Output) {
	if cd.event > 0 {
		out.Events[cd.event-1].Kind = ""
		cd.event = 0
	}
}

// compactEvents removes the withdrawn events.
func compactEvents(out *Output) {
	out.Events = slices.DeleteFunc(out.Events, func(e outcome.Event) bool { return e.Kind == "" })
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
		a.msgs[si] += cd.tokens
		return
	}
	if a.kept[si] > 0 {
		a.used[si] += a.seps[si]
	}
	a.used[si] += cd.tokens
	a.kept[si]++
}

// standIn lets r's summary stand in for its turns during the budget cut:
// the turns in the text leave it (summarized), the summary enters in the
// richest form that fits its section's cap and brings the estimate within
// budget, or, unless leftover, at least lowers it. It reports whether the
// summary entered.
func (a *Assembler) standIn(r *repl, budget int, estimate *int, blocks []*Block, out *Output, c truncate.Counter, leftover bool) bool {
	if a.deg.plain || r.unusable || r.state == replOn {
		return false
	}
	si := r.si
	sec := a.deg.tpl.Section(si)
	cands := a.cands[si]
	s := &cands[r.sCand]
	sb := blocks[s.Index]
	used, kept, msgs := a.used[si], a.kept[si], a.msgs[si]
	someOut := false
	for _, j := range r.mCands {
		m := &cands[j]
		switch {
		case !m.inText():
			someOut = true
		case m.msg:
			msgs -= m.tokens
		default:
			if kept--; kept == 0 {
				used = 0
			} else {
				used -= m.tokens + a.seps[si]
			}
		}
	}
	if !someOut && leftover {
		return false // every turn is in the text: they are used, not the summary
	}
	before := a.sectionTokens(a.deg.tpl, si)
	saved := saveForm(s)
	for f := int8(0); int(f) <= len(sb.Variants); f++ {
		setForm(s, f)
		a.blockTokens(sec, sb, s, c)
		u, k, m := used, kept, msgs
		if s.msg {
			m += s.tokens
		} else {
			if k > 0 {
				u += a.seps[si]
			}
			u += s.tokens
			k++
		}
		est := *estimate - before + a.sectionSum(sec, u, k, m)
		if u+m > sec.MaxTokens() || !(est <= budget || !leftover && est < *estimate) {
			continue
		}
		for _, j := range r.mCands {
			m := &cands[j]
			switch {
			case m.inText():
				a.dropBlock(sec, si, j, outcome.ReasonSummarized, blocks, out)
				out.Events[m.event-1].By = s.ID
			case m.event > 0:
				m.reason = outcome.ReasonSummarized
				out.Events[m.event-1].Reason, out.Events[m.event-1].By = outcome.ReasonSummarized, s.ID
			default:
				m.done = true
				a.dropFor(sec, m, blocks[m.Index], outcome.ReasonSummarized, s.ID, out)
			}
		}
		a.void(s, out)
		s.status, s.reason = outcome.StatusKept, ""
		a.addBlock(si, s)
		r.state, r.wasOn = replOn, true
		a.deg.weighed = true
		*estimate = est
		return true
	}
	saved.restore(s)
	return false
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
	cd := &a.cands[si][j]
	if r := a.replOfCand(cd); r != nil && !cd.summary {
		if a.standIn(r, budget, estimate, blocks, out, c, false) {
			*cursor = dropCursor{k: tpl.NumSections() - 1, j: -2}
			return true
		}
		return false
	}
	b := blocks[cd.Index]
	if cd.unit != 0 || cd.status != outcome.StatusKept || int(cd.form) >= len(b.Variants) || cd.Required {
		return false
	}
	sec := tpl.Section(si)
	before := a.sectionTokens(tpl, si)
	saved := saveForm(cd)
	again := cd.form > 0
	for f := cd.form + 1; int(f) <= len(b.Variants); f++ {
		setForm(cd, f)
		a.blockTokens(sec, b, cd, c)
		delta := cd.tokens - saved.tokens
		if delta >= 0 || !again && *estimate+delta > budget {
			continue
		}
		if cd.msg {
			a.msgs[si] += delta
		} else {
			a.used[si] += delta
		}
		*estimate -= before - a.sectionTokens(tpl, si)
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
		for j := len(a.cands[si]) - 1; j >= 0; j-- {
			cd := &a.cands[si][j]
			b := blocks[cd.Index]
			if !cd.Required || cd.status != outcome.StatusKept || cd.unit != 0 || int(cd.form) >= len(b.Variants) {
				continue
			}
			before := a.sectionTokens(tpl, si)
			saved := saveForm(cd)
			best := saveForm(cd)
			for f := cd.form + 1; int(f) <= len(b.Variants); f++ {
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
			if cd.msg {
				a.msgs[si] += cd.tokens - saved.tokens
			} else {
				a.used[si] += cd.tokens - saved.tokens
			}
			*estimate -= before - a.sectionTokens(tpl, si)
			a.deg.weighed = true
			return true
		}
	}
	return false
}

// standInAll gives every summary whose turns did not all stay a chance to
// stand in for them in the room left once the budget cut is done (after
// a section shed, say).
func (a *Assembler) standInAll(budget int, estimate *int, blocks []*Block, out *Output, c truncate.Counter) bool {
	entered := false
	for ri := range a.deg.repls {
		if a.standIn(&a.deg.repls[ri], budget, estimate, blocks, out, c, true) {
			entered = true
		}
	}
	return entered
}

// settleRepls gives every summary its final event: a summary that stood
// in and then went takes its turns with it (their events get its
// reason), and one that never stood in is dropped with reason turns_kept
// when all its turns are in the text, else budget.
func (a *Assembler) settleRepls(tpl *template.Template, blocks []*Block, out *Output) {
	for ri := range a.deg.repls {
		r := &a.deg.repls[ri]
		sec := tpl.Section(r.si)
		cands := a.cands[r.si]
		s := &cands[r.sCand]
		if s.inText() {
			continue
		}
		if r.wasOn {
			for _, j := range r.mCands {
				if m := &cands[j]; m.reason == outcome.ReasonSummarized {
					m.reason = s.reason
					if m.event > 0 {
						out.Events[m.event-1].Reason = s.reason
					}
				}
			}
		}
		if s.event > 0 {
			continue
		}
		all := true
		for _, j := range r.mCands {
			all = all && cands[j].inText()
		}
		reason := outcome.ReasonBudget
		if all {
			reason = outcome.ReasonTurnsKept
		}
		s.text, s.rendered = "", false
		a.drop(sec, s, blocks[s.Index], reason, out)
	}
}

// byOf returns the block that stands for cd: its summary, for a turn its
// summary stood in for.
func (a *Assembler) byOf(cd *candidate, blocks []*Block) string {
	if r := a.replOfCand(cd); r != nil && !cd.summary && r.wasOn && !cd.inText() {
		return blocks[r.summary].ID
	}
	return ""
}

// placeOf returns where a block is written in time or declaration order:
// a summary standing in for turns takes the newest one's place.
func (a *Assembler) placeOf(cd *candidate, b *Block) (time.Time, int64) {
	if cd.summary {
		return a.deg.repls[cd.repl-1].at, a.deg.repls[cd.repl-1].seq
	}
	return b.LastModified, b.Seq
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
	if b.MaxTokens > 0 {
		if _, left := a.content(sec, b, cd.form); left > 0 {
			out.Events = append(out.Events, outcome.Event{Kind: outcome.KindNotice, Section: sec.Name(), RequestID: cd.ID, Reason: outcome.ReasonClipped, Tokens: left})
		}
	}
}

// represented counts the blocks the text holds or stands for: each block
// in it, a summary for each turn it stands for (present or not).
func (a *Assembler) represented(blocks []*Block) int {
	n := 0
	for si := range a.cands {
		for i := range a.cands[si] {
			cd := &a.cands[si][i]
			switch {
			case !cd.inText():
			case cd.summary:
				n += a.deg.repls[cd.repl-1].ids
			case len(blocks[cd.Index].Replaces) > 0 && blocks[cd.Index].Type == declare.History:
				n += len(blocks[cd.Index].Replaces)
			default:
				n++
			}
		}
	}
	return n
}

// candidateReasons are the reasons a dropped history block is offered to
// the host for summarising: it was left out for room.
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
// a group's members are never split between runs. A summary left out
// whose turns are all here is not offered (its turns are), one naming a
// turn that is not here is (it is all there is of it).
func (a *Assembler) summarizeCandidates(tpl *template.Template, blocks []*Block, out *Output, c truncate.Counter) {
	for si := range a.cands {
		sec := tpl.Section(si)
		var hist []int
		for i := range a.cands[si] {
			if blocks[a.cands[si][i].Index].Type == declare.History {
				hist = append(hist, i)
			}
		}
		if len(hist) == 0 {
			continue
		}
		cands := a.cands[si]
		slices.SortFunc(hist, func(x, y int) int {
			tx, sx := a.placeOf(&cands[x], blocks[cands[x].Index])
			ty, sy := a.placeOf(&cands[y], blocks[cands[y].Index])
			return cmp.Or(tx.Compare(ty), cmp.Compare(sx, sy), strings.Compare(cands[x].ID, cands[y].ID))
		})
		type run struct {
			at     []int // positions in hist
			tokens int
			inc    bool
		}
		var runs []run
		open, total := false, 0
		for k := len(hist) - 1; k >= 0 && total < sec.MaxTokens(); k-- {
			cd := &cands[hist[k]]
			if cd.summary && !cd.inText() && a.deg.repls[cd.repl-1].complete {
				continue // a summary not used: its turns speak for themselves
			}
			if cd.inText() || !candidateReason(cd.reason) {
				open = false // in the text, stood for by a summary, or not left out for room
				continue
			}
			if open && runs[len(runs)-1].inc != cd.inc {
				open = false
			}
			if !open {
				runs = append(runs, run{inc: cd.inc})
				open = true
			}
			n := cd.tokens
			if n == 0 || cd.form != 0 {
				saved := saveForm(cd)
				setForm(cd, 0)
				a.blockTokens(sec, blocks[cd.Index], cd, c)
				n = cd.tokens
				saved.restore(cd)
			}
			total += n
			runs[len(runs)-1].tokens += n
			runs[len(runs)-1].at = append(runs[len(runs)-1].at, k)
		}
		// A group's members are never split: runs sharing a unit merge.
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
