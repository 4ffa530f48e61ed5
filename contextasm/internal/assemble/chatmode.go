package assemble

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// ChatCost makes an assembly count for a chat format: every history block
// becomes a message of its own, after a system prompt made of the text
// (the header and every other block), and the budget covers the messages
// as the chat APIs count them.
//
// A message counts PerMessage, plus the tokens of its role's name, its
// content, and, for each tool call, the call's id, name and arguments (and
// for a tool result the id of its call): the values OpenAI's published
// counting for chat messages adds up, with PerMessage 3 for o200k_base and
// cl100k_base. The system prompt is one more such message (role "system"),
// and Reply is added once, for the start of the model's reply (3 in that
// counting). Anthropic publishes no such rule; the same count serves as
// its estimate.
type ChatCost struct {
	Format     chat.Format // zero: the text format, and no messages
	PerMessage int         // tokens added for every message, the system prompt's included
	Reply      int         // tokens added once, for the start of the reply
	// turn is 1 + the block index of the assistant turn whose reasoning
	// is written (reasoningTurn), 0 for none; set per assembly.
	turn int32
}

// on reports whether the assembly is for a chat format.
func (k ChatCost) on() bool { return k.Format != 0 }

// chatMemoKey returns the memo key of a message's count in section sec:
// the section's key (which covers the template's encoding: the count is
// the encoding's) marked as a message's, which no rendering reads, and,
// for a message with reasoning, as one whose reasoning is written in
// format f (0: none is).
func chatMemoKey(sec *template.Section, f chat.Format) [16]byte {
	k := sec.Key()
	for i, c := range [...]byte{'c', 'h', 'a', 't', ' ', 'm', 'e', 's', 's', 'a', 'g', 'e'} {
		k[i] ^= c
	}
	k[15] ^= byte(f) << 4
	return k
}

// messageTokens returns what b counts as a message with content (the
// per-message overhead and its reasoning not included). A call id counts
// as the encoders write it (chat.WireID).
func messageTokens(b *Block, content string, c truncate.Counter) int {
	role := b.Role
	if role == "" {
		role = declare.RoleUser
	}
	n := c.Count(string(role)) + c.Count(content)
	if id := b.ToolCallID(); id != "" {
		n += c.Count(chat.WireID(id))
	}
	for _, tc := range b.ToolCalls() {
		n += c.Count(chat.WireID(tc.ID)) + c.Count(tc.Name) + c.Count(tc.Arguments)
	}
	return n
}

// reasoningTurn finds, in a chat format, the assistant turn whose
// reasoning items are written: the current turn's (current.go), when it
// makes the calls the model is to go on from. Providers require those
// items back (Anthropic's thinking blocks on the turn that made the
// pending tool calls, the Responses API's reasoning item before its
// function_call); elsewhere they are dropped, the first thing a turn
// loses (docs/chat.md#reasoning).
func (a *Assembler) reasoningTurn(r *run) {
	for i := range r.current {
		if b := r.blocks[i]; b.Role == declare.RoleAssistant && len(b.ToolCalls()) > 0 {
			a.chat.turn = i + 1
			return
		}
	}
}

// reasoningOf returns the reasoning items the message of block i (b)
// writes: its items the format takes, on the turn reasoningTurn found;
// none elsewhere.
func (a *Assembler) reasoningOf(i int32, b *Block) []chat.Reasoning {
	rs := b.Reasoning()
	if len(rs) == 0 || i+1 != a.chat.turn {
		return nil
	}
	var out []chat.Reasoning
	for _, r := range rs {
		if r.For(a.chat.Format) {
			out = append(out, r)
		}
	}
	return out
}

// reasoningTokens counts items as written: each item's JSON.
func reasoningTokens(rs []chat.Reasoning, c truncate.Counter) int {
	n := 0
	for _, r := range rs {
		n += c.Count(string(r.JSON))
	}
	return n
}

// messageCount sets cd.tokens for a message of section sec: from the memo
// when it knows the block, else by counting.
func (a *Assembler) messageCount(sec *template.Section, b *Block, cd *candidate, c truncate.Counter) {
	content, _ := a.content(sec, b, cd.form)
	cd.text, cd.rendered = content, true
	rs := a.reasoningOf(cd.Index, b)
	var key MemoKey
	if a.Memo != nil && b.Key != (MemoKey{}).Block && cd.form != formCleared { // a placeholder names another block's tool
		f := chat.Format(0)
		if len(rs) > 0 {
			f = a.chat.Format
		}
		key = MemoKey{Block: b.Key, Section: chatMemoKey(sec, f), Of: memoOf(cd.form, 0)}
		if n, ok := a.Memo.Get(key); ok {
			cd.tokens = a.chat.PerMessage + n
			return
		}
	}
	n := messageTokens(b, content, c) + reasoningTokens(rs, c)
	if key != (MemoKey{}) {
		a.Memo.Add(key, n)
	}
	cd.tokens = a.chat.PerMessage + n
}

// cutMessage shrinks a message's content so that it counts at most room
// tokens, at a token boundary. It reports false when no text that is not
// only white space fits.
func (a *Assembler) cutMessage(sec *template.Section, b *Block, cd *candidate, room int, c truncate.Counter) bool {
	content, _ := a.content(sec, b, cd.form)
	fixed := a.chat.PerMessage + messageTokens(b, "", c) + reasoningTokens(a.reasoningOf(cd.Index, b), c)
	target := room - fixed
	for range 8 {
		if target <= 0 {
			return false
		}
		part := c.Cut(content, target)
		if strings.TrimFunc(part, unicode.IsSpace) == "" {
			return false
		}
		tokens := fixed + c.Count(part)
		if tokens <= room {
			cd.text, cd.tokens, cd.rendered = part, tokens, true
			cd.cutLen = len(part)
			return true
		}
		target -= max(tokens-room, 1)
	}
	return false
}

// chatFixed returns what a conversation counts besides its messages and
// its system prompt's text: the system message's overhead and the reply's.
func (a *Assembler) chatFixed(c truncate.Counter) int {
	if !a.chat.on() {
		return 0
	}
	return a.chat.PerMessage + c.Count("system") + a.chat.Reply
}

// msgRef locates a message's candidate.
type msgRef struct{ si, j int32 }

// messageOrder returns the messages in the text (kept or cut) in the order
// a model reads them: by last_modified, then declaration order, then
// request_id; a tool result comes right after the assistant turn that
// makes its call, in the order of its calls.
func (a *Assembler) messageOrder(blocks []*Block) []msgRef {
	var refs []msgRef
	for si := range a.secs {
		for j := range a.secs[si].cands {
			if cd := &a.secs[si].cands[j]; cd.msg && cd.inText() {
				refs = append(refs, msgRef{int32(si), int32(j)})
			}
		}
	}
	block := func(r msgRef) *Block { return blocks[a.secs[r.si].cands[r.j].Index] }
	// Each message's place looked up once, not at every comparison.
	keys := slices.Grow(a.histKeys[:0], len(refs))
	for k, r := range refs {
		t, seq := a.placeOf(&a.secs[r.si].cands[r.j], block(r))
		keys = append(keys, histKey{t: t, seq: seq, id: a.secs[r.si].cands[r.j].ID, i: k})
	}
	slices.SortFunc(keys, func(x, y histKey) int {
		if c := x.t.Compare(y.t); c != 0 {
			return c
		}
		if c := cmp.Compare(x.seq, y.seq); c != 0 {
			return c
		}
		return strings.Compare(x.id, y.id)
	})
	sorted := make([]msgRef, len(refs))
	for k := range keys {
		sorted[k] = refs[keys[k].i]
	}
	refs = sorted
	clear(keys)
	a.histKeys = keys[:0]
	results := make(map[callKey]msgRef)
	calls := make(map[callKey]bool)
	for _, r := range refs {
		b := block(r)
		if b.ToolCallID() != "" {
			results[callKey{b.SessionID, b.ToolCallID()}] = r
		}
		for _, tc := range b.ToolCalls() {
			calls[callKey{b.SessionID, tc.ID}] = true
		}
	}
	if len(results) == 0 {
		return refs
	}
	order := make([]msgRef, 0, len(refs))
	for _, r := range refs {
		b := block(r)
		if b.ToolCallID() != "" && calls[callKey{b.SessionID, b.ToolCallID()}] {
			continue // written after its call
		}
		order = append(order, r)
		for _, tc := range b.ToolCalls() {
			if res, ok := results[callKey{b.SessionID, tc.ID}]; ok {
				order = append(order, res)
			}
		}
	}
	return order
}

// messages is the messages pass of a chat format: the kept history
// blocks become Output.Messages in reading order, after, for a format whose
// conversation must open with a user turn, the turns before the first one
// are dropped (leadWithUser).
func (a *Assembler) messages(r *run) error {
	if !a.chat.on() {
		return nil
	}
	blocks := a.view(r.blocks)
	if a.chat.Format == chat.FormatAnthropic {
		if err := a.leadWithUser(r.tpl, blocks, r.out); err != nil {
			return err
		}
	}
	r.msgs = a.buildMessages(r.tpl, blocks, r.out, r.c)
	r.out.CacheTTL = r.tpl.CacheTTL()
	return nil
}

// leadWithUser drops, for a format whose conversation must open with a
// user turn, every turn before the first user turn, with its group.
// Messages are not in the text, so this only lowers the total.
func (a *Assembler) leadWithUser(tpl *template.Template, blocks []*Block, out *Output) error {
	var misses []truncate.RequiredMiss
	for _, r := range a.messageOrder(blocks) {
		cd := &a.secs[r.si].cands[r.j]
		if !cd.inText() {
			continue // dropped with a turn before it
		}
		b := blocks[cd.Index]
		if b.Role == "" || b.Role == declare.RoleUser {
			break
		}
		sec := tpl.Section(int(r.si))
		if cd.Required {
			misses = append(misses, truncate.RequiredMiss{RequestID: cd.ID, Section: sec.Name(), Reason: outcome.ReasonFirstMessage})
			continue
		}
		members := []int{int(r.j)}
		if u := a.unitOfCand(cd); u != nil {
			members = u.cands
		}
		for _, j := range members {
			if m := &a.secs[r.si].cands[j]; m.inText() {
				out.TotalTokens -= m.tokens
				a.dropBlock(sec, int(r.si), j, outcome.ReasonFirstMessage, blocks, out)
			}
		}
	}
	if len(misses) > 0 {
		return &truncate.RequiredError{Misses: misses}
	}
	return nil
}

// buildMessages writes out.Messages, the kept history blocks as messages
// in reading order, and records each block's message; it returns their
// order (messageOrder). A message that leaves reasoning items out has a
// notice saying how many tokens of them.
func (a *Assembler) buildMessages(tpl *template.Template, blocks []*Block, out *Output, c truncate.Counter) []msgRef {
	order := a.messageOrder(blocks)
	out.Messages = make([]chat.Message, len(order))
	for i, r := range order {
		cd := &a.secs[r.si].cands[r.j]
		b := blocks[cd.Index]
		role := b.Role
		if role == "" {
			role = declare.RoleUser
		}
		rs := a.reasoningOf(cd.Index, b)
		out.Messages[i] = chat.Message{Role: role, Content: cd.text, ToolCalls: b.ToolCalls(), ToolCallID: b.ToolCallID(), Reasoning: rs, BlockIDs: []string{b.ID}}
		cd.message = int32(i + 1)
		if all := b.Reasoning(); len(all) > len(rs) {
			out.Events = append(out.Events, outcome.Event{Kind: outcome.KindNotice, Section: tpl.Section(int(r.si)).Name(), RequestID: cd.ID,
				Reason: outcome.ReasonReasoningDropped, Tokens: reasoningTokens(all, c) - reasoningTokens(rs, c)})
		}
	}
	return order
}
