package assemble

import (
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm/internal/toolsel"
)

// The tools step (docs/tools.md): before the fill, a chat request's tool
// definitions are chosen (package toolsel) against the query the
// relevance pass settled on, and their tokens come off the budget the
// blocks share, so that the whole request (tools, system prompt and
// messages) is within the template's budget. A full and an incremental
// assembly run it at the same point of decide, with the same query.

// Tools is the tools of a request (Request.Tools).
type Tools struct {
	// Set is the engine's tools, in name order.
	Set *toolsel.Set
}

// ToolsOutput is an assembly's tools part.
type ToolsOutput struct {
	// Set is the request's Tools.Set, which Selection indexes.
	Set *toolsel.Set
	// Selection is what toolsel decided: kept, left out, hidden, tokens.
	Selection *toolsel.Result
	// Defs are the kept tools as the bodies write them, in name order.
	Defs []chat.Tool
}

// tools chooses the request's tools and takes their tokens off the
// blocks' budget (run.toolTokens). The text format carries no tools.
func (a *Assembler) tools(r *run) error {
	if r.req.Tools == nil || r.req.Tools.Set.Len() == 0 || !r.req.Chat.on() {
		return nil
	}
	set := r.req.Tools.Set
	res, err := toolsel.Select(toolsel.Input{Set: set, Roles: r.req.Roles, Part: r.tpl.Tools(), Budget: r.tpl.Budget(),
		Format: r.req.Chat.Format, Query: r.req.Query, Counter: r.c, Encoding: r.tpl.Encoding()})
	if err != nil {
		return err
	}
	defs := make([]chat.Tool, len(res.Kept))
	for i, k := range res.Kept {
		t := set.Tool(k.Index)
		defs[i] = chat.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	}
	r.out.Tools = &ToolsOutput{Set: set, Selection: res, Defs: defs}
	r.toolTokens = res.Tokens
	return nil
}

// blockBudget is the budget the blocks share: the template's, less the
// tools'.
func (r *run) blockBudget() int { return r.tpl.Budget() - r.toolTokens }
