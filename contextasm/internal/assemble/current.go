package assemble

import "github.com/contextasm/contextasm/declare"

// The current turn. In a chat format the request is the model's next
// turn, so what it answers must be in it: the newest user message of the
// request's session, and, when the newest assistant message is newer and
// makes tool calls, that message with the results that answer them (the
// model is to go on from them). currentTurn makes those blocks required,
// before the planning pass makes their units required whole: they are
// never dropped or cut, and when they cannot fit the assembly fails with
// truncate.ErrBudgetTooSmall, naming them as the current turn.
func (a *Assembler) currentTurn(r *run) {
	if !a.chat.on() || r.req.SessionID == "" {
		return
	}
	var user, asst *Ranked
	newest := func(at **Ranked, e *Ranked) {
		if *at == nil || compareNewest(r.blocks[e.Index], r.blocks[(*at).Index]) < 0 {
			*at = e
		}
	}
	for si := range a.secs {
		for i := range a.secs[si].ranked {
			e := &a.secs[si].ranked[i]
			b := r.blocks[e.Index]
			if b.Type != declare.History || b.SessionID != r.req.SessionID {
				continue
			}
			switch b.Role {
			case declare.RoleAssistant:
				newest(&asst, e)
			case declare.RoleUser, "":
				newest(&user, e)
			}
		}
	}
	mark := func(e *Ranked) {
		e.Required = true
		if r.current == nil {
			r.current = make(map[int32]bool)
		}
		r.current[e.Index] = true
	}
	if user != nil {
		mark(user)
	}
	if asst == nil || user != nil && compareNewest(r.blocks[asst.Index], r.blocks[user.Index]) > 0 {
		return // no assistant turn after the user's
	}
	calls := r.blocks[asst.Index].ToolCalls()
	if len(calls) == 0 {
		return
	}
	mark(asst)
	for si := range a.secs {
		for i := range a.secs[si].ranked {
			e := &a.secs[si].ranked[i]
			b := r.blocks[e.Index]
			if id := b.ToolCallID(); id != "" && b.SessionID == r.req.SessionID && answers(calls, id) {
				mark(e)
			}
		}
	}
}

// answers reports whether id is one of calls'.
func answers(calls []declare.ToolCall, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}

// userTurn reports whether b is a user turn of req's session, which the
// current turn is the newest of.
func userTurn(b *Block, req *Request) bool {
	return b.Type == declare.History && req.SessionID != "" && b.SessionID == req.SessionID && (b.Role == declare.RoleUser || b.Role == "")
}

// currentTurnIndexed is currentTurn for an incremental assembly. Its
// Index serves no tool call (AssembleIndexed), so the current turn is the
// session's newest user turn alone: its entry is marked required for
// this assembly (markCur), and comes first in its section's walk.
func (a *Assembler) currentTurnIndexed(r *run) {
	if !a.chat.on() || r.req.SessionID == "" {
		return
	}
	e, si := r.x.newestUser(r.req, userTurn)
	if e == nil {
		return
	}
	e.mark |= markCur
	r.current = make(map[int32]bool, 1)
	a.inc.cur, a.inc.curSec, a.inc.current = e, si, r.current
}
