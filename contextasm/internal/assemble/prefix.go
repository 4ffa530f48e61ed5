package assemble

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// maxBreakpoints is the most cache breakpoints an assembly names: the
// most a request may mark with Anthropic's API.
const maxBreakpoints = 4

// writeKey orders a sticky section's blocks for writing: incumbents where
// the previous text had them, then the blocks new to it.
func writeKey(cd *candidate) int64 {
	if cd.inc {
		return int64(cd.prevPos)
	}
	return math.MaxInt32
}

// span is one block's part of the text: from the end of the previous
// block's span (or of the header line) to the byte after the block's own
// text, which ends its line or starts the separator after it.
type span struct {
	si, ci int
	end    int
	hash   string
}

// spans cuts text into its blocks' spans, in text order.
func (a *Assembler) spans(tpl *template.Template, text string) []span {
	out := make([]span, len(a.wr.written))
	start := len(tpl.Header()) + 1
	if a.spanHashes == nil || len(a.spanHashes) >= maxSpanHashes {
		a.spanHashes = make(map[string]string, len(a.wr.written))
	}
	for k, w := range a.wr.written {
		cd := &a.secs[w.si].cands[w.ci]
		end := cd.offset + len(cd.text) + 1 // the text ends with a newline after its last block
		out[k] = span{si: w.si, ci: w.ci, end: end, hash: a.spanHash(text[start:end])}
		start = end
	}
	return out
}

// maxSpanHashes bounds the spans an Assembler remembers the hashes of: a
// few templates' kept blocks.
const maxSpanHashes = 2048

// spanHash returns the hex of the first 8 bytes of piece's SHA-256: from
// the spans remembered (a kept block's span is the same text from one
// turn to the next), else hashed and remembered.
func (a *Assembler) spanHash(piece string) string {
	if h, ok := a.spanHashes[piece]; ok {
		return h
	}
	sum := sha256.Sum256([]byte(piece))
	h := hex.EncodeToString(sum[:8])
	a.spanHashes[strings.Clone(piece)] = h // not a slice of the whole text
	return h
}

// decision records what this assembly decided, for the next one, and
// the blocks it names, in its order (Output.written): the spans of the
// text, and the messages msgs in reading order (run.msgs). Its blocks share
// one array, and their keys one string: a conversation records one every
// call.
func (a *Assembler) decision(tpl *template.Template, blocks []*Block, spans []span, msgs []msgRef, now time.Time) (*Decision, []*Block) {
	d := &Decision{Version: DecisionVersion, Now: now.UTC(), Sections: make([]SectionDecision, tpl.NumSections())}
	for si := range d.Sections {
		d.Sections[si] = SectionDecision{Name: tpl.Section(si).Name()}
		if ss := a.secs[si].sticky; ss.hasFloor {
			d.Sections[si].Floor = &ss.floor
		}
	}
	n := len(spans) + len(msgs)
	if n == 0 {
		return d, nil
	}
	count := make([]int, len(d.Sections))
	for _, sp := range spans {
		count[sp.si]++
	}
	for _, r := range msgs {
		count[r.si]++
	}
	all, written := make([]WrittenBlock, n), make([]*Block, n)
	at := make([]int, len(d.Sections)) // each section's next place in written
	for si, k := 0, 0; si < len(count); si++ {
		if count[si] > 0 {
			d.Sections[si].Blocks = all[k : k : k+count[si]]
		}
		at[si] = k
		k += count[si]
	}
	hexKeys := make([]byte, 0, 16*n)
	for _, sp := range spans {
		k := keyOf(blocks[a.secs[sp.si].cands[sp.ci].Index])
		hexKeys = hex.AppendEncode(hexKeys, k[:8]) // WrittenBlock.Key: the first 8 bytes, in hex
	}
	for _, r := range msgs {
		k := keyOf(blocks[a.secs[r.si].cands[r.j].Index])
		hexKeys = hex.AppendEncode(hexKeys, k[:8])
	}
	keys := string(hexKeys)
	for k, sp := range spans {
		cd := &a.secs[sp.si].cands[sp.ci]
		w := WrittenBlock{ID: cd.ID, Key: keys[16*k : 16*k+16], Span: sp.hash, Variant: writtenVariant(cd), Recalled: cd.late, Cleared: cd.form == formCleared}
		if cd.status == outcome.StatusCut {
			w.Cut = cd.cutLen
		}
		d.Sections[sp.si].Blocks = append(d.Sections[sp.si].Blocks, w)
		written[at[sp.si]] = blocks[cd.Index]
		at[sp.si]++
	}
	for k, r := range msgs {
		cd := &a.secs[r.si].cands[r.j]
		ki := 16 * (len(spans) + k)
		w := WrittenBlock{ID: cd.ID, Key: keys[ki : ki+16], Message: true, Variant: writtenVariant(cd), Recalled: cd.late, Cleared: cd.form == formCleared}
		if cd.status == outcome.StatusCut {
			w.Cut = cd.cutLen
		}
		d.Sections[r.si].Blocks = append(d.Sections[r.si].Blocks, w)
		written[at[r.si]] = blocks[cd.Index]
		at[r.si]++
	}
	return d, written
}

// cacheInfo sets out.Prefix (against prev, when there is one),
// out.Breakpoints, and, when req.Record asks, out.Decision and out.Repeat.
func (a *Assembler) cacheInfo(r *run) {
	tpl, prev, req, out, c, minPrefix := r.tpl, r.prev, r.req, r.out, r.c, r.stick.MinCachePrefix
	blocks := a.view(r.blocks)
	spans := a.spans(tpl, out.Text)
	if req.Record {
		out.Decision, out.written = a.decision(tpl, blocks, spans, r.msgs, req.Now)
		if req.queried() {
			out.Decision.Query = req.QueryKey
		}
	}
	tc := textCounts{a: a, tpl: tpl, text: out.Text, spans: spans, c: c}
	if a.wr.exactText {
		tc.header = c.Count(tpl.Header() + "\n")
	}
	if prev != nil {
		p := a.prefix(tpl, spans, prev.textBlocks())
		if p.Reason == outcome.PrefixRemoved && r.hides(p.FirstChangedBlock) {
			p.FirstChangedBlock = "" // the text lost a block the request may not know of
		}
		p.StableTokens = tc.before(p.StableTokens) // the span count until now
		out.Prefix = p
	}
	out.Breakpoints = a.breakpoints(tpl, spans, prev, &tc, minPrefix)
	if req.Record {
		out.Repeat = &outcome.Prefix{StableBytes: len(out.Text), StableTokens: tc.before(len(spans)), Reason: outcome.PrefixUnchanged}
	}
}

// textCounts tells the token count of the text up to a span's end.
type textCounts struct {
	a      *Assembler
	tpl    *template.Template
	text   string
	spans  []span
	c      truncate.Counter
	header int // the header line's count, when the text's count is exact
}

// before returns the token count of the text before the end of its first
// k spans: a sum of line counts when the text's count is (see write),
// else counted.
func (tc *textCounts) before(k int) int {
	if !tc.a.wr.exactText {
		if k == 0 {
			return tc.c.Count(tc.text[:len(tc.tpl.Header())+1])
		}
		return tc.c.Count(tc.text[:tc.spans[k-1].end])
	}
	n := tc.header
	for _, sp := range tc.spans[:k] {
		n += tc.a.secs[sp.si].cands[sp.ci].tokens
	}
	return n
}

// prevSpan is a block of the previous text: its section and what was
// written.
type prevSpan struct {
	si int
	w  *WrittenBlock
}

// textBlocks returns the blocks of d's text (not its messages), in
// written order.
func (d *Decision) textBlocks() []prevSpan {
	var before []prevSpan
	for si := range d.Sections {
		for j := range d.Sections[si].Blocks {
			if w := &d.Sections[si].Blocks[j]; !w.Message {
				before = append(before, prevSpan{si, w})
			}
		}
	}
	return before
}

// prefix compares the text's spans with the previous text's (before):
// how many bytes agree, why they part, and where. Its StableTokens holds
// the number of spans that agree, for the caller to count.
func (a *Assembler) prefix(tpl *template.Template, spans []span, before []prevSpan) *outcome.Prefix {
	id := func(sp span) string { return a.secs[sp.si].cands[sp.ci].ID }
	k := 0
	for k < len(spans) && k < len(before) && id(spans[k]) == before[k].w.ID && spans[k].hash == before[k].w.Span {
		k++
	}
	p := &outcome.Prefix{StableBytes: len(tpl.Header()) + 1, StableTokens: k}
	if k > 0 {
		p.StableBytes = spans[k-1].end
	}
	switch {
	case k == len(spans) && k == len(before):
		p.Reason = outcome.PrefixUnchanged
		return p
	case k == len(before):
		p.Reason = outcome.PrefixAppended
	case k == len(spans):
		p.Reason = outcome.PrefixRemoved
	default:
		p.Reason = partReason(id(spans[k]), before[k].w.ID, spans, before, id)
	}
	if p.Reason == outcome.PrefixRemoved {
		p.FirstChangedSection, p.FirstChangedBlock = tpl.Section(before[k].si).Name(), before[k].w.ID
	} else {
		p.FirstChangedSection, p.FirstChangedBlock = tpl.Section(spans[k].si).Name(), id(spans[k])
	}
	return p
}

// partReason says why two texts part at a block: cur, written now where
// the previous text wrote was.
func partReason(cur, was string, spans []span, before []prevSpan, id func(span) string) outcome.PrefixReason {
	if cur == was {
		return outcome.PrefixChanged
	}
	inBefore := slices.ContainsFunc(before, func(b prevSpan) bool { return b.w.ID == cur })
	inNow := slices.ContainsFunc(spans, func(sp span) bool { return id(sp) == was })
	switch {
	case !inBefore:
		return outcome.PrefixAdded
	case !inNow:
		return outcome.PrefixRemoved
	}
	return outcome.PrefixMoved
}

// breakpoints returns where a prompt cache may end: the ends of the
// sections whose spans are the previous text's (every section's, on a
// conversation's first assembly), the last maxBreakpoints of those that
// cover at least minPrefix tokens.
func (a *Assembler) breakpoints(tpl *template.Template, spans []span, prev *Decision, tc *textCounts, minPrefix int) []outcome.Breakpoint {
	var bps []outcome.Breakpoint
	for k := 0; k < len(spans); {
		si, first := spans[k].si, k
		for k < len(spans) && spans[k].si == si {
			k++
		}
		if prev != nil && !a.sameSpans(si, spans[first:k], &prev.Sections[si]) {
			continue
		}
		bps = append(bps, outcome.Breakpoint{Section: tpl.Section(si).Name(), Offset: spans[k-1].end, Tokens: k})
	}
	// Tokens held the span count until now: count only what is kept.
	j := 0
	for _, bp := range bps {
		if n := tc.before(bp.Tokens); n >= minPrefix {
			bp.Tokens = n
			bps[j] = bp
			j++
		}
	}
	if j == 0 {
		return nil // none, as a dump read back has
	}
	bps = bps[:j]
	if len(bps) > maxBreakpoints {
		bps = bps[len(bps)-maxBreakpoints:]
	}
	return bps
}

// sameSpans reports whether section si's spans are the ones its previous
// decision wrote, block for block.
func (a *Assembler) sameSpans(si int, spans []span, prev *SectionDecision) bool {
	n := 0
	for _, w := range prev.Blocks {
		if w.Message {
			continue
		}
		if n >= len(spans) || w.ID != a.secs[si].cands[spans[n].ci].ID || w.Span != spans[n].hash {
			return false
		}
		n++
	}
	return n == len(spans)
}

// markRecalled marks the candidates that are what the query recalled
// (candidate.late, WrittenBlock.Recalled): following the previous
// decision, a block that entered after the stable part (tier 1: what the
// query recalled, and what fills the room after it) or that was so
// written before and stays; deciding afresh, a block whose relevance adds
// more than the margin to its score, but the query's own turn.
func (a *Assembler) markRecalled(r *run) {
	if !r.req.queried() {
		return
	}
	margin := r.stick.Margin
	blocks := a.view(r.blocks)
	for si := range a.secs {
		_, share := sectionScoring(a.Scoring, r.tpl.Section(si), r.req.hostRelevance())
		sticky := a.secs[si].sticky.on
		for i := range a.secs[si].cands {
			cd := &a.secs[si].cands[i]
			if sticky {
				cd.late = cd.soft || cd.prevRecall
			} else {
				cd.late = share*cd.Relevance > margin && blocks[cd.Index] != r.out.QueryTurn
			}
		}
		if !sticky && share > 0 {
			a.boundStable(si, share, blocks, r.out.QueryTurn)
		}
	}
}

// boundStable bounds the stable part of section si's fresh decision with
// a query to 1 − share of what the section holds: the blocks it keeps
// that rank highest without relevance (Base: for history, the newest),
// the required ones and the query's own turn counted first. Every other
// block it keeps is late, as what the query recalled is: written after
// the stable part, and recorded as recalled (WrittenBlock.Recalled), so
// that the next question weighs it as what this one recalled. Without
// the bound, a block kept only because room was left over (old, and not
// relevant) would be an incumbent of the stable part for every question
// that follows, and the room a later question's recalls compete for
// would be what the first question's recalls happened to take.
func (a *Assembler) boundStable(si int, share float64, blocks []*Block, queryTurn *Block) {
	cands := a.secs[si].cands
	room := int((1 - share) * float64(a.secs[si].used))
	order, held := a.stable[:0], 0
	for i := range cands {
		switch cd := &cands[i]; {
		case !cd.inText() || cd.late:
		case cd.Required || blocks[cd.Index] == queryTurn:
			held += cd.tokens
		default:
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(x, y int) int {
		if c := cmp.Compare(cands[y].Base, cands[x].Base); c != 0 {
			return c
		}
		return compareNewest(blocks[cands[x].Index], blocks[cands[y].Index])
	})
	for _, i := range order {
		held += cands[i].tokens
		cands[i].late = held > room
	}
	a.stable = order
}
