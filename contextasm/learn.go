package contextasm

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/contextasm/internal/toolsel"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// outputKey identifies an assembly's inputs: the same key means the same
// output, so the last output is reused (a warm re-assembly).
type outputKey struct {
	snap                 *snapshot
	tpl                  *template.Template
	now                  int64
	session, user, roles string
	listHidden           bool
	format               chat.Format
	previous             [16]byte // digest of the conversation's previous decision
	fresh                bool
	query                string       // what relevance came from (query.key)
	newestTurn           bool         // it comes from the session's newest user turn
	tools                *toolsel.Set // the tools a chat request may carry (tools.go)
}

// assembled is a memoised assembly: its output and render hash, computed
// once however often it is reused.
type assembled struct {
	decisionDigest [16]byte // of decision
	out            *assemble.Output
	decision       []byte // out.Decision as JSON, for the learned state
	renderHash     string
	body           []byte // a chat format's request body, which renderHash hashes
	format         chat.Format
	query          *queried // what relevance came from
	// why, when set, has the sections and events out leaves out (an
	// incremental assembly's): see explained. Copies of a memo share it.
	why *explanation
	// heat counts an incremental assembly's heat again; nil for a full
	// one, whose sections are counted.
	heat *heatRecord
	// snap is the snapshot an incremental assembly read (its explanation
	// holds it too): while it is the store's, the blocks the assembly
	// showed are the ones declared, and Feedback reads them without
	// looking them up.
	snap *snapshot
}

// explanation is an incremental assembly's sections and events: the same
// inputs assembled again from scratch, on first use.
type explanation struct {
	once    sync.Once
	explain func() *assemble.Output
	full    *assemble.Output
}

// explained returns the assembly's output with its sections and events:
// out, or, for an incremental assembly, the same assembled from scratch
// on first use.
func (a *assembled) explained() *assemble.Output {
	if a.why == nil {
		return a.out
	}
	a.why.once.Do(func() { a.why.full = a.why.explain() })
	return a.why.full
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

// forget drops the remembered assembly.
func (m *outputMemo) forget() {
	m.mu.Lock()
	m.val = nil
	m.mu.Unlock()
}

// repeat returns the remembered assembly made again by a request of the
// same conversation that follows the decision that assembly recorded
// (prev is that decision's digest), with everything else the same: the
// same text, sections, events and decision, and all of the text
// unchanged. It remembers the repeat under k.
func (m *outputMemo) repeat(k outputKey, prev [16]byte) (*assembled, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.val
	if v == nil || k.fresh || prev == ([16]byte{}) || v.decisionDigest != prev || v.out.Repeat == nil {
		return nil, false
	}
	was := m.key
	was.previous, was.fresh = k.previous, k.fresh
	if was != k {
		return nil, false
	}
	out := *v.out
	out.Prefix = out.Repeat
	r := *v
	r.out = &out
	m.key, m.val = k, &r
	return &r, true
}

func (m *outputMemo) put(k outputKey, v *assembled) {
	m.mu.Lock()
	m.key, m.val = k, v
	m.mu.Unlock()
}

// Feedback reads the model's response to the context res rendered: which
// blocks it cited and where, how their trust moves (later assemblies rank
// with the new trust), and which break_on_violation constraints it broke.
// It counts citations in the blocks' heat, and logs the assembly's audit
// record again with model_response_hash when Config.Audit is set. It does
// not modify res.
//
// The trust and heat deltas apply to this Engine's learned state at once
// and, with Config.State, are queued for the store, which applies them
// after Feedback returns (Flush waits for it). When the queue is full the
// error wraps ErrStateQueueFull and nothing was learned.
//
// When the response breaks a constraint, Feedback returns the result and an
// error wrapping feedback.ErrConstraintViolation (a *feedback.ViolationError).
func (e *Engine) Feedback(ctx context.Context, res *Result, response string) (*feedback.Result, error) {
	return e.feedbackCited(ctx, res, response, nil)
}

// feedbackCited is Feedback with citations reported apart from the
// response's text (see Response.Cited).
func (e *Engine) feedbackCited(ctx context.Context, res *Result, response string, cited []feedback.Tag) (*feedback.Result, error) {
	if res == nil {
		return nil, fmt.Errorf("%w: Feedback needs the Result of an assembly", ErrInvalid)
	}
	lookup := e.lookupBlocks()
	var shown []shownBlock
	if res.told != nil {
		shown = res.told.asm.shown(res.told.asm.snap == e.current())
	}
	// The learned trust of the blocks shown, copied: reading the response
	// (patterns, references) holds up neither assemblies nor the state's
	// goroutine.
	ids := make([]string, len(shown))
	for i, b := range shown {
		ids[i] = b.RequestID
	}
	in, err := feedbackBlocks(e.rep.TrustOf(ids), shown, lookup)
	var fb *feedback.Result
	var batch *learned.Batch
	if err == nil {
		fb, batch, err = learn(in, response, cited, e.cfg.Policy, e.cfg.FeedbackLimits)
	}
	var moved []string
	if err == nil {
		var ok bool
		if moved, ok = e.rep.Add(*batch); !ok {
			err = fmt.Errorf("%w: %d deltas of this response not learned", ErrStateQueueFull, batch.Len())
		}
	}
	if fb == nil {
		return nil, err
	}
	if len(moved) > 0 {
		e.refreshTrust(moved)
	}
	if e.cfg.Audit != nil {
		// The record after feedback: the assembly's, with the response's
		// hash. res itself is left alone: Results are read-only and may be
		// shared between goroutines.
		audit := res.Audit()
		audit.ModelResponseHash = fb.ModelResponseHash
		audit.Log(ctx, e.cfg.Audit)
	}
	if err != nil {
		return fb, errors.Join(err, fb.Err())
	}
	return fb, fb.Err()
}

// lookupBlocks returns a lookup of the blocks held now by request_id.
func (e *Engine) lookupBlocks() func(id string) (*assemble.Block, bool) {
	// The current snapshot's set, searched in place: its flat slice would
	// copy the store for a few lookups.
	return e.current().set.get
}

// State returns a copy of the learned state: trust, heat and sessions,
// with the heat of assemblies not yet sent to the store.
func (e *Engine) State() *learned.State {
	e.settleFor(true)
	return e.rep.Copy(e.heat.addTo)
}

// SaveState is Flush with StateOptions.Timeout: it sends the heat counted
// so far and waits for the store to acknowledge everything queued (a
// no-op without Config.State).
func (e *Engine) SaveState() error {
	if e.cfg.State == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.StateOptions.Timeout)
	defer cancel()
	return e.Flush(ctx)
}

// FeedbackDump is Feedback for a render dump, for a process other than the
// one that rendered (the CLI's feedback command): it evaluates response
// against the blocks the dump kept, with the trust st has learned (or the
// dump's), applies the changes and citations to st, and returns the result,
// with an error wrapping feedback.ErrConstraintViolation on a violation.
func FeedbackDump(st *learned.State, d *Dump, response string, p feedback.Policy) (*feedback.Result, error) {
	fb, b, err := FeedbackDeltas(st, d, response, p)
	if fb == nil {
		return nil, err
	}
	st.Apply(b)
	return fb, err
}

// FeedbackDeltas is FeedbackDump without applying: it returns the batch of
// deltas (Writer and Seq unset) a store is to apply, and leaves st alone.
func FeedbackDeltas(st *learned.State, d *Dump, response string, p feedback.Policy) (*feedback.Result, *learned.Batch, error) {
	in, err := feedbackBlocks(st.Trust, shownOf(d.Sections), nil)
	if err != nil {
		return nil, nil, err
	}
	fb, b, err := learn(in, response, nil, p, feedback.Limits{})
	if err != nil {
		return nil, nil, err
	}
	return fb, b, fb.Err()
}

// shownBlock is a block an assembly put in its text (kept or cut), as
// feedback reads it: the trust it was ranked with and its violation
// patterns (compiled, or their sources for a block read from a dump).
type shownBlock struct {
	RequestID string
	Trust     float64
	Patterns  []*regexp.Regexp
	Sources   []string
	// block, when set, is the block as the store holds it now: the
	// snapshot the assembly read is still the current one.
	block *assemble.Block
}

// shownOf returns the blocks sections put in the text, in section and rank
// order.
func shownOf(sections []SectionResult) []shownBlock {
	var out []shownBlock
	for si := range sections {
		for _, b := range sections[si].Blocks {
			if b.Status != outcome.StatusDropped {
				out = append(out, shownBlock{RequestID: b.RequestID, Trust: b.Trust, Sources: b.ViolationPatterns})
			}
		}
	}
	return out
}

// shown returns the blocks the assembly put in its text: an incremental
// assembly's from the record of its fill, a full one's from its
// sections. Neither assembles again.
func (a *assembled) shown(current bool) []shownBlock {
	if a.heat == nil || a.why == nil {
		return shownOf(a.out.Sections)
	}
	out := make([]shownBlock, a.heat.rec.InText())
	for i := range out {
		b, _ := a.heat.rec.At(i)
		out[i] = shownBlock{RequestID: b.ID, Trust: b.Trust, Patterns: b.Patterns()}
		if current {
			out[i].block = b
		}
	}
	return out
}

// feedbackBlocks returns the blocks feedback evaluates a response against:
// those shown, with their current trust and patterns when lookup (set)
// finds them still declared, else with the learned trust (when there is
// one) or the trust they were ranked with, and the patterns they had.
func feedbackBlocks(learnedTrust map[string]float64, shown []shownBlock, lookup func(id string) (*assemble.Block, bool)) ([]feedback.Block, error) {
	in := make([]feedback.Block, 0, len(shown))
	for _, b := range shown {
		fbb := feedback.Block{RequestID: b.RequestID, Trust: b.Trust, Patterns: b.Patterns}
		if t, ok := learnedTrust[b.RequestID]; ok {
			fbb.Trust = t
		}
		cur, ok := b.block, b.block != nil
		if !ok {
			cur, ok = lookupBlock(lookup, b.RequestID)
		}
		if ok {
			fbb.Trust, fbb.Patterns = cur.Trust, cur.Patterns()
		} else if fbb.Patterns == nil {
			for _, src := range b.Sources {
				re, err := regexp.Compile(src)
				if err != nil {
					return nil, fmt.Errorf("%w: block %q: violation pattern %q: %v", ErrInvalid, b.RequestID, src, err)
				}
				fbb.Patterns = append(fbb.Patterns, re)
			}
		}
		in = append(in, fbb)
	}
	return in, nil
}

// learn evaluates response and the citations cited against the blocks in
// (see feedbackBlocks) and returns the deltas to apply: for each block
// cited, its policy gain and a citation in its heat, checking violation
// patterns within limits.
func learn(in []feedback.Block, response string, cited []feedback.Tag, p feedback.Policy, limits feedback.Limits) (*feedback.Result, *learned.Batch, error) {
	fb, err := limits.EvaluateCited(in, response, cited, p)
	if err != nil {
		return nil, nil, err
	}
	trust := make(map[string]float64, len(in))
	for _, b := range in {
		trust[b.RequestID] = b.Trust
	}
	floor, ceiling := p.Bounds()
	b := &learned.Batch{}
	for _, r := range fb.Refs {
		// The gain, not the local result: the store adds it to the trust
		// it holds, which other writers may have moved.
		if g := p.Gain(r.Position); g != 0 {
			b.Trust = append(b.Trust, learned.TrustDelta{ID: r.RequestID, Base: trust[r.RequestID], Add: g, Floor: floor, Ceiling: ceiling})
		}
		h := learned.Heat{Refs: 1}
		if r.Position == feedback.Start {
			h.StartRefs = 1
		}
		b.Heat = append(b.Heat, learned.HeatDelta{ID: r.RequestID, Heat: h})
	}
	check := *b
	check.Writer, check.Seq = "check", 1
	if err := check.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%w: feedback.Policy: %v", ErrInvalid, err)
	}
	return fb, b, nil
}

func lookupBlock(lookup func(string) (*assemble.Block, bool), id string) (*assemble.Block, bool) {
	if lookup == nil {
		return nil, false
	}
	return lookup(id)
}
