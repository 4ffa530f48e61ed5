package assemble

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// DecisionVersion is the version of the Decision format this release
// writes; a Decision of another version is ignored (the next assembly
// decides afresh).
const DecisionVersion = 1

// Decision is what an assembly decided, as the next assembly of the same
// conversation needs it to keep the text's prefix stable: per section, the
// blocks written, in the order they were written. It is plain data that round-trips through JSON
// (package contextasm keeps it in the learned state); it holds ids and
// hashes, never content.
type Decision struct {
	// Version is the format's version, DecisionVersion when written.
	Version int `json:"v"`
	// Now is the instant the assembly was judged at: a block modified
	// since is news to the next assembly.
	Now time.Time `json:"now"`
	// Sections are the decisions of the template's sections, one per
	// section, in template order.
	Sections []SectionDecision `json:"sections"`
	// Query identifies what the assembly's relevance was computed from
	// (Request.QueryKey); empty without a query.
	Query string `json:"query,omitempty"`
}

// SectionDecision is one section's part of a Decision, in template order.
type SectionDecision struct {
	// Name is the section's name; it must match the template's.
	Name string `json:"name"`
	// Blocks are the blocks written, in written order.
	Blocks []WrittenBlock `json:"blocks,omitempty"`
	// Floor, once the section has shed (see Stickiness.Slack), is the
	// score of the best block it let go: blocks scoring no higher stay
	// out, so the room the slack frees is for new blocks, not for the old
	// ones to come back.
	Floor *float64 `json:"floor,omitempty"`
}

// WrittenBlock is one block of a section's text, or one of its messages.
type WrittenBlock struct {
	// ID is the block's request_id.
	ID string `json:"id"`
	// Key identifies the block's content (the first 8 bytes of Block.Key,
	// in hex): a block declared again with other content is the same id
	// with another key.
	Key string `json:"key"`
	// Span hashes the bytes this block adds to the text: from the end of
	// the previous block's span (the separators and joiners before it) to
	// the byte after its own text. Two texts whose spans agree up to a
	// block agree byte for byte up to there.
	Span string `json:"span"`
	// Cut is the number of bytes of content written, for a block that was
	// cut; 0 for a whole block.
	Cut int `json:"cut,omitempty"`
	// Message marks a history block sent as a message of a chat format
	// rather than written in the text; it has no Span.
	Message bool `json:"message,omitempty"`
	// Variant is the variant the block was written as, counting from 1;
	// 0 for its content.
	Variant int `json:"variant,omitempty"`
	// Cleared marks a tool result written as its placeholder (a section's
	// clear_tool_results): it is written so again.
	Cleared bool `json:"cleared,omitempty"`
	// Recalled marks a block the query brought in: its relevance added
	// more than the margin to its score. When it no longer fits, the
	// section lets it go without shedding (it was never the history's
	// stable part).
	Recalled bool `json:"recalled,omitempty"`
}

// usable reports whether d can guide an assembly under tpl: this release's
// format, and the template's sections. (Package contextasm keys decisions
// by the template's fingerprint, so a mismatch means a damaged record.)
func (d *Decision) usable(tpl *template.Template) bool {
	if d == nil || d.Version != DecisionVersion || len(d.Sections) != tpl.NumSections() {
		return false
	}
	for si := range d.Sections {
		if d.Sections[si].Name != tpl.Section(si).Name() {
			return false
		}
	}
	return true
}

// stickySection is an assembly's view of one section's previous decision.
type stickySection struct {
	on       bool    // the section follows its previous decision
	shed     bool    // it had to drop a block it kept last time, for new ones
	budget   bool    // the budget cut did (fitBudget sheds it then)
	hasFloor bool    // floor is set (SectionDecision.Floor)
	floor    float64 // blocks scoring no higher stay out
}

// sameKey reports whether written, a WrittenBlock's Key, is the first 8
// bytes of the block key k in hex (as decision writes it), without making
// the string: an incumbent is checked so every call.
func sameKey(written string, k [16]byte) bool {
	var buf [16]byte
	hex.Encode(buf[:], k[:8])
	return written == string(buf[:])
}

// blockKeyOf hashes what a rendering of b reads, for blocks without a Key.
func blockKeyOf(b *Block) [16]byte {
	h := sha256.New()
	fields := append([]string{b.ID, string(b.Type), b.SourceID, b.Content, strconv.Itoa(b.MaxTokens())}, b.Variants()...)
	for _, f := range fields {
		var n [8]byte
		for j := range n {
			n[j] = byte(len(f) >> (8 * j))
		}
		h.Write(n[:])
		h.Write([]byte(f))
	}
	var k [16]byte
	copy(k[:], h.Sum(nil))
	return k
}

// prepareSticky marks section si's candidates that the previous decision
// wrote (incumbents) and orders the candidates for a sticky fill: required
// first, then by score, an incumbent's raised by the margin, incumbents
// first on ties, then in rank order. A block thus takes an incumbent's
// place only by outscoring it by more than the margin.
//
// A block the previous decision did not write is news, and weighed as an
// incumbent is, when it was modified since. One the query recalls (the
// query changed, and its relevance adds more than the margin to its
// score) passes the floor of a section that shed, as news does, and comes
// after the stable part, with the blocks the previous query recalled
// (tier).
func (a *Assembler) prepareSticky(r *run, si int) {
	blocks, prev, prevNow, margin := r.blocks, &r.prev.Sections[si], r.prev.Now, r.stick.Margin
	_, share := sectionScoring(a.Scoring, r.tpl.Section(si), r.req.hostRelevance())
	queryChanged := r.req.queried() && r.req.QueryKey != r.prev.Query
	tiered := r.req.queried() && share > 0
	a.secs[si].sticky.on = true
	if prev.Floor != nil {
		a.secs[si].sticky.hasFloor, a.secs[si].sticky.floor = true, *prev.Floor
	}
	type was struct {
		pos      int
		key      string
		cut      int
		form     int
		recalled bool
		cleared  bool
	}
	written := make(map[string]was, len(prev.Blocks))
	for i, w := range prev.Blocks {
		written[w.ID] = was{i, w.Key, w.Cut, w.Variant, w.Recalled, w.Cleared}
	}
	clears, _, _ := r.tpl.Section(si).ClearToolResults()
	cands := a.secs[si].cands
	news := false
	for i := range cands {
		cd := &cands[i]
		w, ok := written[cd.ID]
		if !ok {
			cd.news = blocks[cd.Index].LastModified.After(prevNow)
			news = news || cd.news
			cd.recall = !cd.news && relevanceNews(cd, share, margin, queryChanged) && blocks[cd.Index] != r.out.QueryTurn
			cd.soft = tiered && !cd.news && !cd.Required && blocks[cd.Index] != r.out.QueryTurn
			continue
		}
		b := blocks[cd.Index]
		cd.inc, cd.prevPos, cd.prevRecall = true, int32(w.pos), w.recalled
		cd.soft = tiered && w.recalled && queryChanged // recalled for another question
		same := sameKey(w.key, keyOf(b))
		if same && w.form > 0 && w.form <= len(b.Variants()) && !a.deg.plain {
			cd.prevForm = int8(w.form) // written in a variant: written so again
			setForm(cd, cd.prevForm)
		}
		if same && w.cleared && clears && !cd.Required && b.ToolCallID() != "" {
			cd.prevForm = formCleared // cleared: stays so
			setForm(cd, formCleared)
		}
		if w.cut > 0 && same && a.cutHolds(a.deg.tpl.Section(si), b, cd.form, w.cut) {
			cd.prevCut = int32(w.cut)
		}
	}
	if !news {
		a.secs[si].sticky.hasFloor = false // nothing new wants the room: the section refills
	}
	slices.SortStableFunc(cands, func(x, y candidate) int {
		if x.Required != y.Required {
			if x.Required {
				return -1
			}
			return 1
		}
		if tx, ty := x.tier(), y.tier(); tx != ty {
			return tx - ty
		}
		ex, ey := x.Score, y.Score
		if x.holds() {
			ex += margin
		}
		if y.holds() {
			ey += margin
		}
		switch {
		case ex > ey:
			return -1
		case ex < ey:
			return 1
		case x.inc != y.inc:
			if x.inc {
				return -1
			}
			return 1
		}
		return 0
	})
}

func keyOf(b *Block) [16]byte {
	if b.Key == ([16]byte{}) {
		return blockKeyOf(b)
	}
	return b.Key
}

// belowFloor reports whether section si shed and group u stays out: no
// member is required, was written last time or is new, and none scores
// above the floor (as a lone block: filler.belowFloor).
func (a *Assembler) belowFloor(si int, u *unit) bool {
	ss := &a.secs[si].sticky
	if !ss.hasFloor || u.required {
		return false
	}
	for _, j := range u.cands {
		if m := &a.secs[si].cands[j]; m.inc || m.news || m.recall || m.Score > ss.floor {
			return false
		}
	}
	return true
}

// recut renders an incumbent cut where the previous text cut it (or cuts
// its message there), and counts it.
func (a *Assembler) recut(sec *template.Section, b *Block, cd *candidate, c truncate.Counter) {
	content, _ := a.content(sec, b, cd.form)
	part := content[:cd.prevCut]
	cd.cutLen = int(cd.prevCut)
	if cd.msg {
		cd.text, cd.rendered = part, true
		cd.tokens = a.chat.PerMessage + messageTokens(b, part, c)
		return
	}
	counted, text, escaped := a.renderBlock(sec, b, part, lineMode(sec))
	cd.text, cd.escaped, cd.rendered = text, escaped, true
	cd.tokens = c.Count(counted)
}

// shed drops section si's lowest-ranked incumbents in the text (never a
// required one, never a block new to the text, which is what the room is
// for; a group whole) until its sum is at most target: a batch of the
// oldest history at once, so the next calls have room to append. It then
// sets the section's floor.
func (a *Assembler) shed(sec *template.Section, si int, target int, blocks []*Block, out *Output) {
	if on, _, atLeast := sec.ClearToolResults(); on {
		a.clearOldest(sec, si, target, atLeast, blocks) // before any turn goes
	}
	cands := a.secs[si].cands
	for j := len(cands) - 1; j >= 0 && a.secs[si].used+a.secs[si].msgs > target; j-- {
		cd := &cands[j]
		if !cd.inText() || cd.Required || !cd.inc {
			continue
		}
		if u := a.unitOfCand(cd); u != nil {
			for _, m := range u.cands {
				if cands[m].inText() {
					a.dropBlock(sec, si, m, outcome.ReasonSlack, blocks, out)
				}
			}
			continue
		}
		a.dropBlock(sec, si, j, outcome.ReasonSlack, blocks, out)
	}
	// What the shed leaves out for the room it frees went with the batch:
	// an incumbent whose room the entrants took, and an older block that
	// would fit the room now (the slack keeps it for new blocks). One too
	// big for the room stays out for the cap.
	free := sec.MaxTokens() - a.secs[si].used - a.secs[si].msgs
	for j := range cands {
		cd := &cands[j]
		if cd.Required || cd.status != outcome.StatusDropped || cd.reason != outcome.ReasonSectionCap || cd.news || cd.recall {
			continue
		}
		if cd.inc || cd.tokens <= free {
			cd.reason = outcome.ReasonSlack
			if cd.event > 0 {
				out.Events[cd.event-1].Reason = outcome.ReasonSlack
			}
		}
	}
	a.setFloor(si)
}

// setFloor sets section si's floor after it shed: the best score among
// the blocks it leaves out (and the floor it had, if higher).
func (a *Assembler) setFloor(si int) {
	ss := &a.secs[si].sticky
	for i := range a.secs[si].cands {
		cd := &a.secs[si].cands[i]
		if cd.Required || cd.inText() {
			continue
		}
		if cd.repl != 0 && (cd.summary || cd.reason == outcome.ReasonSummarized) {
			continue // a summary, or a turn one stands for: not let go by the shed
		}
		if !ss.hasFloor || cd.Score > ss.floor {
			ss.hasFloor, ss.floor = true, cd.Score
		}
	}
	// An incremental assembly never pulled some of them (turn.go).
	if t := a.secs[si].tail; t.has && (!ss.hasFloor || t.score > ss.floor) {
		ss.hasFloor, ss.floor = true, t.score
	}
}

// hasEntrants reports whether section si has a block in the text that the
// previous decision did not write.
func (a *Assembler) hasEntrants(si int) bool {
	for i := range a.secs[si].cands {
		if cd := &a.secs[si].cands[i]; cd.inText() && !cd.inc {
			return true
		}
	}
	return false
}

// stickyReasons says, in each sticky section, which blocks stickiness
// kept or dropped: a dropped block that outscores a kept incumbent by no
// more than the margin, and would fit in its place, was held back by the
// previous decision (its reason becomes sticky), and that incumbent was
// kept by it (a sticky notice). A block that would not fit in its place
// stays dropped for the cap or the budget, as a fresh decision would
// leave it; blocks dropped by the slack keep that reason.
func (a *Assembler) stickyReasons(tpl *template.Template, out *Output, margin float64) {
	for si := range a.secs {
		if !a.secs[si].sticky.on {
			continue
		}
		cands := a.secs[si].cands
		sec := tpl.Section(si)
		room := sec.MaxTokens() - a.secs[si].used
		kept := a.keptInc[:0]
		for i := range cands {
			if cd := &cands[i]; cd.inText() && cd.inc && !cd.Required && !cd.soft {
				kept = append(kept, i)
			}
		}
		slices.SortFunc(kept, func(x, y int) int { return cmp.Compare(cands[x].Score, cands[y].Score) })
		for i := range cands {
			cd := &cands[i]
			// A turn the format let go (first_message) was not kept out by
			// stickiness: the fill had kept it.
			if cd.Required || cd.inc || cd.news || cd.status != outcome.StatusDropped || cd.reason == outcome.ReasonSlack || cd.reason == outcome.ReasonFirstMessage ||
				cd.tokens == 0 || cd.repl != 0 {
				continue
			}
			// The kept incumbents scoring in [score − margin, score).
			hi, _ := slices.BinarySearchFunc(kept, cd.Score, func(k int, s float64) int { return cmp.Compare(cands[k].Score, s) })
			for j := hi - 1; j >= 0 && cands[kept[j]].Score >= cd.Score-margin; j-- {
				inc := &cands[kept[j]]
				if cd.tokens > inc.tokens+room {
					continue
				}
				cd.reason = outcome.ReasonSticky
				if cd.event > 0 {
					out.Events[cd.event-1].Reason = outcome.ReasonSticky
				}
				if !inc.notice {
					inc.notice = true
					out.Events = append(out.Events, outcome.Event{Kind: outcome.KindNotice, Section: sec.Name(), RequestID: inc.ID, Reason: outcome.ReasonSticky})
				}
				break
			}
		}
		a.keptInc = kept
	}
}

// tier is cd's place in a sticky fill before its score. In a section
// where relevance counts, with a query: 0 for the text's stable part (its
// incumbents, news, the query's own turn, required blocks), 1 for every
// other block, the ones the query recalls (relevanceNews) and the ones
// another query recalled (WrittenBlock.Recalled; asked the same again,
// they are incumbents like any) among them. What a query recalls thus
// takes the room the stable part leaves, and another query's recalls,
// never the stable part's: a conversation's questions move the end of
// its history, not its prefix. Elsewhere every block is tier 0.
func (cd *candidate) tier() int {
	if cd.soft {
		return 1
	}
	return 0
}

// holds reports whether cd's place in a sticky fill is raised by the
// margin: an incumbent or news. A block another question recalled
// (soft, an incumbent) is not: its place was that question's, and the
// changed query's recalls take it on their scores alone. Holding it
// would keep what a question no longer needs in the room its own recalls
// need, while the stable part, which the prompt cache reads, is not
// touched either way (it is tier 0).
func (cd *candidate) holds() bool { return (cd.inc || cd.news) && !cd.soft }

// relevanceNews reports whether cd's relevance recalls it into a section
// that follows its previous decision: the query changed, and relevance
// adds more than the margin to cd's score.
func relevanceNews(cd *candidate, share, margin float64, queryChanged bool) bool {
	return queryChanged && share*cd.Relevance > margin
}

// cutHolds reports whether a previous decision's cut, cut bytes of b's
// form f as section sec writes it, still falls inside it and on a
// character's start: the block can be cut there again.
func (a *Assembler) cutHolds(sec *template.Section, b *Block, f int8, cut int) bool {
	content, _ := a.content(sec, b, f)
	return cut < len(content) && utf8.RuneStart(content[cut])
}
