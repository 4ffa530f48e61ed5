package assemble

import (
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// planUnits is the planning pass: it finds what is decided together,
// the units (groups, a tool call with its results) and the replacements
// (a summary and the turns it replaces, summary.go). It runs before the
// ranking, because a unit with a required member is required whole.
func (a *Assembler) planUnits(r *run) {
	r.misses = a.groupUnits(r.tpl, r.blocks, r.out, r.misses)
	a.buildRepls(r.tpl, r.blocks, r.out)
}

// plan is the planning pass's units: the blocks of each unit, and each
// member's unit.
type plan struct {
	units  []unit
	unitOf map[int32]int32 // block index → its unit in units
}

// A unit is blocks of one section that are kept or dropped together: the
// blocks of one declared group, and an assistant turn with the tool
// results that answer its calls (joined into one unit when they share a
// block). Only units of two or more blocks are units here; a block with a
// group of its own is an ordinary block.
type unit struct {
	name     string // the smallest declared group, else the assistant turn's request_id
	required bool   // a member is required, so all are
	cands    []int  // the members' positions in their section's candidates
}

// addUnit appends a unit named name to units, with the array of
// candidates the unit at its place held in an earlier assembly: a long
// conversation's hundreds of tool exchanges are units at every call.
func addUnit(units []unit, name string) []unit {
	n := len(units)
	if n == cap(units) {
		return append(units, unit{name: name})
	}
	units = units[:n+1]
	units[n] = unit{name: name, cands: units[n].cands[:0]}
	return units
}

// callKey identifies a tool call within its session.
type callKey struct{ session, id string }

// groupUnits finds the units among the eligible blocks of every section
// (a.ranked, before ranking) and leaves out, with events, every unit that
// cannot be sent whole: one with a tool result whose call is not eligible,
// or a call whose result is not. Members of the units that stay become
// required when one of them is, and a.plan.unitOf maps their block index to
// their unit. It costs a scan of each section and nothing more when no
// block is grouped or linked.
func (a *Assembler) groupUnits(tpl *template.Template, blocks []*Block, out *Output, misses []truncate.RequiredMiss) []truncate.RequiredMiss {
	a.plan.units = a.plan.units[:0]
	clear(a.plan.unitOf)
	for si := range a.secs {
		ranked := a.secs[si].ranked
		linked := false
		for _, r := range ranked {
			if b := blocks[r.Index]; b.Group() != "" || len(b.ToolCalls()) > 0 || b.ToolCallID() != "" {
				linked = true
				break
			}
		}
		if !linked {
			continue
		}
		misses = a.groupSection(tpl.Section(si), blocks, out, misses)
	}
	return misses
}

// groupSection is groupUnits for one section: it joins the blocks that
// share a group, and each tool result to the assistant turn that makes its
// call, into sets (union-find over the section's ranked blocks), marks the
// sets that cannot be sent whole, names each set, and makes the rest units.
func (a *Assembler) groupSection(sec *template.Section, blocks []*Block, out *Output, misses []truncate.RequiredMiss) []truncate.RequiredMiss {
	si := sec.Index()
	ranked := a.secs[si].ranked
	g := newGrouper(ranked, blocks)
	g.link()
	if on, _, _ := sec.ClearToolResults(); on {
		a.nameCalls(ranked, blocks)
	}
	broken, size := g.sets()
	names := g.names()
	// Leave broken units out; make the others units.
	ids := make(map[int]int32)
	kept := ranked[:0]
	for i, r := range ranked {
		root := g.find(i)
		b := blocks[r.Index]
		if broken[root] {
			reason := outcome.ReasonGroup
			if g.orphan[i] {
				reason = outcome.ReasonOrphan
			}
			out.Events = append(out.Events, outcome.Event{Kind: outcome.KindExcluded, Section: sec.Name(), RequestID: b.ID, Reason: reason, Group: names[root]})
			if b.Required {
				misses = append(misses, truncate.RequiredMiss{RequestID: b.ID, Section: sec.Name(), Reason: outcome.ReasonOrphan})
			}
			continue
		}
		if size[root] > 1 {
			u, ok := ids[root]
			if !ok {
				u = int32(len(a.plan.units))
				ids[root] = u
				a.plan.units = addUnit(a.plan.units, names[root])
			}
			if a.plan.unitOf == nil {
				a.plan.unitOf = make(map[int32]int32)
			}
			a.plan.unitOf[r.Index] = u
			a.plan.units[u].required = a.plan.units[u].required || r.Required
		}
		kept = append(kept, r)
	}
	clear(ranked[len(kept):])
	a.secs[si].ranked = kept
	for i, r := range kept {
		if u, ok := a.plan.unitOf[r.Index]; ok && a.plan.units[u].required {
			kept[i].Required = true
		}
	}
	return misses
}

// grouper joins one section's blocks into the sets decided together.
type grouper struct {
	ranked   []Ranked
	blocks   []*Block
	parent   []int            // union-find over positions in ranked
	orphan   []bool           // a tool result without its call, or a call without a result
	answered map[callKey]bool // calls with their result in the section
}

func newGrouper(ranked []Ranked, blocks []*Block) *grouper {
	g := &grouper{ranked: ranked, blocks: blocks, parent: make([]int, len(ranked)), orphan: make([]bool, len(ranked)), answered: make(map[callKey]bool)}
	for i := range g.parent {
		g.parent[i] = i
	}
	return g
}

func (g *grouper) find(i int) int {
	for g.parent[i] != i {
		g.parent[i] = g.parent[g.parent[i]]
		i = g.parent[i]
	}
	return i
}

// union joins the sets of i and j; the root is the member first in block
// order.
func (g *grouper) union(i, j int) {
	ri, rj := g.find(i), g.find(j)
	if ri < rj {
		ri, rj = rj, ri
	}
	g.parent[ri] = rj
}

// link joins the blocks of each declared group, and each tool result to
// the turn that makes its call (the first result of a call; another is an
// orphan, as is one whose call is not here).
func (g *grouper) link() {
	byGroup := make(map[string]int)
	byCall := make(map[callKey]int)
	for i, r := range g.ranked {
		b := g.blocks[r.Index]
		if b.Group() != "" {
			if j, ok := byGroup[b.Group()]; ok {
				g.union(i, j)
			} else {
				byGroup[b.Group()] = i
			}
		}
		for _, tc := range b.ToolCalls() {
			byCall[callKey{b.SessionID, tc.ID}] = i
		}
	}
	for i, r := range g.ranked {
		b := g.blocks[r.Index]
		if b.ToolCallID() == "" {
			continue
		}
		k := callKey{b.SessionID, b.ToolCallID()}
		if j, ok := byCall[k]; ok && !g.answered[k] {
			g.union(i, j)
			g.answered[k] = true
		} else {
			g.orphan[i] = true // its call is not eligible, or was answered already
		}
	}
}

// sets marks the calls without a result orphans, and returns, by root,
// whether a set holds an orphan (it cannot be sent whole) and its size.
func (g *grouper) sets() (broken []bool, size []int) {
	size = make([]int, len(g.ranked))
	broken = make([]bool, len(g.ranked))
	for i, r := range g.ranked {
		b := g.blocks[r.Index]
		for _, tc := range b.ToolCalls() {
			if !g.answered[callKey{b.SessionID, tc.ID}] {
				g.orphan[i] = true
			}
		}
		root := g.find(i)
		size[root]++
		broken[root] = broken[root] || g.orphan[i]
	}
	return broken, size
}

// names names each set by its root: its smallest declared group, else
// the (first, by request_id) assistant turn that makes calls.
func (g *grouper) names() map[int]string {
	names := make(map[int]string)
	for i, r := range g.ranked {
		if gr := g.blocks[r.Index].Group(); gr != "" {
			if name, ok := names[g.find(i)]; !ok || gr < name {
				names[g.find(i)] = gr
			}
		}
	}
	for i, r := range g.ranked {
		if b := g.blocks[r.Index]; len(b.ToolCalls()) > 0 {
			if _, ok := names[g.find(i)]; !ok {
				names[g.find(i)] = b.ID
			}
		}
	}
	return names
}

// bindUnits records where the members of section si's units stand in its
// ranked candidates.
func (a *Assembler) bindUnits(si int) {
	if len(a.plan.unitOf) == 0 {
		return
	}
	for i := range a.secs[si].cands {
		cd := &a.secs[si].cands[i]
		if u, ok := a.plan.unitOf[cd.Index]; ok {
			cd.unit = u + 1
			a.plan.units[u].cands = append(a.plan.units[u].cands, i)
		}
	}
}

// unitOfCand returns cd's unit, or nil.
func (a *Assembler) unitOfCand(cd *candidate) *unit {
	if cd.unit == 0 {
		return nil
	}
	return &a.plan.units[cd.unit-1]
}

// groupName returns the group a block's results name: its unit's name, or
// its own declared group.
func (a *Assembler) groupName(cd *candidate, b *Block) string {
	if u := a.unitOfCand(cd); u != nil {
		return u.name
	}
	return b.Group()
}
