package learned

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"time"
)

// ErrUnavailable is wrapped by a state store's errors that mean it could
// not be reached in time (a refused connection, a timeout), as opposed to
// a store that answered with a problem. An Engine goes on from its last
// snapshot when its store is unavailable.
var ErrUnavailable = errors.New("learned: state store unavailable")

// ErrBatchGap is wrapped by a *GapError.
var ErrBatchGap = errors.New("learned: batch out of sequence")

// GapError means a store refused a batch because its Seq is not the one
// after the last batch it applied from the same writer: the store lost
// batches it had acknowledged (it restarted without them), or forgot the
// writer (DedupWindow). The writer resends its unapplied batches numbered
// from Last+1.
type GapError struct {
	// Writer names the writer whose batch was refused.
	Writer string
	// Last is the Seq of the writer's last batch the store applied (0: none
	// it remembers); Seq is the refused batch's.
	Last, Seq uint64
}

// Error says which batch of which writer was out of sequence.
func (e *GapError) Error() string {
	return fmt.Sprintf("learned: batch %d of writer %q out of sequence: the store's last batch of it is %d", e.Seq, e.Writer, e.Last)
}

// Unwrap returns ErrBatchGap.
func (e *GapError) Unwrap() error { return ErrBatchGap }

// ErrInvalidBatch is wrapped by the errors Batch.Validate returns.
var ErrInvalidBatch = errors.New("learned: invalid batch")

// MaxTrust is the highest trust a state holds: a store clamps every trust
// delta to [0, MaxTrust] besides the delta's own bounds.
const MaxTrust = 0.99

// Trust is kept in whole billionths inside stores, so that adding deltas is
// exact integer arithmetic whatever their order: feedback.Policy.Apply rounds to
// the same unit.
const trustUnit = 1e9

// TrustUnits returns trust in billionths, the unit stores add in.
func TrustUnits(trust float64) int64 { return int64(math.Round(trust * trustUnit)) }

// TrustFromUnits returns the trust of n billionths.
func TrustFromUnits(n int64) float64 { return float64(n) / trustUnit }

// Batch is a set of changes to the learned state that a store applies as
// one step, each key atomically. Deltas commute where they can (heat
// counters add; trust deltas add and are clamped in the same step), so
// batches from many writers never overwrite each other.
//
// (Writer, Seq) names a batch: a store applies each name once and
// acknowledges a repeat without applying it again, so a writer may resend a
// batch whose acknowledgement it did not see. A writer numbers its batches
// 1, 2, … and sends each only after the one before was acknowledged; a
// store refuses a batch whose Seq skips one (a *GapError), so that a batch
// is never taken for one the store already has.
type Batch struct {
	// Writer names the engine or CLI call that sent the batch; each draws a
	// random name of its own.
	Writer string `json:"writer"`
	// Seq numbers the writer's batches 1, 2, …; with Writer it names the
	// batch.
	Seq uint64 `json:"seq"`
	// Trust moves blocks' trust.
	Trust []TrustDelta `json:"trust,omitempty"`
	// Heat adds to blocks' heat counters.
	Heat []HeatDelta `json:"heat,omitempty"`
	// Sessions replace or delete conversations' session states.
	Sessions []SessionDelta `json:"sessions,omitempty"`
}

// TrustDelta moves one block's trust by Add, then clamps it to [Floor,
// Ceiling] within [0, MaxTrust]. Base is the trust to start from when the
// state holds none for the block yet: its declared trust.
type TrustDelta struct {
	// ID is the block's request_id.
	ID string `json:"id"`
	// Base is the trust to start from when the state holds none for the
	// block: its declared trust.
	Base float64 `json:"base"`
	// Add is the amount the trust moves by, up or down.
	Add float64 `json:"add"`
	// Floor is the lowest trust the delta may leave.
	Floor float64 `json:"floor"`
	// Ceiling is the highest trust the delta may leave, itself capped at
	// MaxTrust.
	Ceiling float64 `json:"ceiling"`
}

// HeatDelta adds its counters to one block's heat, or deletes the
// block's heat (the block was forgotten, or its session ended).
type HeatDelta struct {
	// ID is the block's request_id.
	ID string `json:"id"`
	// Heat holds the counts to add.
	Heat Heat `json:"heat"`
	// Delete deletes the block's heat instead (Heat is then ignored).
	Delete bool `json:"delete,omitempty"`
}

// SessionDelta replaces or deletes one session's state (State.Sessions).
// A replacement applies only when the session's version is Base (0: the
// session has none yet) and makes it Base+1; otherwise it is skipped, and
// the writer learns the winner from the store's changes. A deletion always
// applies.
type SessionDelta struct {
	// Key names the conversation (see SessionKey).
	Key string `json:"key"`
	// Delete deletes the session's state instead of replacing it.
	Delete bool `json:"delete,omitempty"`
	// Base is the session's version the replacement was made from (0:
	// none yet); the replacement applies only while it is current.
	Base uint64 `json:"base,omitempty"`
	// Updated is the assembly time ("now") of the call that wrote the state.
	Updated time.Time `json:"updated,omitzero"`
	// Data is the assembler's record of its decisions, as JSON.
	Data json.RawMessage `json:"data,omitempty"`
}

// Len returns the number of deltas in b.
func (b *Batch) Len() int { return len(b.Trust) + len(b.Heat) + len(b.Sessions) }

// Validate reports the first malformed delta of b: a NaN or infinite
// trust, bounds the wrong way round, a negative heat counter, session data
// that is not JSON. A store applies nothing of an invalid batch.
func (b *Batch) Validate() error {
	if b.Seq == 0 || b.Writer == "" {
		return fmt.Errorf("%w: batch %q/%d has no writer or no sequence number", ErrInvalidBatch, b.Writer, b.Seq)
	}
	for i, d := range b.Trust {
		for _, v := range [...]float64{d.Base, d.Add, d.Floor, d.Ceiling} {
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e6 {
				return fmt.Errorf("%w: trust[%d] (%q): %v is not a trust", ErrInvalidBatch, i, d.ID, v)
			}
		}
		if d.Floor > d.Ceiling {
			return fmt.Errorf("%w: trust[%d] (%q): floor %v above ceiling %v", ErrInvalidBatch, i, d.ID, d.Floor, d.Ceiling)
		}
	}
	for i, d := range b.Heat {
		h := d.Heat
		if !d.Delete && h.Included < 0 || h.Dropped < 0 || h.Cut < 0 || h.Refs < 0 || h.StartRefs < 0 {
			return fmt.Errorf("%w: heat[%d] (%q): negative counter", ErrInvalidBatch, i, d.ID)
		}
	}
	for i, d := range b.Sessions {
		if !d.Delete && len(d.Data) > 0 && !json.Valid(d.Data) {
			return fmt.Errorf("%w: sessions[%d]: data is not JSON", ErrInvalidBatch, i)
		}
	}
	return nil
}

// Version names one state of a store: N counts the batches it applied;
// Epoch changes when the store starts over (its data was lost or removed),
// so that a reader at version N of one epoch does not mistake another
// epoch's N for its own.
type Version struct {
	// Epoch names the store's life: it changes when the store starts over.
	Epoch string `json:"epoch"`
	// N counts the batches the store has applied in this epoch.
	N uint64 `json:"n"`
}

// Update is what a store tells a reader about the changes since the
// version the reader has: either Full, the whole state, or Changes, the
// batches applied since, in order. Neither means nothing changed.
type Update struct {
	// Version is the store's version these changes bring the reader to.
	Version Version
	// Full, when set, replaces the reader's state whole.
	Full *State
	// Acked is, with Full, the highest Seq of the reader's own batches
	// the state includes.
	Acked uint64
	// Changes are the batches applied after the reader's version.
	Changes []Change
}

// Change is one applied batch as a store recorded it: the values its keys
// hold after it (not the deltas), so that replaying changes in order
// reproduces the store's state. Heat is not in it: heat counters are
// exact in the store, and readers see others' heat on a full load.
type Change struct {
	// Version is the store's version after the batch.
	Version uint64
	// Writer is the writer of the batch.
	Writer string
	// Seq is the batch's number among its writer's.
	Seq uint64
	// Trust holds the trust of each block the batch moved.
	Trust map[string]float64
	// Sessions holds each session the batch changed; nil for a deletion.
	Sessions map[string]*SessionState
}

// Apply applies b to s, as every store does, and returns the change it
// made. It does not validate b (see Batch.Validate).
func (s *State) Apply(b *Batch) Change {
	c := Change{Writer: b.Writer, Seq: b.Seq}
	for _, d := range b.Trust {
		t, ok := s.Trust[d.ID]
		if !ok {
			t = d.Base
		}
		s.Trust[d.ID] = AddTrust(t, d)
		if c.Trust == nil {
			c.Trust = make(map[string]float64)
		}
		c.Trust[d.ID] = s.Trust[d.ID]
	}
	for _, d := range b.Heat {
		if d.Delete {
			delete(s.Heat, d.ID)
			continue
		}
		h := s.Heat[d.ID]
		h.Add(d.Heat)
		s.Heat[d.ID] = h
	}
	for _, d := range b.Sessions {
		if c.Sessions == nil {
			c.Sessions = make(map[string]*SessionState)
		}
		if d.Delete {
			if _, ok := s.Sessions[d.Key]; ok {
				delete(s.Sessions, d.Key)
				c.Sessions[d.Key] = nil
			}
			continue
		}
		cur := s.Sessions[d.Key]
		var v uint64
		if cur != nil {
			v = cur.Version
		}
		if v != d.Base {
			continue // another writer replaced it first
		}
		if s.Sessions == nil {
			s.Sessions = make(map[string]*SessionState)
		}
		next := &SessionState{Version: v + 1, Updated: d.Updated.UTC(), Data: compactJSON(d.Data)}
		s.Sessions[d.Key] = next
		c.Sessions[d.Key] = next
	}
	if len(c.Sessions) == 0 {
		c.Sessions = nil
	}
	return c
}

// AddTrust returns trust moved by d: added and clamped in billionths, as
// every store does it.
func AddTrust(trust float64, d TrustDelta) float64 {
	n := TrustUnits(trust) + TrustUnits(d.Add)
	lo, hi := max(TrustUnits(d.Floor), 0), min(TrustUnits(d.Ceiling), TrustUnits(MaxTrust))
	return TrustFromUnits(min(max(n, lo), hi))
}

// ApplyChange sets the keys c recorded to their values after it.
func (s *State) ApplyChange(c *Change) {
	maps.Copy(s.Trust, c.Trust)
	for k, v := range c.Sessions {
		if v == nil {
			delete(s.Sessions, k)
			continue
		}
		if s.Sessions == nil {
			s.Sessions = make(map[string]*SessionState)
		}
		cp := *v
		s.Sessions[k] = &cp
	}
}

// Add adds o's counters to h.
func (h *Heat) Add(o Heat) {
	h.Included += o.Included
	h.Dropped += o.Dropped
	h.Cut += o.Cut
	h.Refs += o.Refs
	h.StartRefs += o.StartRefs
}
