package assemble

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/declare"
)

// Units extended by the links added since they were made (extendUnits)
// are the units a full make finds: over random conversations that add
// tool exchanges a link or two at a time (a call whose result comes later,
// a result before its call, a second result of a call, calls that share
// an id across sessions, group members, a block in a group that also
// calls a tool), every member's unit, the units' sizes, whether each can
// be sent whole and their names are the same, and most additions extend.
func TestExtendedUnitsAreMadeUnits(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 1))
	extended, made := 0, 0
	for trial := range 300 {
		s := &ixSection{links: map[*Block]struct{}{}}
		n := 0
		link := func() *Block {
			n++
			b := &Block{ID: fmt.Sprintf("b%04d", r.IntN(10000)), Type: declare.History, Scope: declare.ScopeSession,
				SessionID: []string{"s1", "s2"}[r.IntN(2)]}
			call := fmt.Sprint("c", r.IntN(6+n/2)) // ids met again now and then
			switch k := r.IntN(10); {
			case k < 4:
				b.Role = declare.RoleAssistant
				b.EditRare().ToolCalls = []declare.ToolCall{{ID: call, Name: "f"}}
				if r.IntN(4) == 0 {
					b.EditRare().ToolCalls = append(b.EditRare().ToolCalls, declare.ToolCall{ID: call + "x", Name: "f"})
				}
			case k < 8:
				b.Role = declare.RoleTool
				b.EditRare().ToolCallID = call
			default:
				b.Role = declare.RoleAssistant
			}
			if r.IntN(5) == 0 || b.Role == declare.RoleAssistant && len(b.ToolCalls()) == 0 {
				b.EditRare().Group = fmt.Sprint("g", r.IntN(3+n/4))
			}
			return b
		}
		add := func(b *Block) bool {
			for o := range s.links {
				if o.ID == b.ID {
					return false
				}
			}
			s.links[b] = struct{}{}
			s.touch(b, true)
			return true
		}
		for range 8 + r.IntN(30) {
			add(link())
		}
		s.unitPlan()
		for step := range 40 {
			for range 1 + r.IntN(2) {
				add(link())
			}
			before := s.units
			got := s.unitPlan()
			if len(before.added) > 0 {
				if got.keys != nil && before.keys == nil {
					extended++
				} else {
					made++
				}
			}
			want := (&ixSection{links: maps.Clone(s.links)}).unitPlan()
			if !slices.Equal(got.blocks, want.blocks) || !slices.Equal(got.root, want.root) || !slices.Equal(got.size, want.size) ||
				!slices.Equal(got.broken, want.broken) || !slices.Equal(got.names, want.names) {
				t.Fatalf("trial %d step %d: extended units %v %v %v %v, made %v %v %v %v", trial, step,
					got.root, got.size, got.broken, got.names, want.root, want.size, want.broken, want.names)
			}
			for k, bs := range want.keys {
				if !sameBlocks(got.keys[k], bs) {
					t.Fatalf("trial %d step %d: key %v held by %d links extended, %d made", trial, step, k, len(got.keys[k]), len(bs))
				}
			}
		}
	}
	t.Logf("%d extended, %d made again", extended, made)
	if extended < made {
		t.Errorf("%d extended, %d made again: the additions do not cover extendUnits", extended, made)
	}
}

func sameBlocks(a, b []*Block) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	by := func(p, q *Block) int { return strings.Compare(p.ID, q.ID) }
	slices.SortFunc(a, by)
	slices.SortFunc(b, by)
	return slices.Equal(a, b)
}
