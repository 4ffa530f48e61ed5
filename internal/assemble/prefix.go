package assemble

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
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

// decision records what this assembly decided, for the next one.
func (a *Assembler) decision(tpl *template.Template, blocks []*Block, spans []span, now time.Time) *Decision {
	d := &Decision{Version: DecisionVersion, Now: now.UTC(), Sections: make([]SectionDecision, tpl.NumSections())}
	for si := range d.Sections {
		d.Sections[si] = SectionDecision{Name: tpl.Section(si).Name()}
		if ss := a.secs[si].sticky; ss.hasFloor {
			d.Sections[si].Floor = &ss.floor
		}
	}
	for _, sp := range spans {
		cd := &a.secs[sp.si].cands[sp.ci]
		w := WrittenBlock{ID: cd.ID, Key: hexKey(keyOf(blocks[cd.Index])), Span: sp.hash, Variant: int(cd.form)}
		if cd.status == outcome.StatusCut {
			w.Cut = cd.cutLen
		}
		d.Sections[sp.si].Blocks = append(d.Sections[sp.si].Blocks, w)
	}
	// The messages, in reading order: what the next call keeps too.
	for _, r := range a.messageOrder(blocks) {
		cd := &a.secs[r.si].cands[r.j]
		w := WrittenBlock{ID: cd.ID, Key: hexKey(keyOf(blocks[cd.Index])), Message: true, Variant: int(cd.form)}
		if cd.status == outcome.StatusCut {
			w.Cut = cd.cutLen
		}
		d.Sections[r.si].Blocks = append(d.Sections[r.si].Blocks, w)
	}
	return d
}

// cacheInfo sets out.Prefix (against prev, when there is one) and
// out.Breakpoints.
func (a *Assembler) cacheInfo(tpl *template.Template, blocks []*Block, prev *Decision, req *Request, out *Output, c truncate.Counter, minPrefix int) {
	spans := a.spans(tpl, out.Text)
	if req.Record {
		out.Decision = a.decision(tpl, blocks, spans, req.Now)
	}
	header := len(tpl.Header()) + 1
	// tokensBefore returns the token count of the text before the end of
	// the first k spans: a sum of line counts when the text's count is
	// (see fitBudget), else counted.
	var headerTokens int
	if a.wr.exactText {
		headerTokens = c.Count(tpl.Header() + "\n")
	}
	tokensBefore := func(k int) int {
		if !a.wr.exactText {
			if k == 0 {
				return c.Count(out.Text[:header])
			}
			return c.Count(out.Text[:spans[k-1].end])
		}
		n := headerTokens
		for _, sp := range spans[:k] {
			n += a.secs[sp.si].cands[sp.ci].tokens
		}
		return n
	}

	type prevSpan struct {
		si int
		w  *WrittenBlock
	}
	var before []prevSpan
	if prev != nil {
		for si := range prev.Sections {
			for j := range prev.Sections[si].Blocks {
				if w := &prev.Sections[si].Blocks[j]; !w.Message {
					before = append(before, prevSpan{si, w})
				}
			}
		}
		k := 0
		for k < len(spans) && k < len(before) && a.secs[spans[k].si].cands[spans[k].ci].ID == before[k].w.ID && spans[k].hash == before[k].w.Span {
			k++
		}
		p := &outcome.Prefix{StableBytes: header}
		if k > 0 {
			p.StableBytes = spans[k-1].end
		}
		switch {
		case k == len(spans) && k == len(before):
			p.Reason = outcome.PrefixUnchanged
		case k == len(before):
			p.Reason = outcome.PrefixAppended
		case k == len(spans):
			p.Reason = outcome.PrefixRemoved
		default:
			cur := a.secs[spans[k].si].cands[spans[k].ci].ID
			inBefore, inNow := false, false
			for _, b := range before {
				inBefore = inBefore || b.w.ID == cur
			}
			for _, sp := range spans {
				inNow = inNow || a.secs[sp.si].cands[sp.ci].ID == before[k].w.ID
			}
			switch {
			case cur == before[k].w.ID:
				p.Reason = outcome.PrefixChanged
			case !inBefore:
				p.Reason = outcome.PrefixAdded
			case !inNow:
				p.Reason = outcome.PrefixRemoved
			default:
				p.Reason = outcome.PrefixMoved
			}
		}
		switch {
		case p.Reason == outcome.PrefixRemoved:
			p.FirstChangedSection, p.FirstChangedBlock = tpl.Section(before[k].si).Name(), before[k].w.ID
		case p.Reason != outcome.PrefixUnchanged:
			p.FirstChangedSection, p.FirstChangedBlock = tpl.Section(spans[k].si).Name(), a.secs[spans[k].si].cands[spans[k].ci].ID
		}
		p.StableTokens = tokensBefore(k)
		out.Prefix = p
	}

	// Breakpoints: the ends of the sections whose spans are the previous
	// text's (every section's, on a conversation's first assembly), the
	// last maxBreakpoints of those that cover at least minPrefix tokens.
	var bps []outcome.Breakpoint
	for k := 0; k < len(spans); {
		si, first := spans[k].si, k
		for k < len(spans) && spans[k].si == si {
			k++
		}
		if prev != nil {
			var was []WrittenBlock
			for _, w := range prev.Sections[si].Blocks {
				if !w.Message {
					was = append(was, w)
				}
			}
			same := len(was) == k-first
			for j := first; same && j < k; j++ {
				same = was[j-first].ID == a.secs[si].cands[spans[j].ci].ID && was[j-first].Span == spans[j].hash
			}
			if !same {
				continue
			}
		}
		bps = append(bps, outcome.Breakpoint{Section: tpl.Section(si).Name(), Offset: spans[k-1].end, Tokens: k})
	}
	// Tokens held the span count until now: count only what is kept.
	j := 0
	for _, bp := range bps {
		if n := tokensBefore(bp.Tokens); n >= minPrefix {
			bp.Tokens = n
			bps[j] = bp
			j++
		}
	}
	bps = bps[:j]
	if j == 0 {
		bps = nil // none, as a dump read back has
	}
	if len(bps) > maxBreakpoints {
		bps = bps[len(bps)-maxBreakpoints:]
	}
	out.Breakpoints = bps
	if req.Record {
		out.Repeat = &outcome.Prefix{StableBytes: len(out.Text), StableTokens: tokensBefore(len(spans)), Reason: outcome.PrefixUnchanged}
	}
}
