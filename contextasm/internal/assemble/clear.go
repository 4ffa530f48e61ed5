package assemble

import (
	"slices"
	"strconv"

	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// Clearing older tool results (docs/chat.md): in a section with
// clear_tool_results, a tool result may be written as a placeholder that
// names its tool, its call and the tokens it held (form formCleared), so
// that its turn stays in the conversation at a fraction of the tokens.
// Clearing comes before dropping whole turns, in batches, and a result
// once cleared stays so in the calls that follow (the Decision records
// it), so that the prompt's prefix changes rarely:
//
//   - a fresh fill (newest first) writes a unit whole while it fits; the
//     first that does not is tried with its results cleared, and every
//     older unit after it has its results cleared too;
//   - a fill that follows the previous decision brings results back as
//     they were written, cleared or not; when the section must shed, it
//     first clears the oldest results still whole, at least at_least
//     tokens' worth, and drops whole turns only if that was not enough.
//
// The newest keep results, and the current turn (required), are never
// cleared.

// formCleared is the form of a tool result written as its placeholder.
const formCleared int8 = -1

// clearState is one assembly's clearing state.
type clearState struct {
	// names holds the tool each tool result's call names, for the
	// placeholders written.
	names map[callKey]string
	// kept holds, for the section last asked (si + 1), its newest keep
	// tool results.
	keptFor int
	kept    []*Block
}

func (c *clearState) reset() {
	clear(c.names)
	clear(c.kept)
	c.keptFor, c.kept = 0, c.kept[:0]
}

// placeholder returns what a cleared tool result says instead of its
// content, which counts tokens as section sec writes it.
func (a *Assembler) placeholder(b *Block, tokens int) string {
	name := a.clr.names[callKey{b.SessionID, b.ToolCallID()}]
	if name == "" {
		name = "a tool"
	}
	return "[tool result cleared: " + name + ", call " + b.ToolCallID() + ", " + strconv.Itoa(tokens) + " tokens]"
}

// clearable reports whether cd, a candidate of section si, may be written
// cleared: a tool result whole (not a variant, not cleared yet), not
// required, and not among the section's newest keep results.
func (a *Assembler) clearable(sec *template.Section, si int, cd *candidate, blocks []*Block) bool {
	b := blocks[cd.Index]
	if cd.Required || cd.form != 0 || b.ToolCallID() == "" {
		return false
	}
	return !slices.Contains(a.newestResults(sec, si, blocks), b)
}

// newestResults returns section si's newest keep tool results: among its
// candidates, or, in an incremental assembly, among its Index's links
// (every tool result is one) less those left out with their unit.
func (a *Assembler) newestResults(sec *template.Section, si int, blocks []*Block) []*Block {
	if a.clr.keptFor == si+1 {
		return a.clr.kept
	}
	_, keep, _ := sec.ClearToolResults()
	kept := a.clr.kept[:0]
	if a.inc.on {
		for b := range a.inc.x.secs[si].links {
			if b.ToolCallID() != "" && !a.goneResult(b) {
				kept = append(kept, b)
			}
		}
	} else {
		for i := range a.secs[si].cands {
			if b := blocks[a.secs[si].cands[i].Index]; b.ToolCallID() != "" {
				kept = append(kept, b)
			}
		}
	}
	slices.SortFunc(kept, compareNewest)
	a.clr.kept, a.clr.keptFor = kept[:min(keep, len(kept))], si+1
	return a.clr.kept
}

// clearUnit writes the results of unit u, in section si, that may be
// cleared as their placeholders and counts them; it reports the tokens
// that freed.
func (a *Assembler) clearUnit(sec *template.Section, si int, u *unit, blocks []*Block) int {
	freed := 0
	for _, j := range u.cands {
		if cd := &a.secs[si].cands[j]; a.clearable(sec, si, cd, blocks) {
			freed += a.clearResult(sec, cd, blocks)
		}
	}
	return freed
}

// clearResult writes cd as its placeholder and counts it; it reports the
// tokens that freed. A result that counts no more than its placeholder
// stays whole and frees nothing: cleared, it would take more room, not
// less (a section that shed by clearing such results went over its cap).
func (a *Assembler) clearResult(sec *template.Section, cd *candidate, blocks []*Block) int {
	if cd.tokens == 0 {
		a.blockTokens(sec, blocks[cd.Index], cd, a.deg.ctr)
	}
	whole := saveForm(cd)
	setForm(cd, formCleared)
	a.blockTokens(sec, blocks[cd.Index], cd, a.deg.ctr)
	if cd.tokens >= whole.tokens {
		whole.restore(cd)
		return 0
	}
	return whole.tokens - cd.tokens
}

// nameCalls records the tools the calls among a section's ranked blocks
// name, for the placeholders of their results (groupSection, in a section
// that clears).
func (a *Assembler) nameCalls(ranked []Ranked, blocks []*Block) {
	for _, r := range ranked {
		a.nameCallsOf(blocks[r.Index])
	}
}

// nameBlocks is nameCalls of blocks.
func (a *Assembler) nameBlocks(blocks []*Block) {
	for _, b := range blocks {
		a.nameCallsOf(b)
	}
}

// nameCallsOf notes the names of b's tool calls.
func (a *Assembler) nameCallsOf(b *Block) {
	if a.clr.names == nil {
		a.clr.names = make(map[callKey]string)
	}
	for _, tc := range b.ToolCalls() {
		a.clr.names[callKey{b.SessionID, tc.ID}] = tc.Name
	}
}

// clearOldest clears, in section si that must shed down to target, the
// oldest results still whole in the text: until the section is within
// target and the batch freed at least atLeast tokens, or none is left.
func (a *Assembler) clearOldest(sec *template.Section, si, target, atLeast int, blocks []*Block) {
	s := &a.secs[si]
	freed := 0
	for j := len(s.cands) - 1; j >= 0; j-- {
		if s.used+s.msgs <= target && freed >= atLeast {
			break
		}
		cd := &s.cands[j]
		if !cd.inText() || !a.clearable(sec, si, cd, blocks) {
			continue
		}
		n := a.clearResult(sec, cd, blocks)
		freed += n
		if cd.msg {
			s.msgs -= n
		} else {
			s.used -= n
		}
	}
}

// clearedNotice appends cd's cleared notice, when it is in the text as
// its placeholder.
func (a *Assembler) clearedNotice(sec *template.Section, cd *candidate, b *Block, out *Output) {
	if cd.inText() && cd.form == formCleared {
		out.Events = append(out.Events, outcome.Event{Kind: outcome.KindNotice, Section: sec.Name(), RequestID: cd.ID, Reason: outcome.ReasonCleared, Tokens: a.clearedTokens(sec, b)})
	}
}

// clearedTokens returns what b's content counts as section sec writes it
// whole: the tokens its placeholder says were cleared.
func (a *Assembler) clearedTokens(sec *template.Section, b *Block) int {
	var key MemoKey
	if a.Memo != nil && b.Key != (MemoKey{}).Block {
		key = MemoKey{Block: b.Key, Section: sec.Key(), Of: memoOf(0, 0xC4)}
		if n, ok := a.Memo.Get(key); ok {
			return n
		}
	}
	s, _ := a.content(sec, b, 0)
	n := a.deg.ctr.Count(s)
	if key != (MemoKey{}) {
		a.Memo.Add(key, n)
	}
	return n
}

// writtenVariant is the variant cd is written as, counting from 1, for
// rows and decisions: 0 for its content, and for a cleared result (which
// its Cleared mark and notice say).
func writtenVariant(cd *candidate) int { return int(max(cd.form, 0)) }
