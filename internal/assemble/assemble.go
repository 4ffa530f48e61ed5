package assemble

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/delimit"
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

	ranked  [][]Ranked    // per section, in file order
	cands   [][]candidate // per section, rank order
	used    []int         // per section: the text's sum the cap is applied to
	kept    []int         // per section: blocks in the text (kept or cut)
	msgs    []int         // per section: the messages' sum (chat formats)
	seps    []int         // per section: a separator's count (0 in line mode)
	join    int           // the count of "\n", during fitBudget
	keys    []rankKey
	keysTmp []rankKey
	render  []byte
	text    []byte
	order   []int

	chat   ChatCost        // the request's
	units  []unit          // groups kept or dropped whole (group.go)
	unitOf map[int32]int32 // block index → its unit in units

	sticky    []stickySection // per section, when following a previous decision
	written   []writtenRef    // the blocks of the text and the messages, in order
	keptInc   []int           // scratch of stickyReasons
	exactText bool            // the text's count is the sum of its lines' (see fitBudget)

	deg degradeState // summaries, forms and the like (degrade.go)

	// An incremental assembly's pull from its Index (turn.go).
	walking  bool
	w        walk
	pulled   []*Block                // the blocks pulled, which candidates index
	pulledE  []*ixEntry              // their entries
	priorAll []*ixEntry              // every prior item's entry, pulled or not
	tail     []tailBest              // per section: the best score never pulled
	looked   int                     // index entries looked at (TestTurnLooksAtWhatItKeeps)
	pulledBy map[*ixEntry]*candidate // scratch of pullHistory

	// spanHashes remembers spans' hashes by their text (spanHash).
	spanHashes map[string]string
	histKeys   []histKey // scratch of summarizeCandidates

	joined      bool     // writeText wrote a joiner between two pieces
	cuts        []int    // where the text's separately counted parts meet (joinDelta)
	fixed       int      // bytes at the end of text that are template literal
	protected   []string // the delimiters of protectedOf
	protectedOf *template.Template
}

// candidate is an eligible block's working state inside its section.
type candidate struct {
	Ranked
	text     string // rendered (and possibly cut) block, once rendered
	reason   outcome.Reason
	tokens   int
	offset   int
	unit     int32 // its unit in Assembler.units, plus one; 0 for none
	message  int32 // its message's index plus one, once written
	prevPos  int32 // its place in the previous text's section (sticky)
	prevCut  int32 // content bytes the previous text kept of it, when cut and unchanged
	event    int32 // 1 + the index of its dropped event, 0 for none
	cutLen   int   // the bytes of content written, when cut
	status   outcome.Status
	rendered bool // text is set: counts from the memo skip rendering
	escaped  bool
	msg      bool  // a message of its own (a history block, in a chat format)
	done     bool  // decided already, with its unit
	inc      bool  // an incumbent: the previous decision wrote it
	news     bool  // not an incumbent, and modified since the previous decision
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

func (a *Assembler) reset(n int) {
	if cap(a.ranked) < n {
		a.ranked = make([][]Ranked, n)
		a.cands = make([][]candidate, n)
		a.used = make([]int, n)
		a.kept = make([]int, n)
		a.msgs = make([]int, n)
		a.seps = make([]int, n)
		a.sticky = make([]stickySection, n)
		a.tail = make([]tailBest, n)
	}
	a.ranked, a.cands, a.used, a.kept, a.msgs, a.seps = a.ranked[:n], a.cands[:n], a.used[:n], a.kept[:n], a.msgs[:n], a.seps[:n]
	a.sticky, a.written, a.tail = a.sticky[:n], a.written[:0], a.tail[:n]
	clear(a.sticky)
	clear(a.tail)
	for i := range n {
		a.ranked[i] = a.ranked[i][:0]
		clear(a.cands[i]) // drop references to the last call's strings
		a.cands[i] = a.cands[i][:0]
		a.used[i], a.kept[i], a.msgs[i], a.seps[i] = 0, 0, 0, 0
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

// assemble is AssembleRefs, plain or not.
func (a *Assembler) assemble(tpl *template.Template, blocks []*Block, req Request, c truncate.Counter, plain bool) (*Output, error) {
	n := tpl.NumSections()
	a.reset(n)
	a.deg.reset(tpl, c, plain)
	a.chat = req.Chat
	sc := a.Scoring.WithDefaults()
	st := a.Stickiness.WithDefaults()
	prev := req.Previous
	if !prev.usable(tpl) {
		prev = nil
	}
	sticky := prev != nil && !req.Fresh
	// About one event a block is usual (most blocks that lose are listed
	// as dropped): size for it once rather than grow.
	out := &Output{Events: make([]outcome.Event, 0, len(blocks)+16)}
	var misses []truncate.RequiredMiss

	byID := a.SortedByID || slices.IsSortedFunc(blocks, func(x, y *Block) int { return strings.Compare(x.ID, y.ID) })
	a.supersede(tpl, blocks, &req, byID)
	var hidden [3]int // out_of_scope, access_denied, audience
	for i, b := range blocks {
		si, reason := eligibility(b, tpl, &req)
		var by string
		if reason == "" {
			reason, by = a.lateExclusion(i, b)
		}
		if reason != "" {
			if h := hiddenIndex(reason); h >= 0 && !req.ListHidden {
				hidden[h]++
				continue
			}
			out.Events = append(out.Events, outcome.Event{Kind: outcome.KindExcluded, RequestID: b.ID, Reason: reason, By: by})
			if reason == outcome.ReasonNoSection && b.Required {
				misses = append(misses, truncate.RequiredMiss{RequestID: b.ID, Reason: outcome.ReasonNoSection})
			}
			continue
		}
		frac, stale := b.staleness(req.Now)
		if stale {
			out.Events = append(out.Events, outcome.Event{Kind: outcome.KindNotice, Section: tpl.Section(si).Name(), RequestID: b.ID, Reason: outcome.ReasonStale})
		}
		a.ranked[si] = append(a.ranked[si], Ranked{Index: int32(i), Required: b.Required, Score: score(sc, b, req.Now, frac, stale), ID: b.ID})
	}

	misses = a.groupUnits(tpl, blocks, out, misses)
	a.buildRepls(tpl, blocks, out)

	for k := range n {
		si := tpl.ByPriority(k)
		if byID {
			a.rankByIndex(si)
		} else {
			Rank(a.ranked[si])
			for _, r := range a.ranked[si] {
				a.cands[si] = append(a.cands[si], candidate{Ranked: r})
			}
		}
		breakTies(a.cands[si], blocks)
		if a.chat.on() {
			for i := range a.cands[si] {
				a.cands[si][i].msg = blocks[a.cands[si][i].Index].Type == declare.History
			}
		}
		if sticky {
			a.prepareSticky(si, blocks, &prev.Sections[si], prev.Now, st.Margin)
			a.bindUnits(si) // after the sticky order: units know their members' places
			a.bindRepls(si, blocks, out)
			misses = a.fill(tpl.Section(si), blocks, c, out, misses, true, st.Slack)
			continue
		}
		a.bindUnits(si)
		a.bindRepls(si, blocks, out)
		misses = a.fill(tpl.Section(si), blocks, c, out, misses, false, st.Slack)
	}
	if len(misses) > 0 {
		return nil, &truncate.RequiredError{Misses: misses}
	}
	for h, n := range hidden {
		if n > 0 {
			if out.ExcludedCounts == nil {
				out.ExcludedCounts = make(map[outcome.Reason]int, len(hidden))
			}
			out.ExcludedCounts[hiddenReasons[h]] = n
		}
	}

	if err := a.fitBudget(tpl, blocks, c, out, st.Slack); err != nil {
		return nil, err
	}
	a.settleRepls(tpl, blocks, out)
	if a.chat.on() {
		a.buildMessages(blocks, out)
	}
	if sticky {
		a.stickyReasons(tpl, out, st.Margin)
	}
	compactEvents(out)
	a.results(tpl, blocks, out)
	if req.Record || req.Previous != nil { // a conversation: its host may summarise what went
		a.summarizeCandidates(tpl, blocks, out, c)
	}
	out.represented = a.represented(blocks)
	if req.Previous != nil || req.Record {
		a.cacheInfo(tpl, blocks, prev, &req, out, c, st.MinCachePrefix)
		// A conversation's messages only grow at the end: a breakpoint on
		// the last one caches the whole request for the next call, which
		// reads it back up to where it appends.
		if n := len(out.Messages); n > 0 && out.TotalTokens >= st.MinCachePrefix {
			out.Messages[n-1].CacheBreakpoint = true
		}
	}
	return out, nil
}

// rankKey is a compact sort key for blocks given in request_id order:
// required first, then score descending (the bits of a non-negative float64
// order as the float does; inverted for descending), then index. Sorting
// 16-byte keys with integer comparisons is several times faster than
// sorting Ranked values.
type rankKey struct {
	score uint64 // ^Float64bits(score); required blocks get 0 via req
	index uint32
	req   uint32 // 0 for required, 1 otherwise
}

func compareRankKey(a, b rankKey) int {
	switch {
	case a.req != b.req:
		return int(a.req) - int(b.req)
	case a.score != b.score:
		if a.score < b.score {
			return -1
		}
		return 1
	}
	return int(a.index) - int(b.index)
}

// descending maps a score to a key whose ascending order is the scores'
// descending order, for every float (negative ones come from a Scoring with
// negative weights): flip all bits of negatives and the sign bit of the
// rest, which orders them as integers, then invert. -0 is taken as +0.
func descending(f float64) uint64 {
	if f == 0 {
		f = 0 // -0 → +0
	}
	b := math.Float64bits(f)
	if b>>63 == 1 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	return ^b
}

// rankByIndex orders section si's ranked blocks (given in request_id
// order) into its candidates, as compareRankedByIndex would.
func (a *Assembler) rankByIndex(si int) {
	ranked := a.ranked[si]
	keys := a.keys[:0]
	for i, r := range ranked {
		k := rankKey{score: descending(r.Score), index: uint32(i), req: 1}
		if r.Required {
			k.req = 0
		}
		keys = append(keys, k)
	}
	keys = a.sortRankKeys(keys)
	a.cands[si] = slices.Grow(a.cands[si], len(keys)) // once: not grown, and copied, block by block
	for _, k := range keys {
		a.cands[si] = append(a.cands[si], candidate{Ranked: ranked[k.index]})
	}
	a.keys = keys
}

// radixMin is the size from which sortRankKeys uses a radix sort rather
// than a comparison sort.
const radixMin = 256

// sortRankKeys sorts keys by compareRankKey. Keys come in index order, so
// a stable sort on (req, score) gives the index tie-break for free; large
// sections get an LSD radix sort on the score key (eight byte passes, each
// skipped when every key shares that byte, as scores in [0, 1] share their
// exponent) and a stable pass that puts required blocks first: linear, where
// a comparison sort of 20,000 keys costs several times more. It returns the
// sorted slice, which may be a.keysTmp's array; the other array becomes
// the scratch for next time.
func (a *Assembler) sortRankKeys(keys []rankKey) []rankKey { return sortRankKeys(keys, &a.keysTmp) }

// sortRankKeys is Assembler.sortRankKeys with its scratch given.
func sortRankKeys(keys []rankKey, scratch *[]rankKey) []rankKey {
	if len(keys) < radixMin {
		slices.SortFunc(keys, compareRankKey)
		return keys
	}
	tmp := slices.Grow((*scratch)[:0], len(keys))[:len(keys)]
	src, dst := keys, tmp
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		clear(count[:])
		for _, k := range src {
			count[byte(k.score>>shift)]++
		}
		if count[byte(src[0].score>>shift)] == len(src) {
			continue // every key has this byte: the pass would change nothing
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, k := range src {
			b := byte(k.score >> shift)
			dst[count[b]] = k
			count[b]++
		}
		src, dst = dst, src
	}
	// Required blocks first, stably.
	n := 0
	for _, k := range src {
		if k.req == 0 {
			dst[n] = k
			n++
		}
	}
	if n > 0 && n < len(src) {
		for _, k := range src {
			if k.req != 0 {
				dst[n] = k
				n++
			}
		}
		src, dst = dst, src
	}
	*scratch = dst[:0]
	return src
}

// hiddenReasons are the reasons outcome.Hidden names, in the order of the
// Assembler's counts.
var hiddenReasons = [...]outcome.Reason{outcome.ReasonOutOfScope, outcome.ReasonAccessDenied, outcome.ReasonAudience}

// hiddenIndex returns r's index in hiddenReasons, or -1.
func hiddenIndex(r outcome.Reason) int {
	switch r {
	case outcome.ReasonOutOfScope:
		return 0
	case outcome.ReasonAccessDenied:
		return 1
	case outcome.ReasonAudience:
		return 2
	}
	return -1
}

// eligibility returns the section b goes to, or why it cannot enter the
// context. Whose block it is comes first: a block of another session or
// user, or one needing a role the request lacks, is out_of_scope or
// access_denied even when it has also expired, so that no event about it
// (which lists ids) tells the request it exists.
func eligibility(b *Block, tpl *template.Template, req *Request) (int, outcome.Reason) {
	switch {
	case b.Scope == "session" && b.SessionID != req.SessionID,
		b.Scope == "user" && b.UserID != req.UserID:
		return -1, outcome.ReasonOutOfScope
	case len(b.Roles()) > 0 && !anyShared(b.Roles(), req.Roles):
		return -1, outcome.ReasonAccessDenied
	case !b.ForAssistant:
		return -1, outcome.ReasonAudience
	case !b.ValidUntil.IsZero() && !req.Now.Before(b.ValidUntil):
		return -1, outcome.ReasonExpired
	}
	si, ok := tpl.SectionFor(b.Type)
	if !ok {
		return -1, outcome.ReasonNoSection
	}
	return si, ""
}

func anyShared(have, want []string) bool {
	for _, h := range have {
		if slices.Contains(want, h) {
			return true
		}
	}
	return false
}

// renderBlock renders b (with content in place of its own) for sec. With
// line set it appends the newline that ends the block's line, and returns
// the rendering both with it (to count) and without it (to write).
func (a *Assembler) renderBlock(sec *template.Section, b *Block, content string, line bool) (withLine, text string, escaped bool) {
	a.render, escaped = sec.AppendRender(a.render[:0], template.Fields{
		Content: content, RequestID: b.ID, MemoryType: string(b.Type), SourceID: b.SourceID,
	})
	if line {
		a.render = append(a.render, '\n')
		withLine = string(a.render)
		return withLine, withLine[:len(withLine)-1], escaped
	}
	text = string(a.render)
	return text, text, escaped
}

// lineMode reports whether a section counts its blocks as lines: with the
// default separator "\n" every block is counted with the newline that ends
// it, so a section's count is the exact count of its text (for a
// line-additive counter) and no separator is counted apart.
func lineMode(sec *template.Section) bool { return sec.Separator() == "\n" }

// blockTokens sets cd.tokens: from the memo when it knows the block in this
// section, else by rendering and counting it (and telling the memo).
func (a *Assembler) blockTokens(sec *template.Section, b *Block, cd *candidate, c truncate.Counter) {
	if cd.msg {
		a.messageCount(sec, b, cd, c)
		return
	}
	line := lineMode(sec)
	var key MemoKey
	if a.Memo != nil && b.Key != (MemoKey{}).Block {
		key = MemoKey{Block: formKey(b, cd.form), Section: sec.Key()}
		if n, ok := a.Memo.Get(key); ok {
			cd.tokens = n
			return
		}
	}
	content, _ := a.content(sec, b, cd.form)
	counted, text, escaped := a.renderBlock(sec, b, content, line)
	cd.text, cd.escaped, cd.rendered = text, escaped, true
	cd.tokens = c.Count(counted)
	if key != (MemoKey{}) {
		a.Memo.Add(key, cd.tokens)
	}
	if k, ok := a.renderKey(sec, b, cd); ok {
		a.Renders.AddRender(k, text, escaped)
	}
}

// renderKey returns the key of cd's whole rendering in the render memo,
// when it has one: its content in full (no variant, no max_tokens).
func (a *Assembler) renderKey(sec *template.Section, b *Block, cd *candidate) (MemoKey, bool) {
	if a.Renders == nil || b.Key == (MemoKey{}).Block || cd.form != 0 || b.MaxTokens() > 0 {
		return MemoKey{}, false
	}
	return MemoKey{Block: b.Key, Section: sec.Key()}, true
}

// ensureRendered renders a kept block whose count came from the memo.
func (a *Assembler) ensureRendered(sec *template.Section, b *Block, cd *candidate) {
	if cd.rendered {
		return
	}
	content, _ := a.content(sec, b, cd.form)
	if cd.msg {
		cd.text, cd.rendered = content, true
		return
	}
	key, memo := a.renderKey(sec, b, cd)
	if memo {
		if text, escaped, ok := a.Renders.GetRender(key); ok {
			cd.text, cd.escaped, cd.rendered = text, escaped, true
			return
		}
	}
	_, cd.text, cd.escaped = a.renderBlock(sec, b, content, false)
	cd.rendered = true
	if memo {
		a.Renders.AddRender(key, cd.text, cd.escaped)
	}
}

// drop marks cd dropped from section sec for reason, with its event.
func (a *Assembler) drop(sec *template.Section, cd *candidate, b *Block, reason outcome.Reason, out *Output) {
	cd.status, cd.reason = outcome.StatusDropped, reason
	out.Events = append(out.Events, outcome.Event{Kind: outcome.KindDropped, Section: sec.Name(), RequestID: cd.ID, Reason: reason, Tokens: cd.tokens, Group: a.groupName(cd, b)})
	cd.event = int32(len(out.Events))
}

// cutAny cuts a text block or a message to room tokens.
func (a *Assembler) cutAny(sec *template.Section, b *Block, cd *candidate, room int, c truncate.Counter) bool {
	if cd.msg {
		return a.cutMessage(sec, b, cd, room, c)
	}
	return a.cut(sec, b, cd, room, c)
}

// cut shrinks b's content so that its rendering fits room tokens, at a
// token boundary of the content. It reports false when nothing fits.
func (a *Assembler) cut(sec *template.Section, b *Block, cd *candidate, room int, c truncate.Counter) bool {
	line := lineMode(sec)
	content, _ := a.content(sec, b, cd.form)
	empty, _, _ := a.renderBlock(sec, b, "", line)
	target := room - c.Count(empty)
	// Cutting the content and rendering it around again can change the
	// count at the joins (and neutralising adds characters), so verify and
	// shrink by the excess a few times.
	for range 8 {
		if target <= 0 {
			return false
		}
		part := c.Cut(content, target)
		if part == "" {
			return false
		}
		counted, text, escaped := a.renderBlock(sec, b, part, line)
		tokens := c.Count(counted)
		if tokens <= room {
			cd.text, cd.tokens, cd.escaped, cd.rendered = text, tokens, escaped, true
			cd.cutLen = len(part)
			return true
		}
		target -= max(tokens-room, 1)
	}
	return false
}

// fitBudget drops blocks, lowest-priority section and lowest-ranked block
// first, until the final text's exact count fits the budget, and renders it.
//
// The text is the header line, then each section with blocks, its blocks
// joined by its separator and followed by a newline. When every such
// section is in line mode, the counter is line-additive and every block
// starts a line cleanly (see [LineAdditive]), the text's count is exactly
// the header line's count plus each section's, so the estimate is the
// count and the final text needs no counting: an unchanged or one-block-
// changed assembly then makes at most one tokenizer call. Otherwise the
// final text is counted, and blocks keep going until that count fits.
//
// In a section that follows its previous decision, when the cut drops a
// block that decision wrote while a block new to it is in the section,
// the section sheds: once the estimate fits, it keeps dropping the
// lowest-ranked blocks the previous decision wrote until its sum is at
// most slack times what it was (reason slack), so the next calls have
// room to append.
func (a *Assembler) fitBudget(tpl *template.Template, blocks []*Block, c truncate.Counter, out *Output, slack float64) error {
	budget := tpl.Budget()
	n := tpl.NumSections()
	a.join = c.Count("\n")
	estimate := c.Count(tpl.Header()+"\n") + a.chatFixed(c)
	for si := range n {
		estimate += a.sectionTokens(tpl, si)
	}
	cursor := dropCursor{k: n - 1, j: -2}
	dropNext := func() bool {
		si, j, ok := cursor.next(tpl, a.cands)
		if !ok {
			return a.degradeRequired(tpl, budget, &estimate, blocks, c)
		}
		if a.degradeOnBudget(tpl, si, j, budget, &estimate, &cursor, blocks, out, c) {
			return true
		}
		before := a.sectionTokens(tpl, si) // while the block still counts
		sec := tpl.Section(si)
		if a.sticky[si].on && a.cands[si][j].inc && !a.sticky[si].shed && a.hasEntrants(si) {
			a.sticky[si].shed, a.sticky[si].budget = true, true
		}
		if u := a.unitOfCand(&a.cands[si][j]); u != nil {
			for _, m := range u.cands {
				if a.cands[si][m].inText() {
					a.dropBlock(sec, si, m, outcome.ReasonGroup, blocks, out)
				}
			}
		} else {
			a.dropBlock(sec, si, j, outcome.ReasonBudget, blocks, out)
		}
		estimate -= before - a.sectionTokens(tpl, si)
		return true
	}
	for estimate > budget && dropNext() {
	}
	for si := range n {
		if a.sticky[si].on && a.sticky[si].budget {
			// Only a shed the cut started: one fillSticky made is done.
			before := a.sectionTokens(tpl, si)
			a.shed(tpl.Section(si), si, int(slack*float64(a.used[si]+a.msgs[si])), blocks, out)
			estimate -= before - a.sectionTokens(tpl, si)
		}
	}
	if a.standInAll(budget, &estimate, blocks, out, c) {
		cursor = dropCursor{k: n - 1, j: -2}
	}
	exact := a.linesAdd(tpl, blocks, c)
	for {
		a.writeText(tpl, blocks)
		out.Text = string(a.text)
		// A joiner written at a join between blocks is in no block's
		// count: then only counting the text tells its size.
		a.exactText = exact && !a.joined
		if a.exactText && estimate <= budget {
			out.TotalTokens = estimate
			break
		}
		if d, ok := a.joinDelta(tpl, c, out.Text); ok {
			out.TotalTokens = estimate + d // the parts' counts, joined
		} else {
			out.TotalTokens = c.Count(out.Text) + a.chatFixed(c)
			for si := range n {
				out.TotalTokens += a.msgs[si]
			}
		}
		if out.TotalTokens <= budget {
			break
		}
		if !dropNext() {
			return a.overBudget(tpl, budget, c)
		}
	}
	if a.chat.Format == chat.FormatAnthropic {
		return a.leadWithUser(tpl, blocks, out)
	}
	return nil
}

// joinDelta corrects the estimate, the sum of the counts of the text's
// parts (the header line, each block, each separator and section end), to
// the text's count, when the counter can count only around the parts'
// joins. A joiner between blocks is in no part: then it cannot.
func (a *Assembler) joinDelta(tpl *template.Template, c truncate.Counter, text string) (int, bool) {
	jc, ok := c.(truncate.JoinCounter)
	if !ok || a.joined {
		return 0, false
	}
	a.cuts = append(a.cuts[:0], len(tpl.Header())+1)
	for si := range a.cands {
		line := lineMode(tpl.Section(si))
		for i := range a.cands[si] {
			if cd := &a.cands[si][i]; cd.inText() && !cd.msg {
				a.cuts = append(a.cuts, cd.offset)
				if !line {
					a.cuts = append(a.cuts, cd.offset+len(cd.text)) // a separator or the section's end follows
				}
			}
		}
	}
	slices.Sort(a.cuts)
	return jc.JoinDelta(text, a.cuts)
}

// sectionTokens returns what section si adds to the total: its text (a
// section not in line mode ends with a newline of its own) and its
// messages.
func (a *Assembler) sectionTokens(tpl *template.Template, si int) int {
	if a.kept[si] == 0 {
		return a.msgs[si]
	}
	if lineMode(tpl.Section(si)) {
		return a.used[si] + a.msgs[si]
	}
	return a.used[si] + a.join + a.msgs[si]
}

// dropBlock drops the block at cands[si][j], kept or cut so far, for
// reason: it leaves the text (or the messages), with its event, and the
// section's sums lose its count and the separator it no longer needs.
func (a *Assembler) dropBlock(sec *template.Section, si, j int, reason outcome.Reason, blocks []*Block, out *Output) {
	cd := &a.cands[si][j]
	cd.text, cd.rendered = "", false
	a.drop(sec, cd, blocks[cd.Index], reason, out)
	if cd.msg {
		a.msgs[si] -= cd.tokens
		return
	}
	a.kept[si]--
	switch {
	case a.kept[si] == 0:
		a.used[si] = 0
	default:
		a.used[si] -= cd.tokens + a.seps[si]
	}
}

// linesAdd reports whether the text's count is the sum of its lines' counts:
// a line-additive counter, every section with blocks in line mode, and every
// kept block starting its line cleanly. It renders the kept blocks.
func (a *Assembler) linesAdd(tpl *template.Template, blocks []*Block, c truncate.Counter) bool {
	la, ok := c.(truncate.LineAdditive)
	additive := ok && la.LineAdditive()
	for si := range a.cands {
		sec := tpl.Section(si)
		for i := range a.cands[si] {
			cd := &a.cands[si][i]
			if !cd.inText() || cd.msg {
				continue
			}
			a.ensureRendered(sec, blocks[cd.Index], cd)
			if !lineMode(sec) || !truncate.StartsLineCleanly(cd.text) {
				additive = false
			}
		}
	}
	return additive
}

// overBudget builds the error for required blocks that alone exceed the
// budget.
func (a *Assembler) overBudget(tpl *template.Template, budget int, c truncate.Counter) error {
	var misses []truncate.RequiredMiss
	for si := range a.cands {
		for _, cd := range a.cands[si] {
			if cd.inText() && cd.Required {
				misses = append(misses, truncate.RequiredMiss{RequestID: cd.ID, Section: tpl.Section(si).Name(), Tokens: cd.tokens, Limit: budget, Reason: outcome.ReasonBudget})
			}
		}
	}
	if len(misses) == 0 {
		return fmt.Errorf("%w: the protocol header alone takes %d tokens, more than the budget of %d",
			truncate.ErrBudgetTooSmall, c.Count(tpl.Header()), budget)
	}
	return &truncate.RequiredError{Misses: misses}
}

// dropCursor walks blocks in budget-cut order: sections from the least
// important, blocks from the lowest-ranked, skipping required blocks and
// blocks not in the text.
type dropCursor struct{ k, j int }

func (d *dropCursor) next(tpl *template.Template, cands [][]candidate) (si, j int, ok bool) {
	for d.k >= 0 {
		si = tpl.ByPriority(d.k)
		if d.j == -2 {
			d.j = len(cands[si]) - 1
		}
		for ; d.j >= 0; d.j-- {
			cd := &cands[si][d.j]
			if cd.inText() && !cd.Required {
				j = d.j
				d.j--
				return si, j, true
			}
		}
		d.k--
		d.j = -2
	}
	return 0, 0, false
}

// writeText renders the header line and every section with blocks into
// a.text, recording each block's offset. Each section's blocks are joined by
// its separator and followed by a newline, so the text ends with one.
func (a *Assembler) writeText(tpl *template.Template, blocks []*Block) {
	if a.protectedOf != tpl {
		a.protected, a.protectedOf = tpl.Protected(), tpl
	}
	protected := a.protected
	a.joined = false
	a.written = a.written[:0]
	a.text = append(a.text[:0], tpl.Header()...)
	a.text = append(a.text, '\n')
	a.fixed = len(a.text)
	for si := range tpl.NumSections() {
		sec := tpl.Section(si)
		cands := a.cands[si]
		a.order = a.order[:0]
		for i := range cands {
			if cands[i].inText() && !cands[i].msg {
				a.ensureRendered(sec, blocks[cands[i].Index], &cands[i])
				a.order = append(a.order, i)
			}
		}
		if len(a.order) == 0 {
			continue
		}
		switch sec.Order() {
		case template.OrderRank:
			if a.sticky[si].on {
				// Not the score's order, which drifts from call to call:
				// the previous text's, then the blocks new to it.
				slices.SortStableFunc(a.order, func(x, y int) int {
					return cmp.Compare(writeKey(&cands[x]), writeKey(&cands[y]))
				})
			}
		case template.OrderDeclared:
			slices.SortStableFunc(a.order, func(x, y int) int {
				_, sx := a.placeOf(&cands[x], blocks[cands[x].Index])
				_, sy := a.placeOf(&cands[y], blocks[cands[y].Index])
				return cmp.Compare(sx, sy)
			})
		case template.OrderTime:
			slices.SortStableFunc(a.order, func(x, y int) int {
				tx, _ := a.placeOf(&cands[x], blocks[cands[x].Index])
				ty, _ := a.placeOf(&cands[y], blocks[cands[y].Index])
				return tx.Compare(ty)
			})
		}
		prefix, suffix := sec.FixedEdges()
		for w, i := range a.order {
			if w > 0 {
				a.appendJoined(sec.Separator(), len(sec.Separator()), protected)
			}
			a.appendJoined(cands[i].text, prefix, protected)
			cands[i].offset = len(a.text) - len(cands[i].text)
			a.written = append(a.written, writtenRef{si, i})
			a.fixed = min(suffix, len(cands[i].text))
		}
		a.text = append(a.text, '\n')
		a.fixed++
	}
}

// results fills out.Sections and the escaped notices.
func (a *Assembler) results(tpl *template.Template, blocks []*Block, out *Output) {
	out.Sections = make([]outcome.SectionResult, tpl.NumSections())
	total := 0
	for si := range a.cands {
		total += len(a.cands[si])
	}
	all := make([]outcome.BlockResult, total) // one allocation for every section
	for si := range out.Sections {
		sec := tpl.Section(si)
		sr := outcome.SectionResult{Name: sec.Name(), Priority: sec.Priority(), MaxTokens: sec.MaxTokens(), UsedTokens: a.used[si] + a.msgs[si]}
		sr.Blocks, all = all[:len(a.cands[si]):len(a.cands[si])], all[len(a.cands[si]):]
		for i := range a.cands[si] {
			cd := &a.cands[si][i]
			b := blocks[cd.Index]
			br := &sr.Blocks[i]
			br.RequestID, br.MemoryType, br.Tokens = cd.ID, string(b.Type), cd.tokens
			br.Score, br.Status, br.Reason, br.Required = math.Round(cd.Score*1e4)/1e4, cd.status, cd.reason, cd.Required
			br.Trust, br.ViolationPatterns = b.Trust, b.ViolationPatterns()
			br.SourceID, br.SourceLocation, br.URI = b.SourceID, b.SourceLocation(), b.URI()
			br.Index = cd.Index
			br.Group, br.Message = a.groupName(cd, b), int(cd.message)
			if cd.inText() && !cd.msg {
				br.Offset, br.Length = cd.offset, len(cd.text)
			}
			if cd.inText() {
				br.Variant = int(cd.form)
			}
			br.By = a.byOf(cd, blocks)
		}
		out.Sections[si] = sr
	}
	for si := range a.cands {
		for i := range a.cands[si] {
			a.degradeNotices(tpl.Section(si), &a.cands[si][i], blocks[a.cands[si][i].Index], out)
			if cd := &a.cands[si][i]; cd.inText() && cd.escaped {
				out.Events = append(out.Events, outcome.Event{Kind: outcome.KindNotice, Section: tpl.Section(si).Name(), RequestID: cd.ID, Reason: outcome.ReasonEscaped})
			}
		}
	}
}

// appendJoined appends s, whose first fixed bytes are template literal
// text, to the text, with a joiner before it if content would form a
// protected delimiter across the join: two blocks written back to back
// (separator "") must not spell one between them, nor may a block's content
// complete a delimiter with the separator or line break before it.
func (a *Assembler) appendJoined(s string, fixed int, protected []string) {
	if s == "" {
		return
	}
	if delimit.Crosses(a.text, a.fixed, s, fixed, protected) {
		a.text = append(a.text, delimit.Joiner...)
		a.joined = true
	}
	a.text = append(a.text, s...)
	a.fixed += len(s) // all literal when s is; callers lower it for blocks
}
