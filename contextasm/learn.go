package contextasm

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// heatCell counts one block's renders. Assemblies add to it without a lock;
// State reads it into the learned state.
type heatCell struct {
	included, dropped, cut atomic.Int64
}

// recordHeat counts, per block, the renders that kept, cut or dropped it.
func (s *snapshot) recordHeat(sections []SectionResult) {
	for si := range sections {
		for i := range sections[si].Blocks {
			b := &sections[si].Blocks[i]
			c := s.cells[b.Index]
			switch b.Status {
			case outcome.StatusKept:
				c.included.Add(1)
			case outcome.StatusCut:
				c.cut.Add(1)
			default:
				c.dropped.Add(1)
			}
		}
	}
}

// outputKey identifies an assembly's inputs: the same key means the same
// output, so the last output is reused (a warm re-assembly).
type outputKey struct {
	snap                 *snapshot
	tpl                  *template.Template
	now                  int64
	session, user, roles string
}

// assembled is a memoised assembly: its output, the memory types that took
// part and the render hash, computed once however often it is reused.
type assembled struct {
	out        *assemble.Output
	types      []string
	renderHash string
}

// outputMemo remembers the most recent assembly. One entry is enough for
// the case it serves: a host assembling again before anything changed.
type outputMemo struct {
	mu  sync.Mutex
	key outputKey
	val *assembled
}

func (m *outputMemo) get(k outputKey) (*assembled, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.val == nil || m.key != k {
		return nil, false
	}
	return m.val, true
}

func (m *outputMemo) put(k outputKey, v *assembled) {
	m.mu.Lock()
	m.key, m.val = k, v
	m.mu.Unlock()
}

// Feedback reads the model's response to the context res rendered: which
// blocks it cited and where, how their trust moves (later assemblies rank
// with the new trust), and which break_on_violation constraints it broke.
// It counts citations in the blocks' heat, logs the assembly's audit record
// again with model_response_hash when Config.Audit is set, and saves the
// learned state when Config.State is set. It does not modify res.
//
// When the response breaks a constraint, Feedback returns the result and an
// error wrapping feedback.ErrConstraintViolation (a *feedback.ViolationError).
func (e *Engine) Feedback(ctx context.Context, res *Result, response string) (*feedback.Result, error) {
	if res == nil {
		return nil, fmt.Errorf("%w: Feedback needs the Result of an assembly", ErrInvalid)
	}
	blocks := e.blocks()
	e.learnMu.Lock()
	fb, err := learn(e.learned, res.Sections, response, e.cfg.Policy, func(id string) (*assemble.Block, bool) {
		i, ok := slices.BinarySearchFunc(blocks, id, func(b *assemble.Block, id string) int { return strings.Compare(b.ID, id) })
		if !ok {
			return nil, false
		}
		return blocks[i], true
	})
	e.learnMu.Unlock()
	if err != nil {
		return nil, err
	}
	if len(fb.TrustChanges) > 0 {
		e.applyTrust(fb.TrustChanges)
	}
	if e.cfg.Audit != nil {
		// The record after feedback: the assembly's, with the response's
		// hash. res itself is left alone: Results are read-only and may be
		// shared between goroutines.
		audit := res.Audit
		audit.ModelResponseHash = fb.ModelResponseHash
		audit.Log(ctx, e.cfg.Audit)
	}
	if err := e.SaveState(); err != nil {
		return fb, err
	}
	return fb, fb.Err()
}

// applyTrust publishes a new snapshot whose blocks carry the learned trust.
func (e *Engine) applyTrust(changes []feedback.TrustChange) {
	e.mu.Lock()
	defer e.mu.Unlock()
	old := e.blocks()
	next := slices.Clone(old)
	changed := false
	for _, c := range changes {
		i, ok := slices.BinarySearchFunc(next, c.RequestID, func(b *assemble.Block, id string) int { return strings.Compare(b.ID, id) })
		if ok {
			// A new block: readers of the old snapshot keep theirs.
			b := *next[i]
			b.Trust = c.To
			next[i] = &b
			changed = true
		}
	}
	if changed {
		e.publish(next, slices.Clone(e.current().cells))
	}
}

// State returns a copy of the learned state: trust and heat by request_id.
func (e *Engine) State() *feedback.State {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.learnMu.Lock()
	defer e.learnMu.Unlock()
	st := e.learned.Clone()
	for id, c := range e.cells {
		h, seen := st.Heat[id]
		h.Included, h.Dropped, h.Cut = c.included.Load(), c.dropped.Load(), c.cut.Load()
		if seen || h != (feedback.Heat{}) {
			st.Heat[id] = h
		}
	}
	return st
}

// SaveState saves the learned state through Config.State (a no-op without
// one). Assemble counts heat in memory only; a host calls SaveState when it
// wants those counts on disk (Feedback saves by itself).
func (e *Engine) SaveState() error {
	if e.cfg.State == nil {
		return nil
	}
	// Take the state and save it under one lock, so that concurrent saves
	// land in the order their states were taken: a later save never
	// writes an older state over a newer one.
	e.saveMu.Lock()
	defer e.saveMu.Unlock()
	if err := e.cfg.State.Save(e.State()); err != nil {
		return fmt.Errorf("contextasm: saving learned state: %w", err)
	}
	return nil
}

// FeedbackDump is Feedback for a render dump, for a process other than the
// one that rendered (the CLI's feedback command): it evaluates response
// against the blocks the dump kept, with the trust st has learned (or the
// dump's), applies the changes and citations to st, and returns the result,
// with an error wrapping feedback.ErrConstraintViolation on a violation.
func FeedbackDump(st *feedback.State, d *Dump, response string, p feedback.Policy) (*feedback.Result, error) {
	fb, err := learn(st, d.Sections, response, p, nil)
	if err != nil {
		return nil, err
	}
	return fb, fb.Err()
}

// learn evaluates response against the blocks sections put in the text and
// applies the outcome to st. lookup, when set, finds a block's current
// trust and compiled patterns; otherwise they come from the sections.
func learn(st *feedback.State, sections []SectionResult, response string, p feedback.Policy,
	lookup func(id string) (*assemble.Block, bool)) (*feedback.Result, error) {
	var in []feedback.Block
	for si := range sections {
		for _, b := range sections[si].Blocks {
			if b.Status == outcome.StatusDropped {
				continue
			}
			fbb := feedback.Block{RequestID: b.RequestID, Trust: b.Trust}
			if t, ok := st.Trust[b.RequestID]; ok {
				fbb.Trust = t
			}
			if cur, ok := lookupBlock(lookup, b.RequestID); ok {
				fbb.Trust, fbb.Patterns = cur.Trust, cur.Patterns
			} else {
				for _, src := range b.ViolationPatterns {
					re, err := regexp.Compile(src)
					if err != nil {
						return nil, fmt.Errorf("%w: block %q: violation pattern %q: %v", ErrInvalid, b.RequestID, src, err)
					}
					fbb.Patterns = append(fbb.Patterns, re)
				}
			}
			in = append(in, fbb)
		}
	}
	fb := feedback.Evaluate(in, response, p)
	for _, c := range fb.TrustChanges {
		st.Trust[c.RequestID] = c.To
	}
	for _, r := range fb.Refs {
		h := st.Heat[r.RequestID]
		h.Refs++
		if r.Position == feedback.Start {
			h.StartRefs++
		}
		st.Heat[r.RequestID] = h
	}
	return fb, nil
}

func lookupBlock(lookup func(string) (*assemble.Block, bool), id string) (*assemble.Block, bool) {
	if lookup == nil {
		return nil, false
	}
	return lookup(id)
}
