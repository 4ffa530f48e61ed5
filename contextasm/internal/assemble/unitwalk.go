package assemble

import (
	"slices"
	"strings"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// Units in an incremental assembly. The planning pass of a full assembly
// (planUnits) joins the blocks of a group, and each tool result to the
// assistant turn that makes its call, over a section's eligible blocks.
// An Index keeps each section's blocks in a group or a tool call (its
// links), so an incremental assembly plans from those alone, in the same
// order (request_id) and with the same grouper: members of a unit that
// cannot be sent whole are left out (markGone), the members of a unit
// with a required member are required for the assembly (markReq), and
// the walk, when it pulls a unit's first member in fill order, pulls the
// others with it, so the fill decides the unit whole at the same point as
// a full assembly does.

// reqdEntry is an entry required for an incremental assembly (markReq),
// and its section.
type reqdEntry struct {
	e  *ixEntry
	si int32
}

// unitWalk is an incremental assembly's units: the members of each unit
// of Assembler.plan.units, by entry, and which are candidates yet.
type unitWalk struct {
	of      map[*ixEntry]int32 // a member's unit
	members [][]*ixEntry       // each unit's members; in fill order once its section's walk started
	sec     []int32            // each unit's section
	bound   []bool             // its members are candidates
	gone    map[*Block]bool    // members of units that cannot be sent whole
	goneE   []*ixEntry         // their entries
	// units are each section's links' units in this assembly (nil: no
	// links).
	units   []*ixUnits
	scratch []*ixEntry // membersOf's
	// ordered is the section whose walk ordered its units' members
	// (orderMembers): a unit of it made later is ordered when made.
	ordered int
	// the walk's items by entry, for the members pulled after the first
	prior map[*ixEntry]int32
	rel   map[*ixEntry]int32
	ahead bool // members pulled ahead of their turn in the section walked (settleOrder)
}

func (u *unitWalk) reset() {
	clear(u.of)
	for i, m := range u.members { // their arrays kept for the next assembly's units
		clear(m)
		u.members[i] = m[:0]
	}
	clear(u.gone)
	clear(u.goneE)
	u.goneE = u.goneE[:0]
	u.members, u.sec, u.bound, u.ahead = u.members[:0], u.sec[:0], u.bound[:0], false
	clear(u.units)
	clear(u.scratch)
	u.units, u.scratch, u.ordered = u.units[:0], u.scratch[:0], -1
}

// planUnitsIndexed is planUnits for an incremental assembly: it finds the
// units among each section's links and marks their members. It reports
// false when a unit that cannot be sent whole has a required member (the
// assembly fails, as AssembleRefs tells). Only the units that must be
// known before the walks are made here (unitsOf): the others when the
// assembly first meets one of their members (unitOf), so that a call of
// a long tool-using conversation costs the exchanges it reads, not every
// exchange the conversation had.
func (a *Assembler) planUnitsIndexed(r *run) bool {
	x, uw := r.x, &a.inc.units
	a.plan.units = a.plan.units[:0]
	clear(a.plan.unitOf)
	uw.units = slices.Grow(uw.units[:0], len(x.secs))[:len(x.secs)]
	for si := range x.secs {
		s := &x.secs[si]
		if len(s.links) == 0 {
			continue
		}
		uw.units[si] = s.unitPlan()
		if !a.unitsOf(r, si) {
			return false
		}
	}
	return true
}

// unitsOf plans section si's units, as groupSection does, from its links'
// units: the members of those that cannot be sent whole are left out
// (false when one is required), and the units with a required member,
// declared so or made so by the planning (the chat's current turn), are
// made, their members required for the assembly.
func (a *Assembler) unitsOf(r *run, si int) bool {
	uw, x := &a.inc.units, r.x
	p := uw.units[si]
	p.scan()
	s := &x.secs[si]
	if on, _, _ := r.tpl.Section(si).ClearToolResults(); on {
		a.nameBlocks(p.blocks)
	}
	for _, i := range p.brokenAt {
		e := s.entryNear(x, si, p.blocks[i], &p.at[i])
		if e == nil {
			return false // a link without its entry: never so, but the full assembly is right anyway
		}
		if e.required() {
			return false
		}
		e.mark |= markGone
		a.inc.priorAll = append(a.inc.priorAll, e) // unmarked by endWalk
		if uw.gone == nil {
			uw.gone = make(map[*Block]bool)
		}
		uw.gone[p.blocks[i]] = true
		uw.goneE = append(uw.goneE, e)
	}
	first := int32(len(a.plan.units))
	for _, root := range p.reqRoots {
		a.makeUnit(si, root)
	}
	for _, q := range a.inc.reqd {
		if int(q.si) == si {
			a.unitOf(si, q.e)
		}
	}
	for u := first; u < int32(len(a.plan.units)); u++ {
		if a.plan.units[u].required {
			for _, e := range uw.members[u] {
				a.require(e, si, false)
			}
		}
	}
	return true
}

// membersOf returns the members of entry e's unit, e of section si, and
// false when e is in none: the unit's, once made, else (in no particular
// order) in scratch that the next call reuses, without making the unit: a
// walk passes over most units whole (passUnit), and makes only those it
// pulls.
func (a *Assembler) membersOf(si int, e *ixEntry) ([]*ixEntry, bool) {
	uw := &a.inc.units
	if u, ok := uw.of[e]; ok {
		return uw.members[u], true
	}
	p, root, ok := a.setOf(si, e)
	if !ok {
		return nil, false
	}
	uw.scratch = a.setMembers(si, p, root, uw.scratch[:0])
	return uw.scratch, true
}

// setMembers appends to dst the entries of the set whose root is root
// among section si's links p, in request_id order.
func (a *Assembler) setMembers(si int, p *ixUnits, root int32, dst []*ixEntry) []*ixEntry {
	x := a.inc.x
	s := &x.secs[si]
	for i := p.head[root]; i >= 0; i = p.next[i] {
		if e := s.entryNear(x, si, p.blocks[i], &p.at[i]); e != nil { // nil: a link without its entry, never so
			dst = append(dst, e)
		}
	}
	return dst
}

// hasUnits reports whether section si's links make a unit in this
// assembly.
func (u *unitWalk) hasUnits(si int) bool {
	return si < len(u.units) && u.units[si] != nil && u.units[si].hasUnit
}

// setOf returns the links' units of section si and the root of e's set,
// when e is in a unit that may be sent (one of two members or more).
func (a *Assembler) setOf(si int, e *ixEntry) (*ixUnits, int32, bool) {
	uw := &a.inc.units
	if !uw.hasUnits(si) {
		return nil, 0, false
	}
	p := uw.units[si]
	i, ok := p.pos[e.b]
	if !ok {
		return nil, 0, false
	}
	root := p.root[i]
	if p.broken[root] || p.size[root] < 2 {
		return nil, 0, false
	}
	return p, root, true
}

// unitOf returns entry e's unit, e of section si, made on first use
// (makeUnit); false when e is in none (not a link, or alone in its set,
// or in a set that cannot be sent whole, whose members are left out).
func (a *Assembler) unitOf(si int, e *ixEntry) (int32, bool) {
	uw := &a.inc.units
	if u, ok := uw.of[e]; ok {
		return u, true
	}
	if _, root, ok := a.setOf(si, e); ok {
		return a.makeUnit(si, root), true
	}
	return 0, false
}

// inUnit reports whether entry e of section si is in a unit (unitOf's
// answer) without making it.
func (a *Assembler) inUnit(si int, e *ixEntry) bool {
	if _, ok := a.inc.units.of[e]; ok {
		return true
	}
	_, _, ok := a.setOf(si, e)
	return ok
}

// makeUnit makes the unit of the set whose root is root among section
// si's links, its members in request_id order, or in the walk's order
// once its section's walk ordered them (orderMembers), and returns it.
func (a *Assembler) makeUnit(si int, root int32) int32 {
	uw := &a.inc.units
	p := uw.units[si]
	u := int32(len(a.plan.units))
	a.plan.units = addUnit(a.plan.units, p.names[root])
	if n := len(uw.members); n < cap(uw.members) { // with the array it had
		uw.members = uw.members[:n+1]
	} else {
		uw.members = append(uw.members, nil)
	}
	uw.sec = append(uw.sec, int32(si))
	uw.bound = append(uw.bound, false)
	if uw.of == nil {
		uw.of = make(map[*ixEntry]int32)
	}
	uw.members[u] = a.setMembers(si, p, root, uw.members[u])
	for _, e := range uw.members[u] {
		uw.of[e] = u
		a.plan.units[u].required = a.plan.units[u].required || e.required()
	}
	if uw.ordered == si {
		a.orderUnit(u)
	}
	return u
}

// ixUnits is how a section's links (groups, tool calls and results) make
// units, as groupSection finds them: it moves only with the links, so an
// index keeps it until one changes (ixSection.units).
type ixUnits struct {
	blocks []*Block // the links, by request_id
	root   []int32  // each one's set, by its first member
	broken []bool   // by root: the set cannot be sent whole
	size   []int32  // by root
	names  []string // by root: the unit's name (grouper.names)
	// at is where each link's entry was found last (entryNear): its
	// position in base, or −2−i for position i of extra, or −1.
	at []int32
	// stale: a link changed or left since it was made; added: the links
	// added since, with which it may be extended (ixSection.touch).
	stale bool
	added []*Block
	// keys holds, for each group name and tool call, the links that
	// have it (unitKeys): the units an added link may join.
	keys map[unitKey][]*Block
	// Made by scan, on first use: each set's members in request_id
	// order (from head, by root, along next; −1 ends), the members of the
	// sets that cannot be sent whole, the roots of the units with a
	// member declared required, and whether it has a unit at all.
	scanned    bool
	pos        map[*Block]int32 // each link's place in blocks: setOf's, by the entry's block
	head, next []int32
	brokenAt   []int32
	reqRoots   []int32
	hasUnit    bool
}

// scan makes what p's assemblies read of it beside its sets (ixUnits).
func (p *ixUnits) scan() {
	if p.scanned {
		return
	}
	p.scanned = true
	n := len(p.blocks)
	p.pos = make(map[*Block]int32, n)
	for i, b := range p.blocks {
		p.pos[b] = int32(i)
	}
	p.head, p.next = make([]int32, n), make([]int32, n)
	for i := range p.head {
		p.head[i] = -1
	}
	for i := n - 1; i >= 0; i-- {
		root := p.root[i]
		p.next[i], p.head[root] = p.head[root], int32(i)
		switch {
		case p.broken[root]:
			p.brokenAt = append(p.brokenAt, int32(i))
		case p.size[root] > 1:
			p.hasUnit = true
			if p.blocks[i].Required {
				p.reqRoots = append(p.reqRoots, root)
			}
		}
	}
	slices.Reverse(p.brokenAt)
	slices.Sort(p.reqRoots)
	p.reqRoots = slices.Compact(p.reqRoots)
}

// unitKey is what links a unit's members: a group name, or a tool call
// (made, or answered by a result).
type unitKey struct {
	call bool
	callKey
}

// unitKeys appends b's keys to dst.
func unitKeys(dst []unitKey, b *Block) []unitKey {
	if g := b.Group(); g != "" {
		dst = append(dst, unitKey{callKey: callKey{id: g}})
	}
	for _, tc := range b.ToolCalls() {
		dst = append(dst, unitKey{call: true, callKey: callKey{b.SessionID, tc.ID}})
	}
	if id := b.ToolCallID(); id != "" {
		dst = append(dst, unitKey{call: true, callKey: callKey{b.SessionID, id}})
	}
	return dst
}

// entryIfAt returns b's live entry when it is at h (a base position, or
// -2 - an extra one), else nil.
func (s *ixSection) entryIfAt(b *Block, h int32) *ixEntry {
	switch {
	case h >= 0 && int(h) < len(s.base) && s.base[h].b == b && !s.base[h].dead:
		return s.entryAt(h)
	case h < -1 && int(-2-h) < len(s.extra) && s.extra[-2-h].b == b && !s.extra[-2-h].dead:
		return &s.extra[-2-h]
	}
	return nil
}

// entryNear returns b's live entry in section si of x, or nil, looked
// for at *at first (where it was found last: its position in base, or
// −2−i for position i of extra, or −1), and by its key when it is not
// there; *at is where it is now. A block has one live entry in a section,
// so an entry of b found at *at is b's, wherever the hint came from; base
// moves only when it is made again, so a call finds the conversation's
// links and its query's hits without a score and a search each.
func (s *ixSection) entryNear(x *Index, si int, b *Block, at *int32) *ixEntry {
	if e := s.entryIfAt(b, *at); e != nil {
		return e
	}
	k := x.key(b, si)
	if j, ok := find(s.extra, k); ok {
		*at = int32(-2 - j)
		return &s.extra[j]
	}
	if j, ok := s.findBase(&k); ok {
		*at = int32(j)
		return &s.base[j]
	}
	*at = -1
	return nil
}

// unitPlan returns s's units, made when a change of its links dropped
// them.
func (s *ixSection) unitPlan() *ixUnits {
	old := s.units
	if old != nil && !old.stale {
		if len(old.added) == 0 {
			return old
		}
		if p := s.extendUnits(old); p != nil {
			s.units = p
			return p
		}
	}
	p := &ixUnits{blocks: make([]*Block, 0, len(s.links)), keys: make(map[unitKey][]*Block)}
	for b := range s.links {
		p.blocks = append(p.blocks, b)
	}
	slices.SortFunc(p.blocks, func(p, q *Block) int { return strings.Compare(p.ID, q.ID) })
	ranked := make([]Ranked, len(p.blocks))
	for i, b := range p.blocks {
		ranked[i] = Ranked{Index: int32(i), ID: b.ID}
	}
	g := newGrouper(ranked, p.blocks)
	g.link()
	broken, size := g.sets()
	p.root, p.broken, p.size, p.names = make([]int32, len(ranked)), broken, make([]int32, len(size)), make([]string, len(ranked))
	for root, name := range g.names() {
		p.names[root] = name
	}
	p.at = make([]int32, len(ranked))
	var ks []unitKey
	for i := range ranked {
		p.root[i], p.size[i], p.at[i] = int32(g.find(i)), int32(size[i]), -1
		ks = unitKeys(ks[:0], p.blocks[i])
		for _, k := range ks {
			p.keys[k] = append(p.keys[k], p.blocks[i])
		}
	}
	if old != nil { // where the links that stay were found: both by request_id
		for i, j := 0, 0; i < len(p.blocks) && j < len(old.blocks); {
			switch c := strings.Compare(p.blocks[i].ID, old.blocks[j].ID); {
			case c < 0:
				i++
			case c > 0:
				j++
			default:
				if p.blocks[i] == old.blocks[j] {
					p.at[i] = old.at[j]
				}
				i, j = i+1, j+1
			}
		}
	}
	s.units = p
	return p
}

// extendUnits returns old's units with the links added since (old.added)
// in them, or nil when they are best made again: a link added twice, or
// many added. The units the added links share no group or call with
// are as they were; those they do, and every link sharing a group or a
// call with any of these (the closure, so that the links outside it share
// nothing with it), are grouped again with the added ones, as a full make
// groups them: a unit's grouping reads only the links it shares a key with,
// in request_id order. A long tool-using conversation's call then costs
// the exchange it adds, not every exchange it had.
func (s *ixSection) extendUnits(old *ixUnits) *ixUnits {
	add := slices.Clone(old.added)
	if len(add) > 64 || len(add)*4 > len(old.blocks) {
		return nil
	}
	slices.SortFunc(add, func(p, q *Block) int { return strings.Compare(p.ID, q.ID) })
	find := func(id string) (int, bool) {
		return slices.BinarySearchFunc(old.blocks, id, func(o *Block, id string) int { return strings.Compare(o.ID, id) })
	}
	posOf := func(b *Block) int {
		if i, ok := find(b.ID); ok && old.blocks[i] == b {
			return i
		}
		return -1
	}
	for i, b := range add {
		if _, ok := s.links[b]; !ok || i > 0 && add[i-1].ID == b.ID {
			return nil
		}
		if _, held := find(b.ID); held {
			return nil // an id held already: a change, made again
		}
	}
	// The old units the added links reach, through the links sharing keys.
	inSet := make([]bool, len(old.blocks)) // by root: the unit is reached
	reached := 0
	var ks []unitKey
	reach := func(b *Block) {
		ks = unitKeys(ks[:0], b)
		for _, k := range ks {
			for _, o := range old.keys[k] {
				if i := posOf(o); i >= 0 && !inSet[old.root[i]] {
					inSet[old.root[i]] = true
					reached++
				}
			}
		}
	}
	for _, b := range add {
		reach(b)
	}
	for scans, before := 0, 0; reached > before; scans++ { // each unit reached: its members' keys reach further
		if scans == 8 {
			return nil // a long chain of units: made again
		}
		before = reached
		for i := range old.blocks {
			if inSet[old.root[i]] {
				reach(old.blocks[i])
			}
		}
	}
	// The links in request_id order, old and added merged.
	n := len(old.blocks) + len(add)
	p := &ixUnits{blocks: make([]*Block, 0, n), root: make([]int32, n), broken: make([]bool, n), size: make([]int32, n),
		names: make([]string, n), at: make([]int32, n), keys: old.keys}
	newPos := make([]int32, len(old.blocks))
	var regroup []int32 // new positions of the links grouped again
	for i, j := 0, 0; i < len(old.blocks) || j < len(add); {
		if j == len(add) || i < len(old.blocks) && old.blocks[i].ID < add[j].ID {
			newPos[i] = int32(len(p.blocks))
			p.at[newPos[i]] = old.at[i]
			if inSet[old.root[i]] {
				regroup = append(regroup, newPos[i])
			}
			p.blocks = append(p.blocks, old.blocks[i])
			i++
			continue
		}
		p.at[len(p.blocks)] = -1
		regroup = append(regroup, int32(len(p.blocks)))
		p.blocks = append(p.blocks, add[j])
		j++
	}
	for i := range old.blocks { // the units untouched, at their new places
		r := old.root[i]
		if inSet[r] {
			continue
		}
		np := newPos[i]
		p.root[np] = newPos[r]
		if int(r) == i {
			p.size[np], p.broken[np] = old.size[i], old.broken[i]
			p.names[np] = old.names[i]
		}
	}
	ranked := make([]Ranked, len(regroup))
	blocks := make([]*Block, len(regroup))
	for k, at := range regroup {
		blocks[k] = p.blocks[at]
		ranked[k] = Ranked{Index: int32(k), ID: blocks[k].ID}
	}
	g := newGrouper(ranked, blocks)
	g.link()
	broken, size := g.sets()
	names := g.names()
	for k, at := range regroup {
		r := g.find(k)
		p.root[at] = regroup[r]
		if r == k {
			p.size[at], p.broken[at] = int32(size[k]), broken[k]
			p.names[at] = names[k]
		}
	}
	for _, b := range add {
		ks = unitKeys(ks[:0], b)
		for _, k := range ks {
			p.keys[k] = append(p.keys[k], b)
		}
	}
	old.keys = nil // p's now
	return p
}

// orderMembers puts the members of section si's units in the order its
// walk takes them (compareHeads over each member's walkKey), now that its
// lanes are made, and notes the items of the members. The units of its
// prior and relevance items are made now: whether one is a late incumbent
// (lateIncumbentUnit) reads them.
func (a *Assembler) orderMembers(si int) {
	uw, w := &a.inc.units, &a.inc.w
	uw.ordered = -1
	if !uw.hasUnits(si) && !a.inc.replSec[si] {
		return
	}
	if uw.prior == nil {
		uw.prior, uw.rel = make(map[*ixEntry]int32), make(map[*ixEntry]int32)
	}
	clear(uw.prior)
	clear(uw.rel)
	for i := range w.prior {
		_, unit := a.unitOf(si, w.prior[i].e) // made: lateIncumbentUnit reads the incumbents' units
		if _, repl := a.replIndex(w.prior[i].e); unit || repl {
			uw.prior[w.prior[i].e] = int32(i)
		}
	}
	// A hit's item is found by entry when it is in a unit or a
	// replacement; its unit is made when the walk first pulls a member
	// (unitOf), so that the hits of a long conversation the walk never
	// comes to make none.
	for i := range w.rel {
		if _, repl := a.replIndex(w.rel[i].e); repl || a.inUnit(si, w.rel[i].e) {
			uw.rel[w.rel[i].e] = int32(i)
		}
	}
	for u := range uw.members {
		if int(uw.sec[u]) == si {
			a.orderUnit(int32(u))
		}
	}
	uw.ordered = si
}

// orderUnit puts unit u's members in the walk's order.
func (a *Assembler) orderUnit(u int32) {
	slices.SortFunc(a.inc.units.members[u], func(p, q *ixEntry) int {
		return compareWalk(p, a.memberKey(p), q, a.memberKey(q))
	})
}

// compareWalk is the walk's order (compareHeads) of two entries.
func compareWalk(p *ixEntry, kp walkKey, q *ixEntry, kq walkKey) int {
	return compareHeads(p, kp.eff, kp.inc, kp.tier, q, kq.eff, kq.inc, kq.tier)
}

// memberKey returns member e's walkKey in the section being walked.
func (a *Assembler) memberKey(e *ixEntry) walkKey {
	p, rel := a.memberItems(e)
	return a.walkKeyOf(e, p, rel)
}

// memberItems returns the prior and relevance items of member e of the
// section being walked, nil for those it is not.
func (a *Assembler) memberItems(e *ixEntry) (*priorItem, *relItem) {
	uw, w := &a.inc.units, &a.inc.w
	if e.mark&markPrior != 0 {
		if i, ok := uw.prior[e]; ok {
			return &w.prior[i], nil
		}
	}
	if e.mark&markRel != 0 {
		if i, ok := uw.rel[e]; ok {
			return nil, &w.rel[i]
		}
	}
	return nil, nil
}

// pullUnit makes the other members of cd's unit, cd the member first in
// fill order that the walk just pulled, candidates of section si after
// it, each with its item, and binds them to the unit (bindUnits). They
// come before their turn in the walk: finishWalk puts the section's
// candidates back in the walk's order (settleOrder), so that every pass
// after the fill reads them as a full assembly orders them.
func (a *Assembler) pullUnit(si int, cd *candidate) {
	uw := &a.inc.units
	first := a.inc.pulledE[cd.Index]
	u := uw.of[first]
	if uw.bound[u] {
		return
	}
	uw.bound[u] = true
	a.bindMember(si, u, len(a.secs[si].cands)-1)
	for _, e := range uw.members[u] {
		if e == first || e.mark&markVisited != 0 {
			continue
		}
		p, rel := a.memberItems(e)
		k := a.walkKeyOf(e, p, rel)
		m := a.take(si, e)
		applyItem(m, p, rel, k.tier)
		a.inc.keys[m.Index] = k
		a.bindMember(si, u, len(a.secs[si].cands)-1)
		a.bindRepl(si, e, m) // a unit's members are its replacement's, if any
		uw.ahead = true
	}
}

// passUnit reports whether the walk passes over e, its next entry in
// section sec, a member of a unit the fill would drop without its drop
// moving anything: in a section that fills by skip, a unit that does not
// fit the room left, counted as takeUnit counts it (unitNeed), none of
// its members required, an incumbent or news (whose drop may make the
// section shed; a relevance hit is passed over with its unit,
// passableHit), in a section that does not clear tool results (a unit
// that does not fit starts the clearing). A unit is never cut, so this
// holds whether or not a cut is still possible; its members are passed
// over with it (markPassed: the relevance lane passes a hit so marked
// too) and noted for the tail. The counts are the memo's, as the fill's would be:
// what this saves is the candidates, which a walk would otherwise make of
// every tool exchange the conversation ever had, and sort, and explain.
func (a *Assembler) passUnit(sec *template.Section, st *fillState, e *ixEntry, c truncate.Counter) bool {
	if sec.Fill() != template.FillSkip || a.inc.replSec[sec.Index()] {
		return false
	}
	if on, _, _ := sec.ClearToolResults(); on {
		return false
	}
	members, ok := a.membersOf(sec.Index(), e)
	if !ok {
		return false
	}
	hit := false
	for _, m := range members {
		// A unit with a required member, the chat's current turn among
		// them, has every member marked required (markReq).
		if m.mark != 0 && !a.passableHit(m) {
			return false
		}
		hit = hit || m.mark != 0
	}
	room := sec.MaxTokens() - st.used - st.msgs
	if a.unitBound(members) <= room && a.memberNeed(sec, st, members, c) <= room {
		return false
	}
	for _, m := range members { // passed over whole: the others when they come up
		m.mark |= markPassed
		a.inc.priorAll = append(a.inc.priorAll, m) // unmarked by endWalk
	}
	a.inc.w.unitGap = append(a.inc.w.unitGap, members...)
	a.inc.passed++
	if hit {
		a.inc.passedHits++
	}
	return true
}

// passableHit reports whether member m, marked, is only a relevance hit
// (recalled or not): the walk comes to its unit at the hit's place in the
// relevance lane, or at a member's before it, where the fill decides the
// unit too, and a hit is no incumbent, so its unit's drop sheds nothing
// (shedFor). A long conversation asking the same again makes hits of its
// every tool exchange, which the walk would otherwise make candidates of.
func (a *Assembler) passableHit(m *ixEntry) bool { return m.mark == markRel }

// unitBound is the least members, a unit of section sec, count in the
// fill's need of it whatever the counter: in a chat format, a message's
// overhead (messageCount). When it exceeds the room no member is counted:
// late in a long conversation the room left is a few tokens, less than
// an exchange's overhead. (Contents' lower bounds are not used: a fill
// counts a unit whole, never by its bounds, and must agree with a full
// one whatever they are.)
func (a *Assembler) unitBound(members []*ixEntry) int {
	if !a.chat.on() {
		return 0
	}
	n := 0
	for _, m := range members {
		if m.b.Type == declare.History {
			n += a.chat.PerMessage
		}
	}
	return n
}

// memberNeed is what the fill counts members, a unit of section sec,
// to need (filler.unitNeed), from the memo's counts as the fill's are.
func (a *Assembler) memberNeed(sec *template.Section, st *fillState, members []*ixEntry, c truncate.Counter) int {
	need, texts := 0, 0
	for _, m := range members {
		// The index the candidate would have: never the reasoning turn's.
		cd := candidate{Ranked: Ranked{Index: int32(len(a.inc.pulled))}, msg: a.chat.on() && m.b.Type == declare.History}
		a.blockTokens(sec, m.b, &cd, c)
		need += cd.tokens
		if !cd.msg {
			texts++
		}
	}
	if texts > 0 {
		need += (texts - 1) * st.sep
		if st.kept > 0 {
			need += st.sep
		}
	}
	return need
}

// lateIncumbentUnit reports whether a unit of section si not pulled yet
// has an incumbent member the previous decision did not recall: what
// shedFor looks for.
func (a *Assembler) lateIncumbentUnit(si int) bool {
	uw := &a.inc.units
	for u, members := range uw.members {
		if int(uw.sec[u]) != si || uw.bound[u] {
			continue
		}
		for _, e := range members {
			if a.summarized(e) {
				break // its summary stands for it: decided, as a full fill finds it
			}
			if p, _ := a.memberItems(e); p != nil && p.inc && !p.prevRecall {
				return true
			}
		}
	}
	return false
}

// settleOrder puts section si's candidates, some of which came with
// their units ahead of their turn (pullUnit), in the walk's order, and
// the units' members' positions with them.
func (a *Assembler) settleOrder(si int) {
	uw := &a.inc.units
	if !uw.ahead {
		return
	}
	uw.ahead = false
	cands := a.secs[si].cands
	slices.SortStableFunc(cands, func(x, y candidate) int {
		return compareWalk(a.inc.pulledE[x.Index], a.inc.keys[x.Index], a.inc.pulledE[y.Index], a.inc.keys[y.Index])
	})
	for u := range a.plan.units {
		if int(uw.sec[u]) == si {
			a.plan.units[u].cands = a.plan.units[u].cands[:0]
		}
	}
	for ri := range a.deg.repls {
		if r := &a.deg.repls[ri]; r.si == si {
			r.mCands = r.mCands[:0]
		}
	}
	for j := range cands {
		if u := cands[j].unit; u != 0 {
			a.plan.units[u-1].cands = append(a.plan.units[u-1].cands, j)
		}
		if ri := cands[j].repl; ri != 0 {
			if r := &a.deg.repls[ri-1]; cands[j].summary {
				r.sCand = j
			} else {
				r.mCands = append(r.mCands, j)
			}
		}
	}
}

// bindMember binds candidate j of section si to unit u.
func (a *Assembler) bindMember(si int, u int32, j int) {
	a.secs[si].cands[j].unit = u + 1
	a.plan.units[u].cands = append(a.plan.units[u].cands, j)
}

// goneHeat appends the heat cells of the entries left out with their
// units to dst, for the assembly's HeatRecord.
func (u *unitWalk) goneHeat(dst []*ixHeat) []*ixHeat {
	for _, e := range u.goneE {
		dst = append(dst, e.heat)
	}
	return dst
}

// goneResult reports whether b, a tool result, is left out with a unit
// that cannot be sent whole, in an incremental assembly.
func (a *Assembler) goneResult(b *Block) bool { return a.inc.units.gone[b] }
