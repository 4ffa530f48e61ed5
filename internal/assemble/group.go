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

// groupSection is groupUnits for one section.
func (a *Assembler) groupSection(sec *template.Section, blocks []*Block, out *Output, misses []truncate.RequiredMiss) []truncate.RequiredMiss {
	si := sec.Index()
	ranked := a.secs[si].ranked
	parent := make([]int, len(ranked))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(i, j int) {
		ri, rj := find(i), find(j)
		if ri < rj {
			ri, rj = rj, ri
		}
		parent[ri] = rj // the root is the member first in block order
	}
	byGroup := make(map[string]int)
	byCall := make(map[callKey]int)
	for i, r := range ranked {
		b := blocks[r.Index]
		if b.Group() != "" {
			if j, ok := byGroup[b.Group()]; ok {
				union(i, j)
			} else {
				byGroup[b.Group()] = i
			}
		}
		for _, tc := range b.ToolCalls() {
			byCall[callKey{b.SessionID, tc.ID}] = i
		}
	}
	orphan := make([]bool, len(ranked))
	answered := make(map[callKey]bool)
	for i, r := range ranked {
		b := blocks[r.Index]
		if b.ToolCallID() == "" {
			continue
		}
		k := callKey{b.SessionID, b.ToolCallID()}
		if j, ok := byCall[k]; ok && !answered[k] {
			union(i, j)
			answered[k] = true
		} else {
			orphan[i] = true // its call is not eligible, or was answered already
		}
	}
	size := make([]int, len(ranked))
	broken := make([]bool, len(ranked))
	for i, r := range ranked {
		b := blocks[r.Index]
		for _, tc := range b.ToolCalls() {
			if !answered[callKey{b.SessionID, tc.ID}] {
				orphan[i] = true
			}
		}
		root := find(i)
		size[root]++
		broken[root] = broken[root] || orphan[i]
	}
	// Name each unit: its smallest declared group, else the (first, by
	// request_id) assistant turn that makes calls.
	names := make(map[int]string)
	for i, r := range ranked {
		if g := blocks[r.Index].Group(); g != "" {
			if name, ok := names[find(i)]; !ok || g < name {
				names[find(i)] = g
			}
		}
	}
	for i, r := range ranked {
		if b := blocks[r.Index]; len(b.ToolCalls()) > 0 {
			if _, ok := names[find(i)]; !ok {
				names[find(i)] = b.ID
			}
		}
	}
	// Leave broken units out; make the others units.
	ids := make(map[int]int32)
	kept := ranked[:0]
	for i, r := range ranked {
		root := find(i)
		b := blocks[r.Index]
		if broken[root] {
			reason := outcome.ReasonGroup
			if orphan[i] {
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
				a.plan.units = append(a.plan.units, unit{name: names[root]})
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
