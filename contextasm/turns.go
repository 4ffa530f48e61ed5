package contextasm

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/grouped"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/template"
)

// Incremental assembly. For each request shape (template, session, user
// and roles) the Engine keeps an assemble.Index of the store: each
// section's eligible blocks in rank order and the hidden ones counted.
// An assembly brings the index up to its snapshot by applying the changes
// of the snapshots in between (storeLog), moves it to its now, and fills
// the sections from it, looking at no more blocks than the fill can use;
// the rows and events that list every block are made from scratch only
// when the Result is asked for them (Result.Sections). The indexes count
// the heat of the blocks they drop lazily: State and the heat sent to a
// state store settle it first.

// shapeKey is a request shape: what an index serves.
type shapeKey struct {
	tpl                  *template.Template
	session, user, roles string
}

// like reports whether o is k's shape but for the session: an index of
// one can be made or taken over for the other (donor, takeSpare).
func (k shapeKey) like(o shapeKey) bool {
	return k.tpl == o.tpl && k.user == o.user && k.roles == o.roles
}

// shapeIndex is one shape's index, locked while it is brought up to date
// and assembled from.
type shapeIndex struct {
	mu      sync.Mutex
	key     shapeKey
	x       *assemble.Index
	version uint64 // the snapshot version x is at
	gone    bool   // evicted: its heat is settled and it serves no more
	// Guarded by indexSet.mu: its place in indexSet.list, when it last
	// served (indexSet.tick), and its size then (Index.Bytes).
	at    int
	used  uint64
	bytes int
}

// indexSet is an Engine's indexes, bounded in number (Config.MaxIndexes)
// and in the memory they hold together (Config.IndexBytes), the least
// recently used going first. Finding a shape's index, and dropping a
// session's, cost a map lookup; only an eviction or a build (donor) reads
// the list.
type indexSet struct {
	mu        sync.Mutex
	list      []*shapeIndex // in no order (shapeIndex.at)
	byKey     map[shapeKey]*shapeIndex
	bySession map[string][]*shapeIndex
	tick      uint64
	bytes     int // what list and spare hold
	evicted   int // for the tests
	// spare are the indexes of the sessions ended last (maxSpare, the
	// newest last): a new session of the same template, user and roles
	// takes one over (takeSpare), or, when none is left to take, a new
	// session's build copies one's documents (donor). They count in
	// bytes, and go first when the indexes hold too much.
	spare []*spareIndex
}

// spareIndex is an ended session's index, the shape it was of, the
// snapshot version it is at, and its size. A donor reads it under a read
// lock; a new session that takes it over (takeSpare) waits for them.
type spareIndex struct {
	mu      sync.RWMutex
	key     shapeKey
	x       *assemble.Index
	version uint64
	bytes   int
}

// maxSpare is how many ended sessions' indexes an Engine keeps, for new
// sessions to take over or copy documents from: one per template, user
// and roles a churn of sessions goes through at once is enough, and they
// cost one session's index each.
const maxSpare = 4

// index returns the index of req's shape, made (empty) on first use.
func (e *Engine) index(req Request) *shapeIndex {
	k := shapeKey{tpl: req.Template, session: req.SessionID, user: req.UserID, roles: rolesKey(req.Roles)}
	s := &e.ixs
	s.mu.Lock()
	s.tick++
	if si, ok := s.byKey[k]; ok {
		si.used = s.tick
		s.mu.Unlock()
		return si
	}
	if s.byKey == nil {
		s.byKey, s.bySession = make(map[shapeKey]*shapeIndex), make(map[string][]*shapeIndex)
	}
	si := &shapeIndex{key: k, at: len(s.list), used: s.tick,
		x: assemble.NewIndex(req.Template, assemble.Request{SessionID: req.SessionID, UserID: req.UserID, Roles: req.Roles}, e.cfg.Scoring)}
	s.list = append(s.list, si)
	s.byKey[k] = si
	s.bySession[k.session] = append(s.bySession[k.session], si)
	var evicted []*shapeIndex
	if len(s.list) > e.cfg.MaxIndexes {
		evicted = append(evicted, s.evict(si))
	}
	s.mu.Unlock()
	retireAll(evicted)
	return si
}

// sized records si's size after an assembly, and evicts the least
// recently used indexes, spare ones first, while they hold more than
// limit together; never si. The caller holds si.mu, not s.mu, and
// retires the evicted ones it returns once si.mu is let go.
func (s *indexSet) sized(si *shapeIndex, limit int) (evicted []*shapeIndex) {
	b := si.x.Bytes()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKey[si.key] != si {
		return nil // ended or evicted meanwhile
	}
	s.bytes += b - si.bytes
	si.bytes = b
	for s.bytes > limit && len(s.spare) > 0 {
		s.bytes -= s.spare[0].bytes
		s.spare = slices.Delete(s.spare, 0, 1)
	}
	for s.bytes > limit && len(s.list) > 1 {
		evicted = append(evicted, s.evict(si))
	}
	return evicted
}

// retireAll retires the indexes evicted.
func retireAll(evicted []*shapeIndex) {
	for _, si := range evicted {
		si.retire()
	}
}

// evict takes the least recently used index other than keep out of s and
// returns it, to be retired once s.mu is let go. The caller holds s.mu;
// s holds another index than keep.
func (s *indexSet) evict(keep *shapeIndex) *shapeIndex {
	var old *shapeIndex
	for _, si := range s.list {
		if si != keep && (old == nil || si.used < old.used) {
			old = si
		}
	}
	s.remove(old)
	s.evicted++
	return old
}

// remove takes si out of s. The caller holds s.mu.
func (s *indexSet) remove(si *shapeIndex) {
	last := s.list[len(s.list)-1]
	s.list[si.at], last.at = last, si.at
	s.list[len(s.list)-1] = nil
	s.list = s.list[:len(s.list)-1]
	delete(s.byKey, si.key)
	if same := slices.DeleteFunc(s.bySession[si.key.session], func(o *shapeIndex) bool { return o == si }); len(same) > 0 {
		s.bySession[si.key.session] = same
	} else {
		delete(s.bySession, si.key.session)
	}
	s.bytes -= si.bytes
}

// donor returns an index whose lexical documents a build of si can copy
// (Index.BuildFrom), and the function that lets it go: another session's
// with si's template, user and roles, most recently used first, else the
// index of such a session that ended (spare). A new session's first call
// then costs what its documents differ by, not the store. An index
// another call holds is not waited for.
func (e *Engine) donor(si *shapeIndex) (*assemble.Index, func()) {
	s := &e.ixs
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *shapeIndex
	for _, d := range s.list {
		if d == si || !si.key.like(d.key) || (best != nil && d.used < best.used) || !d.mu.TryLock() {
			continue
		}
		if d.gone {
			d.mu.Unlock()
			continue
		}
		if best != nil {
			best.mu.Unlock()
		}
		best = d
	}
	if best != nil {
		return best.x, best.mu.Unlock
	}
	for i := len(s.spare) - 1; i >= 0; i-- {
		if sp := s.spare[i]; si.key.like(sp.key) && sp.mu.TryRLock() {
			return sp.x, sp.mu.RUnlock
		}
	}
	return nil, nil
}

// takeSpare takes out of the spare indexes the newest one of si's
// template, user and roles, for si to take over (catchUp), or returns
// nil. It waits for the donors reading it.
func (e *Engine) takeSpare(si *shapeIndex) *spareIndex {
	s := &e.ixs
	s.mu.Lock()
	var sp *spareIndex
	for i := len(s.spare) - 1; i >= 0; i-- {
		if si.key.like(s.spare[i].key) {
			sp = s.spare[i]
			s.spare = slices.Delete(s.spare, i, i+1)
			s.bytes -= sp.bytes
			break
		}
	}
	s.mu.Unlock()
	if sp != nil {
		sp.mu.Lock() // never let go: no one else finds it now
	}
	return sp
}

// dropIndexes drops the indexes of session's request shapes (the session
// ended), settling their heat first; they become spare.
func (e *Engine) dropIndexes(session string) {
	s := &e.ixs
	s.mu.Lock()
	gone := slices.Clone(s.bySession[session])
	for _, si := range gone {
		s.remove(si)
	}
	s.mu.Unlock()
	for _, si := range gone {
		if x, version := si.retire(); x != nil {
			s.mu.Lock()
			s.spare = append(s.spare, &spareIndex{key: si.key, x: x, version: version, bytes: si.bytes})
			s.bytes += si.bytes
			if len(s.spare) > maxSpare {
				s.bytes -= s.spare[0].bytes
				s.spare = slices.Delete(s.spare, 0, 1)
			}
			s.mu.Unlock()
		}
	}
}

// retire settles the index's heat and lets it go: it serves no more. It
// returns the index let go and the snapshot version it is at (nil when it
// was gone already).
func (si *shapeIndex) retire() (*assemble.Index, uint64) {
	si.mu.Lock()
	defer si.mu.Unlock()
	if si.gone {
		return nil, 0
	}
	x := si.x
	x.Settle()
	si.gone, si.x = true, nil
	return x, si.version
}

// settleHeat moves the drops the indexes counted lazily into the heat
// cells, before they are read.
func (e *Engine) settleHeat() {
	e.ixs.mu.Lock()
	list := slices.Clone(e.ixs.list)
	e.ixs.mu.Unlock()
	for _, si := range list {
		si.mu.Lock()
		if !si.gone {
			si.x.Settle()
		}
		si.mu.Unlock()
	}
}

// catchUp brings si's index to snap at now, and reports false when it
// cannot serve snap (an index already at a later snapshot). A new index
// takes over a spare one of an ended session when it can (adopt), else
// it is built, with another's documents when one has them (donor). The
// caller holds si.mu.
func (e *Engine) catchUp(si *shapeIndex, snap *snapshot, now time.Time) bool {
	if si.gone || si.version > snap.version {
		return false
	}
	build := !si.x.Built()
	if build && e.adopt(si, snap) {
		build = false
	} else if !build && !e.replay(si.x, si.version, snap.version) {
		build = true // the log no longer has them, or they are the whole store
	}
	si.version = snap.version
	x := si.x
	switch {
	case build:
		d, release := e.donor(si)
		if d == nil {
			x.Build(snap.blocks(), now)
			break
		}
		if x.BuildFrom(snap.blocks(), now, d) {
			e.donated.Add(1)
		}
		release()
	case !x.Serves(now):
		var blocks []*assemble.Block // the store, only when a section is made again
		if x.Remakes(now) {
			blocks = snap.blocks()
		}
		x.Refresh(blocks, now)
	}
	return true
}

// replay applies to x, at snapshot version from, the changes of the
// versions after it up to to, and reports false when the log no longer
// has them one by one (then x is to be built).
func (e *Engine) replay(x *assemble.Index, from, to uint64) bool {
	for v := from + 1; v <= to; v++ {
		changes, ok := e.log.at(v)
		if !ok {
			return false
		}
		for _, c := range changes {
			x.Update(c.old, c.new)
		}
	}
	return true
}

// adopt makes si, a new session's index, the spare index of an ended
// session of the same template, user and roles, brought to snap and
// retargeted to si's session (Index.Retarget): a session started after
// another ended costs the blocks the two hold and the changes since, not
// a build from the store. It reports false, leaving si as it was, when
// no spare is left or the log no longer has the changes since.
func (e *Engine) adopt(si *shapeIndex, snap *snapshot) bool {
	sp := e.takeSpare(si)
	if sp == nil {
		return false
	}
	if sp.version > snap.version || !e.replay(sp.x, sp.version, snap.version) {
		return false // the spare is let go
	}
	if sp.key.session != si.key.session { // the same session again: nothing moves
		moved, ok := e.sessionBlocksAt(snap, sp.key.session, si.key.session)
		if !ok {
			return false
		}
		sp.x.Retarget(si.key.session, moved)
	}
	si.x = sp.x
	e.adopted.Add(1)
	return true
}

// sessionBlocksAt returns the session-scoped blocks of sessions in snap,
// sorted by request_id, or false when snap is no longer the current
// snapshot (the Engine's index by session is the current one's). The
// caller may hold an index's lock: e.mu is never held while one is
// taken.
func (e *Engine) sessionBlocksAt(snap *snapshot, sessions ...string) ([]*assemble.Block, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.current() != snap {
		return nil, false
	}
	var out []*assemble.Block
	for _, s := range sessions {
		for id := range e.bySession[s] {
			if b, ok := snap.set.get(id); ok {
				out = append(out, b)
			}
		}
	}
	slices.SortFunc(out, func(a, b *assemble.Block) int { return strings.Compare(a.ID, b.ID) })
	return out, true
}

// assembleIndexed is an incremental assembly of areq, from req's index at
// snap; ok is false when it cannot be one (then nothing was counted). The
// explanation it returns makes the full assembly on first use, which must
// give the same text: it panics if not, which would be a bug.
func (e *Engine) assembleIndexed(req Request, areq assemble.Request, snap *snapshot, asm *assemble.Assembler, counter Counter) (out *assemble.Output, heat *heatRecord, why *explanation, ok bool, err error) {
	if req.ListHidden || e.cfg.Audit != nil || e.fullOnly {
		return nil, nil, nil, false, nil
	}
	si := e.index(req)
	out, rec, evicted, ok, err := e.assembleFrom(si, req, areq, snap, asm, counter)
	retireAll(evicted)
	if !ok || err != nil {
		return nil, nil, nil, ok, err
	}
	memo := asm.Memo
	why = &explanation{explain: func() *assemble.Output {
		a := e.pool.Get().(*assemble.Assembler)
		a.Memo = memo
		full, err := a.AssembleRefs(req.Template, snap.blocks(), areq, counter)
		a.Memo = e.memo
		e.pool.Put(a)
		if err != nil || full.Text != out.Text || full.TotalTokens != out.TotalTokens || !sameMessages(full.Messages, out.Messages) {
			panic(fmt.Sprintf("contextasm: the assembly made again from scratch differs from the incremental one (error %v): please report it", err))
		}
		return full
	}}
	e.indexed.Add(1)
	return out, &heatRecord{si: si, rec: rec}, why, true, nil
}

// assembleFrom assembles areq from si's index, brought to snap, under
// si.mu; the indexes the Engine evicts for its memory then (sized) are
// retired by the caller, once si.mu is let go.
func (e *Engine) assembleFrom(si *shapeIndex, req Request, areq assemble.Request, snap *snapshot, asm *assemble.Assembler, counter Counter) (out *assemble.Output, rec *assemble.HeatRecord, evicted []*shapeIndex, ok bool, err error) {
	si.mu.Lock()
	defer si.mu.Unlock()
	if !e.catchUp(si, snap, req.Now) {
		return nil, nil, nil, false, nil
	}
	out, rec, ok, err = asm.AssembleIndexed(si.x, areq, counter, snap.set.get)
	return out, rec, e.ixs.sized(si, e.cfg.IndexBytes), ok, err
}

// heatRecord counts an incremental assembly's heat again, for a warm
// re-assembly.
type heatRecord struct {
	si  *shapeIndex
	rec *assemble.HeatRecord
}

// again counts the render again and reports true, unless the index has
// changed since (then the caller counts it from its sections).
func (h *heatRecord) again() bool {
	h.si.mu.Lock()
	defer h.si.mu.Unlock()
	return !h.si.gone && h.rec.Again()
}

// at returns the changes that made version, when the log still keeps them
// and they are few enough to apply one by one.
func (l *storeLog) at(version uint64) ([]change, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.ring[version%uint64(len(l.ring))]
	if e.version != version || e.whole {
		return nil, false
	}
	return e.changes, true
}

// renderMemo is the Assembler's memo of the text of kept blocks: a bounded
// cache keyed as blockMemo, so a block kept turn after turn is rendered (and
// its delimiters neutralised) once.
type renderMemo struct {
	cache *grouped.Cache[assemble.MemoKey, [16]byte, rendered] // indexed by block
}

type rendered struct {
	text    string
	escaped bool
}

func (m renderMemo) GetRender(k assemble.MemoKey) (string, bool, bool) {
	r, ok := m.cache.Get(k)
	return r.text, r.escaped, ok
}

func (m renderMemo) AddRender(k assemble.MemoKey, text string, escaped bool) {
	m.cache.Add(k, rendered{text, escaped})
}

// sameMessages reports whether two assemblies wrote the same messages:
// roles, contents and blocks (what a body is made of).
func sameMessages(a, b []chat.Message) bool {
	return slices.EqualFunc(a, b, func(x, y chat.Message) bool {
		return x.Role == y.Role && x.Content == y.Content && x.ToolCallID == y.ToolCallID && slices.Equal(x.BlockIDs, y.BlockIDs) &&
			x.CacheBreakpoint == y.CacheBreakpoint
	})
}
