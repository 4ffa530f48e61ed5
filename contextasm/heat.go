package contextasm

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
)

// Heat is sent to a store in proportion to what happened. An assembly
// counts into the cells of the blocks it rendered and, with a store,
// notes those cells as moved; the heat taken each HeatEvery is the moved
// cells', not every block's. The drops of an incremental assembly are
// counted lazily in its index (every eligible block not in its text);
// they reach the cells in a settle, which visits every block and so is
// made rarely: when the indexes have served heatSettleShare assemblies
// per block (the settle's cost spread over them), when heatSettleEvery
// has passed since the last one, and on Flush, State and Close. A process
// killed between settles loses the drops counted since the last one (as
// it loses the heat of the last HeatEvery): counters for reports, never
// trust.

// heatSettleShare is the cells a settle may visit per assembly it
// follows: a settle is due once the indexes have served cells/share
// assemblies since the last one. 16 is less than an assembly's text
// moves on the bench workload.
const heatSettleShare = 16

// heatSettleEvery bounds the time between settles while assemblies come.
const heatSettleEvery = time.Minute

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
	// moved, kept only with a store (track), holds the cells counted into
	// since the last take, with their ids: what the next take reads,
	// unless all is set (a settle moved cells it did not note), when it
	// reads every cell.
	track bool
	moved map[*heatCell]string
	all   bool

	lazy      atomic.Int64 // assemblies served from an index since the last settle
	settledAt time.Time    // the last settle (wall clock); guarded by mu
	visited   int64        // cells take has looked at, for the tests; guarded by mu
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
		if c, ok := h.m[id]; ok {
			delete(h.moved, c)
			delete(h.m, id)
		}
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
// and zeroes the counters: the moved cells', or every cell's after a
// settle.
func (h *heatCells) take() []learned.HeatDelta {
	h.mu.Lock()
	defer h.mu.Unlock()
	var heat []learned.HeatDelta
	add := func(id string, c *heatCell) {
		h.visited++
		d := learned.Heat{Included: c.Included.Swap(0), Dropped: c.Dropped.Swap(0), Cut: c.Cut.Swap(0)}
		if d != (learned.Heat{}) {
			heat = append(heat, learned.HeatDelta{ID: id, Heat: d})
		}
	}
	if h.all || !h.track {
		for id, c := range h.m {
			add(id, c)
		}
	} else {
		for c, id := range h.moved {
			if h.m[id] == c { // not a cell forgotten since
				add(id, c)
			}
		}
	}
	if len(h.moved) > 4096 {
		h.moved = nil // a full assembly's rows: not kept for the next take
	} else {
		clear(h.moved)
	}
	h.all = false
	slices.SortFunc(heat, func(a, b learned.HeatDelta) int { return cmp.Compare(a.ID, b.ID) })
	return heat
}

// note records that the cells of blocks moved (a render counted into
// them); nothing without a store, whose takes read the moved cells.
func (h *heatCells) note(n int, block func(i int) *assemble.Block) {
	if !h.track || n == 0 {
		return
	}
	h.mu.Lock()
	if h.moved == nil {
		h.moved = make(map[*heatCell]string)
	}
	for i := range n {
		if b := block(i); b.Heat != nil {
			h.moved[b.Heat] = b.ID
		}
	}
	h.mu.Unlock()
}

// settleDue reports whether a settle is due at now (see
// heatSettleShare).
func (h *heatCells) settleDue(now time.Time) bool {
	lazy := h.lazy.Load()
	if lazy == 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.settledAt.IsZero() {
		h.settledAt = now
	}
	return lazy*heatSettleShare >= int64(len(h.m)) || now.Sub(h.settledAt) >= heatSettleEvery
}

// settleFor is the replica's hook: before a take, the indexes' lazy drops
// are moved into the cells when force says so (Flush) or a settle is due.
// The next take then reads every cell: marked after the drops moved, so
// that a take in between does not clear the mark before them.
func (e *Engine) settleFor(force bool) {
	now := time.Now()
	if !force && !e.heat.settleDue(now) {
		return
	}
	e.heat.lazy.Store(0)
	e.settleHeat()
	e.heat.mu.Lock()
	e.heat.settledAt, e.heat.all = now, true
	e.heat.mu.Unlock()
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

// countHeat counts memo's render into its blocks' heat (in snap), unless
// it was counted already (counted: an incremental assembly counts its
// own), and notes the cells it moved. An incremental
// assembly, or its repeat, moves the cells of its text; its drops wait in
// its index until a settle.
func (e *Engine) countHeat(memo *assembled, counted bool, snap *snapshot) {
	if counted || (memo.heat != nil && memo.heat.again()) {
		e.heat.lazy.Add(1)
		rec := memo.heat.rec
		e.heat.note(rec.InText(), func(i int) *assemble.Block { b, _ := rec.At(i); return b })
		return
	}
	sections, blocks := memo.explained().Sections, snap.blocks()
	recordHeat(sections, blocks)
	rows := 0
	for si := range sections {
		rows += len(sections[si].Blocks)
	}
	if e.heat.noteAll(rows) {
		return
	}
	for si := range sections {
		rows := sections[si].Blocks
		e.heat.note(len(rows), func(i int) *assemble.Block { return blocks[rows[i].Index] })
	}
}

// noteAll makes the next take read every cell, rather than note rows
// cells one by one, when they are a quarter of the cells or more (a full
// assembly of a store lists every eligible block), and reports whether it
// did.
func (h *heatCells) noteAll(rows int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.track || 4*rows < len(h.m) {
		return false
	}
	h.all = true
	return true
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
