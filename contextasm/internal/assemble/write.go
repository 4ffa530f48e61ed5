package assemble

import (
	"cmp"
	"slices"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/delimit"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// writer is the writing pass's state: the text, and what is known of it.
type writer struct {
	text    []byte
	order   []int        // scratch of writeText: a section's blocks in writing order
	written []writtenRef // the blocks of the text, then the messages, in order
	joined  bool         // writeText wrote a joiner between two pieces
	cuts    []int        // where the text's separately counted parts meet (joinDelta)
	fixed   int          // bytes at the end of text that are template literal
	// exactText reports that the text's count is the sum of its parts'
	// (see write).
	exactText   bool
	protected   []string // the delimiters of protectedOf
	protectedOf *template.Template
}

// write is the writing pass: it renders the text and counts it, and
// while the count exceeds the budget it goes on with the budget cut k.
//
// The text is the header line, then each section with blocks, its blocks
// joined by its separator and followed by a newline. When every such
// section is in line mode, the counter is line-additive and every block
// starts a line cleanly (see [truncate.LineAdditive]), the text's count is
// exactly the header line's count plus each section's, so the estimate is
// the count and the final text needs no counting: an unchanged or
// one-block-changed assembly then makes at most one tokenizer call.
// Otherwise the final text is counted (around its joins, when the counter
// can: joinDelta), and blocks keep going until that count fits.
func (a *Assembler) write(r *run, k *cutter) error {
	tpl, c, out := r.tpl, r.c, r.out
	a.markRecalled(r)
	exact := a.linesAdd(tpl, a.view(r.blocks), c)
	for {
		a.writeText(tpl, a.view(r.blocks))
		out.Text = string(a.wr.text)
		// A joiner written at a join between blocks is in no block's
		// count: then only counting the text tells its size.
		a.wr.exactText = exact && !a.wr.joined
		if a.wr.exactText && k.estimate <= k.budget {
			out.TotalTokens = k.estimate
			return nil
		}
		if d, ok := a.joinDelta(tpl, c, out.Text); ok {
			out.TotalTokens = k.estimate + d // the parts' counts, joined
		} else {
			out.TotalTokens = c.Count(out.Text) + a.chatFixed(c)
			for si := range tpl.NumSections() {
				out.TotalTokens += a.secs[si].msgs
			}
		}
		if out.TotalTokens <= k.budget {
			return nil
		}
		if !k.next() {
			return a.overBudget(tpl, k.budget, c, r.current)
		}
	}
}

// writeText renders the header line and every section with blocks into
// a.wr.text, recording each block's offset. Each section's blocks are joined by
// its separator and followed by a newline, so the text ends with one.
func (a *Assembler) writeText(tpl *template.Template, blocks []*Block) {
	if a.wr.protectedOf != tpl {
		a.wr.protected, a.wr.protectedOf = tpl.Protected(), tpl
	}
	protected := a.wr.protected
	a.wr.joined = false
	a.wr.written = a.wr.written[:0]
	a.wr.text = append(a.wr.text[:0], tpl.Header()...)
	a.wr.text = append(a.wr.text, '\n')
	a.wr.fixed = len(a.wr.text)
	for si := range tpl.NumSections() {
		sec := tpl.Section(si)
		cands := a.secs[si].cands
		a.wr.order = a.wr.order[:0]
		for i := range cands {
			if cands[i].inText() && !cands[i].msg {
				a.ensureRendered(sec, blocks[cands[i].Index], &cands[i])
				a.wr.order = append(a.wr.order, i)
			}
		}
		if len(a.wr.order) == 0 {
			continue
		}
		switch sec.Order() {
		case template.OrderRank:
			if a.secs[si].sticky.on {
				// Not the score's order, which drifts from call to call:
				// the previous text's, then the blocks new to it.
				slices.SortStableFunc(a.wr.order, func(x, y int) int {
					return cmp.Compare(writeKey(&cands[x]), writeKey(&cands[y]))
				})
			}
		case template.OrderDeclared:
			slices.SortStableFunc(a.wr.order, func(x, y int) int {
				_, sx := a.placeOf(&cands[x], blocks[cands[x].Index])
				_, sy := a.placeOf(&cands[y], blocks[cands[y].Index])
				return cmp.Compare(sx, sy)
			})
		case template.OrderTime:
			// By time, but the blocks a query recalled (candidate.late)
			// after the rest: a conversation's questions then move the
			// end of its history, and the text before stays the prompt
			// cache's prefix. The newest user turn (the question asked:
			// the query's own turn by default), and what is newer, come
			// last: the text ends with the question, and the recalled
			// blocks before it are what a new question changes anyway.
			query, qt, qseq, asked := a.askedIn(cands, blocks)
			part := func(i int) int {
				switch cd := &cands[i]; {
				case !asked:
					return b2i(cd.late)
				case blocks[cd.Index] == query:
					return 2
				case cd.late:
					return 1
				}
				t, seq := a.placeOf(&cands[i], blocks[cands[i].Index])
				if c := t.Compare(qt); c > 0 || c == 0 && seq > qseq {
					return 2
				}
				return 0
			}
			slices.SortStableFunc(a.wr.order, func(x, y int) int {
				if px, py := part(x), part(y); px != py {
					return px - py
				}
				tx, _ := a.placeOf(&cands[x], blocks[cands[x].Index])
				ty, _ := a.placeOf(&cands[y], blocks[cands[y].Index])
				return tx.Compare(ty)
			})
		}
		prefix, suffix := sec.FixedEdges()
		for w, i := range a.wr.order {
			if w > 0 {
				a.appendJoined(sec.Separator(), len(sec.Separator()), protected)
			}
			a.appendJoined(cands[i].text, prefix, protected)
			cands[i].offset = len(a.wr.text) - len(cands[i].text)
			a.wr.written = append(a.wr.written, writtenRef{si, i})
			a.wr.fixed = min(suffix, len(cands[i].text))
		}
		a.wr.text = append(a.wr.text, '\n')
		a.wr.fixed++
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
	if delimit.Crosses(a.wr.text, a.wr.fixed, s, fixed, protected) {
		a.wr.text = append(a.wr.text, delimit.Joiner...)
		a.wr.joined = true
	}
	a.wr.text = append(a.wr.text, s...)
	a.wr.fixed += len(s) // all literal when s is; callers lower it for blocks
}

// linesAdd reports whether the text's count is the sum of its lines' counts:
// a line-additive counter, every section with blocks in line mode, and every
// kept block starting its line cleanly. It renders the kept blocks.
func (a *Assembler) linesAdd(tpl *template.Template, blocks []*Block, c truncate.Counter) bool {
	la, ok := c.(truncate.LineAdditive)
	additive := ok && la.LineAdditive()
	for si := range a.secs {
		sec := tpl.Section(si)
		for i := range a.secs[si].cands {
			cd := &a.secs[si].cands[i]
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

// joinDelta corrects the estimate, the sum of the counts of the text's
// parts (the header line, each block, each separator and section end), to
// the text's count, when the counter can count only around the parts'
// joins. A joiner between blocks is in no part: then it cannot.
func (a *Assembler) joinDelta(tpl *template.Template, c truncate.Counter, text string) (int, bool) {
	jc, ok := c.(truncate.JoinCounter)
	if !ok || a.wr.joined {
		return 0, false
	}
	a.wr.cuts = append(a.wr.cuts[:0], len(tpl.Header())+1)
	for si := range a.secs {
		line := lineMode(tpl.Section(si))
		for i := range a.secs[si].cands {
			if cd := &a.secs[si].cands[i]; cd.inText() && !cd.msg {
				a.wr.cuts = append(a.wr.cuts, cd.offset)
				if !line {
					a.wr.cuts = append(a.wr.cuts, cd.offset+len(cd.text)) // a separator or the section's end follows
				}
			}
		}
	}
	slices.Sort(a.wr.cuts)
	return jc.JoinDelta(text, a.wr.cuts)
}

// askedIn returns the newest user turn written in the text among cands,
// when a block among them is late (what a query recalled), and where it
// is written in time (placeOf); ok is false otherwise.
func (a *Assembler) askedIn(cands []candidate, blocks []*Block) (asked *Block, t time.Time, seq int64, ok bool) {
	late := false
	for i := range cands {
		cd := &cands[i]
		if !cd.inText() || cd.msg {
			continue
		}
		late = late || cd.late
		if b := blocks[cd.Index]; b.Type == declare.History && b.Role == declare.RoleUser && !cd.late && !cd.summary {
			if bt, bs := a.placeOf(cd, b); asked == nil || bt.After(t) || bt.Equal(t) && bs > seq {
				asked, t, seq = b, bt, bs
			}
		}
	}
	return asked, t, seq, late && asked != nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
