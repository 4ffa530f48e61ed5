package outcome

// The reasons of degradation (docs/degrade.md): a block written in a
// shorter form, or left out for another that stands for it.
const (
	// ReasonDegraded: a notice on a block written as one of its variants,
	// the richest that fitted (Event.Variant says which).
	ReasonDegraded Reason = "degraded"
	// ReasonClipped: a notice on a block whose content was longer than its
	// max_tokens: the rest is cut off, with a marker saying how much
	// (Event.Tokens).
	ReasonClipped Reason = "clipped"
	// ReasonCleared: a notice on an older tool result whose content was
	// replaced by a placeholder naming the tool, the call and the tokens
	// cleared (Event.Tokens), so that its turn stays in the conversation
	// (a section's clear_tool_results).
	ReasonCleared Reason = "cleared"
	// ReasonSuperseded: excluded because an eligible block supersedes it
	// (Event.By names the newest), or because a newer summary replaces
	// some of the same turns.
	ReasonSuperseded Reason = "superseded"
	// ReasonSummarized: a turn left out because the summary that replaces
	// it stands in for it (Event.By names the summary).
	ReasonSummarized Reason = "summarized"
	// ReasonTurnsKept: a summary left out because every turn it replaces
	// is in the context.
	ReasonTurnsKept Reason = "turns_kept"
	// ReasonNoGain: a summary left out because the assembly that used its
	// summaries and variants represented fewer blocks than the one
	// without them, which was taken instead.
	ReasonNoGain Reason = "no_gain"
)

// SummarizeCandidate is a run of consecutive history blocks of one section
// that an assembly dropped for room and that nothing in the context
// represents: what a host may summarise after the call, and declare as one
// block whose replaces lists IDs, before the next.
type SummarizeCandidate struct {
	// Section is the section the blocks were dropped from.
	Section string `json:"section"`
	// IDs are the blocks' request_ids, oldest first; a group's members
	// are never split between runs.
	IDs []string `json:"ids"`
	// Tokens is the sum of the blocks' counts as the section would write
	// them.
	Tokens int `json:"tokens"`
	// From and To are the last_modified of the oldest and the newest
	// block, RFC 3339 in UTC; empty when undated.
	From string `json:"from,omitempty"`
	// To is the last_modified of the newest block (see From).
	To string `json:"to,omitempty"`
}
