package contextasm

import (
	"cmp"
	"slices"
	"sync"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
)

// heatCell counts one block's renders (the cell every version of the
// block points at). Assemblies add to it without a lock; State reads it
// into the learned state.
type heatCell = assemble.Heat

// heatCells holds every block's render counters by request_id, also for
// blocks forgotten since: the heat counted and not yet in the learned
// state.
type heatCells struct {
	mu sync.Mutex
	m  map[string]*heatCell
}

// cellOf returns the heat cell of id, made on first use.
func (h *heatCells) cellOf(id string) *heatCell {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.m[id]
	if !ok {
		if h.m == nil {
			h.m = make(map[string]*heatCell)
		}
		c = new(heatCell)
		h.m[id] = c
	}
	return c
}

// forget drops the cells of ids: their blocks are gone, and so is their
// heat.
func (h *heatCells) forget(ids []string) {
	h.mu.Lock()
	for _, id := range ids {
		delete(h.m, id)
	}
	h.mu.Unlock()
}

// dropHeat deletes the heat of the blocks ids (forgotten, or their session
// ended): the counters not yet sent, and the learned state's, in the store
// too. Heat is kept for what is declared, so it is bounded by the store.
func (e *Engine) dropHeat(ids []string) {
	e.heat.forget(ids)
	e.rep.ForgetHeat(ids)
}

// take returns the heat counted since the last take, sorted by request_id,
// and zeroes the counters.
func (h *heatCells) take() []learned.HeatDelta {
	h.mu.Lock()
	defer h.mu.Unlock()
	var heat []learned.HeatDelta
	for id, c := range h.m {
		d := learned.Heat{Included: c.Included.Swap(0), Dropped: c.Dropped.Swap(0), Cut: c.Cut.Swap(0)}
		if d != (learned.Heat{}) {
			heat = append(heat, learned.HeatDelta{ID: id, Heat: d})
		}
	}
	slices.SortFunc(heat, func(a, b learned.HeatDelta) int { return cmp.Compare(a.ID, b.ID) })
	return heat
}

// addTo adds the heat counted and not yet taken to st.
func (h *heatCells) addTo(st *learned.State) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, c := range h.m {
		v, seen := st.Heat[id]
		v.Add(learned.Heat{Included: c.Included.Load(), Dropped: c.Dropped.Load(), Cut: c.Cut.Load()})
		if seen || v != (learned.Heat{}) {
			st.Heat[id] = v
		}
	}
}

// recordHeat counts, per block, the renders that kept, cut or dropped it:
// sections are an assembly of blocks.
func recordHeat(sections []SectionResult, blocks []*assemble.Block) {
	for si := range sections {
		for i := range sections[si].Blocks {
			b := &sections[si].Blocks[i]
			c := blocks[b.Index].Heat
			switch b.Status {
			case outcome.StatusKept:
				c.Included.Add(1)
			case outcome.StatusCut:
				c.Cut.Add(1)
			default:
				c.Dropped.Add(1)
			}
		}
	}
}
