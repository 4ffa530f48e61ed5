package replica

import "github.com/contextasm/contextasm/learned"

// local is a writer's local copy of a shared learned state: the store's
// state as of a version (the base), with this writer's batches the store
// has not yet included played on top of it (the view). The view of a key
// with no pending delta is the base's value; the view of a key with
// pending deltas is its base value with those deltas replayed by
// learned.State.Apply, so the view is always what the store will hold once
// it has applied them, given the changes the replica has seen. A local is
// not safe for concurrent use: its Replica locks around it.
type local struct {
	writer  string
	shared  bool
	view    *learned.State
	version learned.Version
	nextSeq uint64
	serial  uint64 // last local serial given by Add

	pending []*entry // oldest first; those with a Seq were sent
	deltas  int      // deltas in pending
	heatN   int      // of which heat deltas

	trust map[string]*trustKey
	heat  map[string]learned.Heat // pending increments: view = base + these
	sess  map[string]*sessKey

	// bySession holds the view's session keys by session (the key's
	// first part), so that a session's conversations are found without
	// a walk of every conversation's.
	bySession map[string]map[string]struct{}
}

type entry struct {
	b      learned.Batch
	acked  bool
	first  uint64 // the first Add it holds (a merge holds several)
	serial uint64 // the last Add it holds
}

// trustKey is a trust key with pending deltas: its value in the base and
// the deltas, in order.
type trustKey struct {
	base   float64
	has    bool
	deltas []learned.TrustDelta
}

type sessKey struct {
	base   *learned.SessionState // nil: none in the base
	deltas []learned.SessionDelta
}

// newLocal returns an empty copy for writer. A copy that is not shared
// has no store: Add applies batches to the base at once.
func newLocal(writer string, shared bool) *local {
	return &local{
		writer: writer, shared: shared, view: learned.NewState(),
		trust: map[string]*trustKey{}, heat: map[string]learned.Heat{}, sess: map[string]*sessKey{},
	}
}

// View returns the view. It stays the same *State for the replica's life,
// changed in place; callers must not change it.
func (r *local) View() *learned.State { return r.view }

// Version returns the store's version the base is at.
func (r *local) Version() learned.Version { return r.version }

// Writer returns the writer's name.
func (r *local) Writer() string { return r.writer }

// Pending returns the number of deltas not yet in the base.
func (r *local) Pending() int { return r.deltas }

// Unacked returns the number of deltas the store has not acknowledged:
// Pending less those of batches acknowledged but not yet in the base.
func (r *local) Unacked() int {
	n := 0
	for _, e := range r.pending {
		if !e.acked {
			n += e.b.Len()
		}
	}
	return n
}

// Serial returns the serial of the last Add.
func (r *local) Serial() uint64 { return r.serial }

// Stored reports whether every batch added up to serial was acknowledged
// by the store (or is in the base).
func (r *local) Stored(serial uint64) bool {
	for _, e := range r.pending {
		if e.first > serial { // a merge holding serial starts at or before it
			break
		}
		if !e.acked {
			return false
		}
	}
	return true
}

// Add plays b (Writer and Seq unset) onto the view and queues it for the
// store. It returns the trust ids it moved.
func (r *local) Add(b learned.Batch) []string {
	if b.Len() == 0 {
		return nil
	}
	r.serial++
	if !r.shared {
		r.view.Apply(&b)
		r.indexSessions(b.Sessions)
		return ids(b.Trust)
	}
	for _, d := range b.Trust {
		k := r.trust[d.ID]
		if k == nil {
			t, has := r.view.Trust[d.ID] // no pending delta: the view is the base
			k = &trustKey{base: t, has: has}
			r.trust[d.ID] = k
		}
		k.deltas = append(k.deltas, d)
	}
	for _, d := range b.Heat {
		h := r.heat[d.ID]
		h.Add(d.Heat)
		r.heat[d.ID] = h
	}
	for _, d := range b.Sessions {
		k := r.sess[d.Key]
		if k == nil {
			k = &sessKey{base: r.view.Sessions[d.Key]}
			r.sess[d.Key] = k
		}
		k.deltas = append(k.deltas, d)
	}
	r.view.Apply(&b)
	r.indexSessions(b.Sessions)
	r.pending = append(r.pending, &entry{b: b, first: r.serial, serial: r.serial})
	r.deltas += b.Len()
	r.heatN += len(b.Heat)
	return ids(b.Trust)
}

// Next returns the batch to send: the oldest one not acknowledged, exactly
// as it was sent before if it was; otherwise the oldest waiting batches,
// merged up to max deltas, under the next Seq. Nil means nothing to send.
// The batch must not be changed.
func (r *local) Next(max int) *learned.Batch {
	i := 0
	for i < len(r.pending) && r.pending[i].acked {
		i++
	}
	if i == len(r.pending) {
		return nil
	}
	first := r.pending[i]
	if first.b.Seq != 0 {
		return &first.b
	}
	j, n := i+1, first.b.Len()
	for j < len(r.pending) && n+r.pending[j].b.Len() <= max {
		n += r.pending[j].b.Len()
		j++
	}
	merged := &entry{first: first.first, serial: r.pending[j-1].serial}
	for _, e := range r.pending[i:j] {
		merged.b.Trust = append(merged.b.Trust, e.b.Trust...)
		merged.b.Heat = append(merged.b.Heat, e.b.Heat...)
		merged.b.Sessions = append(merged.b.Sessions, e.b.Sessions...)
	}
	r.nextSeq++
	merged.b.Writer, merged.b.Seq = r.writer, r.nextSeq
	r.pending = append(r.pending[:i], append([]*entry{merged}, r.pending[j:]...)...)
	return &merged.b
}

// Acked records that the store acknowledged the batch seq.
func (r *local) Acked(seq uint64) {
	for _, e := range r.pending {
		if e.b.Seq == seq {
			e.acked = true
		}
	}
}

// Update brings the base to the store's update and returns the trust ids
// whose view changed.
func (r *local) Update(u *learned.Update) []string {
	if u.Full != nil {
		return r.reset(u)
	}
	var changed []string
	for i := range u.Changes {
		c := &u.Changes[i]
		if c.Writer == r.writer {
			r.drop(c.Seq)
		}
		for id, t := range c.Trust {
			if k := r.trust[id]; k != nil {
				k.base, k.has = t, true
				t, _ = k.replay()
			}
			if old, ok := r.view.Trust[id]; !ok || old != t {
				changed = append(changed, id)
			}
			r.view.Trust[id] = t
		}
		for key, s := range c.Sessions {
			if k := r.sess[key]; k != nil {
				k.base = s
				s = k.replay()
			}
			setSession(r.view, key, s)
			r.indexKey(key)
		}
	}
	r.version = u.Version
	return changed
}

// drop removes the pending batch seq, which the base now includes: its
// deltas leave the pending lists of their keys (they are the oldest there,
// as batches are applied in order), and its heat moves into the base.
func (r *local) drop(seq uint64) {
	i := 0
	for i < len(r.pending) && r.pending[i].b.Seq != seq {
		i++
	}
	if i == len(r.pending) {
		return // sent before a restart of the replica's view, or dropped already
	}
	e := r.pending[i]
	r.pending = append(r.pending[:i], r.pending[i+1:]...)
	r.deltas -= e.b.Len()
	r.heatN -= len(e.b.Heat)
	for _, d := range e.b.Trust {
		if k := r.trust[d.ID]; k != nil {
			k.deltas = k.deltas[1:]
			if len(k.deltas) == 0 {
				delete(r.trust, d.ID)
			}
		}
	}
	for _, d := range e.b.Heat {
		h := r.heat[d.ID]
		h.Add(negate(d.Heat))
		if h == (learned.Heat{}) {
			delete(r.heat, d.ID)
		} else {
			r.heat[d.ID] = h
		}
	}
	for _, d := range e.b.Sessions {
		if k := r.sess[d.Key]; k != nil {
			k.deltas = k.deltas[1:]
			if len(k.deltas) == 0 {
				delete(r.sess, d.Key)
			}
		}
	}
}

// reset takes a whole state as the base: the batches it includes leave,
// the rest are played on top again.
func (r *local) reset(u *learned.Update) []string {
	old := r.view.Trust
	kept := r.pending[:0]
	for _, e := range r.pending {
		if e.b.Seq != 0 && e.b.Seq <= u.Acked {
			continue
		}
		kept = append(kept, e)
	}
	r.pending = kept
	r.Renumber(u.Acked)
	base := u.Full.Clone()
	r.view.Trust, r.view.Heat, r.view.Sessions = base.Trust, base.Heat, base.Sessions
	r.bySession = nil
	for key := range r.view.Sessions {
		r.indexKey(key)
	}
	r.trust, r.heat, r.sess = map[string]*trustKey{}, map[string]learned.Heat{}, map[string]*sessKey{}
	pending, serial := r.pending, r.serial
	r.pending, r.deltas, r.heatN = nil, 0, 0
	for _, e := range pending {
		r.Add(e.b)
		last := r.pending[len(r.pending)-1]
		last.b.Writer, last.b.Seq, last.first, last.serial = e.b.Writer, e.b.Seq, e.first, e.serial
	}
	r.serial = serial
	r.version = u.Version
	var changed []string
	for id, t := range r.view.Trust {
		if o, ok := old[id]; !ok || o != t {
			changed = append(changed, id)
		}
	}
	for id := range old {
		if _, ok := r.view.Trust[id]; !ok {
			changed = append(changed, id)
		}
	}
	return changed
}

// Renumber makes the sent batches the store does not have (it has this
// writer's batches up to last) the ones after last, in order, to be sent
// again: the store lost them, or forgot the writer. A batch in flight
// cannot cross such a loss (the store's connections went with its data),
// so no old number is applied later under a new meaning.
func (r *local) Renumber(last uint64) {
	r.nextSeq = max(r.nextSeq, last)
	next := last
	for _, e := range r.pending {
		if e.b.Seq == 0 || e.b.Seq <= last {
			continue
		}
		next++
		e.b.Seq, e.acked = next, false
	}
	r.nextSeq = max(next, last)
}

func (k *trustKey) replay() (float64, bool) {
	st := learned.NewState()
	if k.has {
		st.Trust["x"] = k.base
	}
	b := learned.Batch{Trust: make([]learned.TrustDelta, len(k.deltas))}
	for i, d := range k.deltas {
		d.ID = "x"
		b.Trust[i] = d
	}
	st.Apply(&b)
	t, ok := st.Trust["x"]
	return t, ok
}

func (k *sessKey) replay() *learned.SessionState {
	st := learned.NewState()
	if k.base != nil {
		st.Sessions = map[string]*learned.SessionState{"x": k.base}
	}
	b := learned.Batch{Sessions: make([]learned.SessionDelta, len(k.deltas))}
	for i, d := range k.deltas {
		d.Key = "x"
		b.Sessions[i] = d
	}
	st.Apply(&b)
	return st.Sessions["x"]
}

func setSession(st *learned.State, key string, s *learned.SessionState) {
	if s == nil {
		delete(st.Sessions, key)
		return
	}
	if st.Sessions == nil {
		st.Sessions = make(map[string]*learned.SessionState)
	}
	st.Sessions[key] = s
}

// indexSessions brings bySession in step with the view for the keys of
// ds.
func (r *local) indexSessions(ds []learned.SessionDelta) {
	for _, d := range ds {
		r.indexKey(d.Key)
	}
}

// indexKey brings bySession in step with the view for key.
func (r *local) indexKey(key string) {
	session, ok := sessionOfKey(key)
	if !ok {
		return
	}
	keys := r.bySession[session]
	if _, live := r.view.Sessions[key]; live {
		if keys == nil {
			if r.bySession == nil {
				r.bySession = make(map[string]map[string]struct{})
			}
			keys = make(map[string]struct{})
			r.bySession[session] = keys
		}
		keys[key] = struct{}{}
		return
	}
	delete(keys, key)
	if len(keys) == 0 {
		delete(r.bySession, session)
	}
}

// SessionKeys returns the view's keys of session's conversations.
func (r *local) SessionKeys(session string) map[string]struct{} { return r.bySession[session] }

func negate(h learned.Heat) learned.Heat {
	return learned.Heat{Included: -h.Included, Dropped: -h.Dropped, Cut: -h.Cut, Refs: -h.Refs, StartRefs: -h.StartRefs}
}

func ids(ds []learned.TrustDelta) []string {
	seen := make(map[string]bool, len(ds))
	var out []string
	for _, d := range ds {
		if !seen[d.ID] {
			seen[d.ID] = true
			out = append(out, d.ID)
		}
	}
	return out
}

// Base returns a copy of the base: the view without the pending batches.
// For tests.
func (r *local) Base() *learned.State {
	st := r.view.Clone()
	for id, k := range r.trust {
		if k.has {
			st.Trust[id] = k.base
		} else {
			delete(st.Trust, id)
		}
	}
	for id, h := range r.heat {
		v := st.Heat[id]
		v.Add(negate(h))
		if v == (learned.Heat{}) {
			delete(st.Heat, id)
		} else {
			st.Heat[id] = v
		}
	}
	for key, k := range r.sess {
		setSession(st, key, k.base)
	}
	return st
}
