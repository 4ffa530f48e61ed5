package assemble

import (
	"slices"
	"strings"

	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// Assembler runs assemblies and keeps scratch space between them. It is not
// safe for concurrent use; use one per goroutine.
type Assembler struct {
	// Scoring weighs blocks for ranking; each zero field takes its default.
	Scoring truncate.Scoring
	// Memo, when set, remembers rendered blocks' token counts by key, so an
	// unchanged block is neither rendered nor counted again.
	Memo Memo
	// Renders, when set, remembers the text of blocks rendered whole by
	// key, so a block kept again is not rendered again.
	Renders RenderMemo
	// SortedByID promises that blocks come sorted by request_id (as the
	// engine's store keeps them), so ties can be broken by position without
	// checking. Unset, the Assembler checks the order itself.
	SortedByID bool
	// Stickiness sets how an assembly follows the previous decision of
	// its conversation (Request.Previous); each zero field takes its
	// default.
	Stickiness truncate.Stickiness

	secs     []section    // per section, in template order
	chat     ChatCost     // the request's
	plan     plan         // units kept or dropped whole (group.go)
	deg      degradeState // summaries, forms and the like (degrade.go)
	clr      clearState   // older tool results cleared (clear.go)
	wr       writer       // the text being written (write.go)
	inc      incremental  // an incremental assembly's pull from its Index (turn.go)
	join     int          // the count of "\n", during the budget cut
	render   []byte       // scratch of renderBlock
	keys     []rankKey    // scratch of rankByIndex
	keysTmp  []rankKey
	rel      relevanceState // scratch of the relevance pass
	keptInc  []int          // scratch of stickyReasons
	stable   []int          // scratch of boundStable
	histKeys []histKey      // scratch of summarizeCandidates
	// spanHashes remembers spans' hashes by their text (spanHash).
	spanHashes map[string]string
}

// candidate is an eligible block's working state inside its section.
type candidate struct {
	Ranked
	text     string // rendered (and possibly cut) block, once rendered
	reason   outcome.Reason
	tokens   int
	offset   int
	rank     int32 // its place in the section's rank order (rows are written in it)
	unit     int32 // its unit in Assembler.units, plus one; 0 for none
	message  int32 // its message's index plus one, once written
	prevPos  int32 // its place in the previous text's section (sticky)
	prevCut  int32 // content bytes the previous text kept of it, when cut and unchanged
	event    int32 // 1 + the index of its dropped event, 0 for none
	cutLen   int   // the bytes of content written, when cut
	status   outcome.Status
	rendered bool // text is set: counts from the memo skip rendering
	escaped  bool
	msg      bool // a message of its own (a history block, in a chat format)
	done     bool // decided already, with its unit
	inc      bool // an incumbent: the previous decision wrote it
	news     bool // not an incumbent, and modified since the previous decision
	recall   bool // not an incumbent, made news by the query (relevanceNews): passes a shed section's floor
	// prevRecall marks an incumbent the previous decision recalled
	// (WrittenBlock.Recalled): it leaves without making the section shed.
	prevRecall bool
	// soft puts cd after the stable part of a sticky fill (tier): the
	// query recalls it, or another query did.
	soft bool
	// late marks what the query recalled, written after the rest of a
	// section in time order (markRecalled).
	late     bool
	notice   bool  // it has a sticky notice
	form     int8  // the form written: 0 its content, k its variants[k-1]
	prevForm int8  // the form the previous decision wrote it in
	summary  bool  // it is the summary of its replacement
	repl     int32 // its replacement (a summary and its turns) in Assembler.deg.repls, plus one
}

// writtenRef locates a block of the text, or a message: section and
// candidate.
type writtenRef struct{ si, ci int }

func (c *candidate) inText() bool {
	return c.status == outcome.StatusKept || c.status == outcome.StatusCut
}

// section is one section's state in an assembly.
type section struct {
	ranked []Ranked      // its eligible blocks, in block order (before ranking)
	cands  []candidate   // its candidates, in fill order
	sums                 // what its text and messages hold
	sticky stickySection // when it follows its previous decision
	tail   tailBest      // the best score an incremental assembly never pulled
}

// sums are what a section's text and messages hold.
type sums struct {
	used int // the text's tokens with its separators: what the cap is applied to
	kept int // blocks in the text (kept or cut)
	msgs int // the messages' tokens (chat formats)
	sep  int // a separator's count (0 in line mode)
}

// add counts cd, kept or cut, into the sums.
func (s *sums) add(cd *candidate) {
	if cd.msg {
		s.msgs += cd.tokens
		return
	}
	if s.kept > 0 {
		s.used += s.sep
	}
	s.used += cd.tokens
	s.kept++
}

// sepBefore is the separator a text block kept next would need.
func (s *sums) sepBefore(cd *candidate) int {
	if cd.msg || s.kept == 0 {
		return 0
	}
	return s.sep
}

func (a *Assembler) reset(n int) {
	if cap(a.secs) < n {
		a.secs = make([]section, n)
	}
	a.secs = a.secs[:n]
	a.wr.written = a.wr.written[:0]
	for i := range a.secs {
		s := &a.secs[i]
		clear(s.cands) // drop references to the last call's strings
		*s = section{ranked: s.ranked[:0], cands: s.cands[:0]}
	}
}

// Assemble selects, cuts and renders blocks under tpl for req, counting
// tokens with c. Blocks should come in a fixed order (package contextasm
// sorts them by request_id) so that events come in a fixed order too; the
// text does not depend on it.
func (a *Assembler) Assemble(tpl *template.Template, blocks []Block, req Request, c truncate.Counter) (*Output, error) {
	refs := make([]*Block, len(blocks))
	for i := range blocks {
		refs[i] = &blocks[i]
	}
	return a.AssembleRefs(tpl, refs, req, c)
}

// AssembleRefs is Assemble for blocks held by pointer, as the engine's
// store holds them (so that declaring one block copies pointers, not
// blocks). The blocks are only read.
func (a *Assembler) AssembleRefs(tpl *template.Template, blocks []*Block, req Request, c truncate.Counter) (*Output, error) {
	out, err := a.assemble(tpl, blocks, req, c, false)
	if a.deg.weighed {
		// A summary or a smaller form took part: degrading must not leave
		// the model with less than dropping alone would (degrade.go).
		plain, perr := a.assemble(tpl, blocks, req, c, true)
		if perr == nil && (err != nil || plain.represented > out.represented) {
			out, err = plain, nil
		}
	}
	a.deg.tpl, a.deg.ctr = nil, nil
	return out, err
}

// run is one assembly: its inputs, and what its passes hand on to each
// other besides the Assembler's per-section state. Like text/template's
// state, it lives for one assembly.
type run struct {
	tpl *template.Template
	// blocks are the blocks of a full assembly, which candidates index;
	// nil for an incremental one, whose candidates index the blocks it
	// pulled (Assembler.view).
	blocks []*Block
	req    *Request
	c      truncate.Counter
	out    *Output
	misses []truncate.RequiredMiss
	stick  truncate.Stickiness // the Assembler's, defaults applied
	prev   *Decision           // the previous decision, when usable
	follow bool                // the sections follow prev (no Request.Fresh)
	byID   bool                // blocks come sorted by request_id
	hidden [3]int              // blocks excluded for a hidden reason, per hiddenReasons
	x      *Index              // the index an incremental assembly pulls from, else nil
	// current holds the block indexes of a chat's current turn
	// (current.go), which the format requires.
	current map[int32]bool
	lookup  func(id string) (*Block, bool)
	// toolTokens are the request's tool definitions' (tools.go), off
	// the blocks' budget.
	toolTokens int
	// msgs are a chat format's messages in reading order, as the
	// messages pass wrote them: the decision records them so.
	msgs []msgRef
}

// begin readies the Assembler for one assembly and returns its run.
func (a *Assembler) begin(tpl *template.Template, blocks []*Block, req *Request, c truncate.Counter, plain bool) *run {
	a.reset(tpl.NumSections())
	a.deg.reset(tpl, c, plain)
	a.clr.reset()
	a.chat = req.Chat
	r := &run{tpl: tpl, blocks: blocks, req: req, c: c, out: &Output{}, stick: a.Stickiness.WithDefaults(), prev: req.Previous}
	if !r.prev.usable(tpl) {
		r.prev = nil
	}
	r.follow = r.prev != nil && !req.Fresh
	if blocks != nil {
		// About one event a block is usual (most blocks that lose are
		// listed as dropped): size for it once rather than grow.
		r.out.Events = make([]outcome.Event, 0, len(blocks)+16)
		r.byID = a.SortedByID || slices.IsSortedFunc(blocks, func(x, y *Block) int { return strings.Compare(x.ID, y.ID) })
	}
	return r
}

// assemble is AssembleRefs, plain or not.
func (a *Assembler) assemble(tpl *template.Template, blocks []*Block, req Request, c truncate.Counter, plain bool) (*Output, error) {
	r := a.begin(tpl, blocks, &req, c, plain)
	if err := a.decide(r); err != nil {
		return nil, err
	}
	return r.out, nil
}

// decide runs the passes of an assembly, in order (docs/assembly.md has a
// section for each). An incremental assembly starts at the ranking: its
// Index keeps the eligible blocks, their scores and their order, and
// AssembleIndexed has found the current turn and planned the units from
// it (currentTurnIndexed, planUnitsIndexed).
func (a *Assembler) decide(r *run) error {
	if r.x == nil {
		a.eligibility(r)                       // who may see which block, and which section takes it
		if err := a.conflicts(r); err != nil { // of the eligible blocks sharing a conflict_key, the most trusted
			return err
		}
		a.currentTurn(r)   // in a chat format, the turn the model answers: required
		a.reasoningTurn(r) // and of it, the turn whose reasoning items are written
		a.relevance(r)     // each eligible block's relevance to the query, if there is one
		a.scoring(r)       // each eligible block's score at now
		a.planUnits(r)     // groups, tool exchanges and summaries: blocks decided together
	}
	if err := a.tools(r); err != nil { // a chat request's tool definitions, off the budget
		return err
	}
	for k := range r.tpl.NumSections() {
		si := r.tpl.ByPriority(k)
		a.rank(r, si) // the section's candidates in the order the fill takes them
		a.fillSection(r, si)
	}
	if len(r.misses) > 0 {
		return &truncate.RequiredError{Misses: r.misses}
	}
	cut := a.budgetCut(r)                    // whole blocks go, least important first, until the estimate fits
	if err := a.write(r, &cut); err != nil { // the text, cut further until its exact count fits
		return err
	}
	if err := a.messages(r); err != nil { // the chat formats' history, as messages
		return err
	}
	a.explain(r) // results, events, what to summarise, the prompt cache
	return nil
}

// drop marks cd dropped from section sec for reason, with its event.
func (a *Assembler) drop(sec *template.Section, cd *candidate, b *Block, reason outcome.Reason, out *Output) {
	cd.status, cd.reason = outcome.StatusDropped, reason
	out.Events = append(out.Events, outcome.Event{Kind: outcome.KindDropped, Section: sec.Name(), RequestID: cd.ID, Reason: reason, Tokens: cd.tokens, Group: a.groupName(cd, b)})
	cd.event = int32(len(out.Events))
}
