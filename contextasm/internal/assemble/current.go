package assemble

import "github.com/contextasm/contextasm/declare"

// The current turn. In a chat format the request is the model's next
// turn, so what it answers must be in it: the newest user message of the
// request's session (queryTurn: a summary, even one naming no role, is
// never the question), and, when the newest assistant message is newer and
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
			switch {
			case b.Role == declare.RoleAssistant:
				newest(&asst, e)
			case queryTurn(b, r.req):
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

// assistantTurn reports whether b is an assistant turn of req's session.
func assistantTurn(b *Block, req *Request) bool {
	return b.Type == declare.History && req.SessionID != "" && b.SessionID == req.SessionID && b.Role == declare.RoleAssistant
}

// currentTurnIndexed is currentTurn for an incremental assembly: the
// session's newest user turn, and, when the newest assistant turn is
// newer and makes tool calls, that turn and the results that answer
// them (among the sections' links, where every tool result is). Their
// entries are marked required for this assembly (markReq, markCur), and
// come first in their sections' walks.
func (a *Assembler) currentTurnIndexed(r *run) {
	if !a.chat.on() || r.req.SessionID == "" {
		return
	}
	x := r.x
	user, us := x.newestUser(r.req, queryTurn)
	if user != nil {
		a.require(user, us, true)
	}
	asst, as := x.newestAfter(r.req, assistantTurn, user)
	if asst == nil {
		return // no assistant turn after the user's
	}
	calls := asst.b.ToolCalls()
	if len(calls) == 0 {
		return
	}
	a.require(asst, as, true)
	a.inc.curAsst = asst
	for si := range x.secs {
		s := &x.secs[si]
		if len(s.links) == 0 {
			continue
		}
		// The results among the links that share a call's key with it
		// (ixUnits.keys): the calls', not every link's.
		keys := s.unitPlan().keys
		for _, c := range calls {
			for _, b := range keys[unitKey{call: true, callKey: callKey{r.req.SessionID, c.ID}}] {
				if b.ToolCallID() == c.ID && b.SessionID == r.req.SessionID {
					if e := x.entryOfBlock(si, b); e != nil {
						a.require(e, si, true)
					}
				}
			}
		}
	}
}

// require marks entry e, of section si, required for this assembly
// (markReq), and of the current turn when cur; the walk of its section
// takes it first, with the required.
func (a *Assembler) require(e *ixEntry, si int, cur bool) {
	if cur {
		e.mark |= markCur
	}
	if e.mark&markReq != 0 {
		return
	}
	e.mark |= markReq
	a.inc.reqd = append(a.inc.reqd, reqdEntry{e: e, si: int32(si)})
	a.inc.priorAll = append(a.inc.priorAll, e) // unmarked by endWalk
}
