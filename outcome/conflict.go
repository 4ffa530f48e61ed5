package outcome

import (
	"errors"
	"strconv"
	"strings"
)

// ReasonConflict: excluded because an eligible block with the same
// conflict_key won (Event.By names it, Event.Conflict says what was
// compared; docs/assembly.md#conflicts).
const ReasonConflict Reason = "conflict"

// ConflictRule says which comparison decided a conflict between a winner
// and one loser: the first on which they differ.
type ConflictRule string

// The rules, in the order they are applied.
const (
	RuleRequired       ConflictRule = "required"        // the winner is required, the loser not
	RuleTrust          ConflictRule = "trust"           // the winner's trust (learned where there is one, else declared) is higher
	RuleLastModified   ConflictRule = "last_modified"   // equal trust; the winner changed later
	RuleSemanticWeight ConflictRule = "semantic_weight" // equal trust and time; the winner weighs more
	RuleRequestID      ConflictRule = "request_id"      // all equal; the smaller request_id wins
)

// EventConflict is what a conflict event compared: the key, and the two
// blocks' trusts.
type EventConflict struct {
	// Key is the conflict_key the blocks share.
	Key string `json:"key"`
	// Trust is the losing block's trust, ByTrust the winner's (Event.By),
	// as they ranked: learned from feedback where there is a learned
	// trust, else declared.
	Trust float64 `json:"trust"`
	// ByTrust is the winner's trust.
	ByTrust float64 `json:"by_trust"`
	// Rule is the comparison that decided.
	Rule ConflictRule `json:"rule"`
}

// Conflict is one conflict_key among the blocks eligible for an
// assembly: the block that entered and those it excluded, with their
// trusts, and never any content.
type Conflict struct {
	// Key is the conflict_key.
	Key string `json:"key"`
	// Winner is the request_id of the block that took part in the
	// assembly (it may still be dropped for room, like any other).
	Winner string `json:"winner"`
	// WinnerTrust (winner_trust) is its trust.
	WinnerTrust float64 `json:"winner_trust"`
	// Losers are the blocks excluded, by request_id.
	Losers []ConflictLoser `json:"losers"`
}

// ConflictLoser is one block a Conflict excluded.
type ConflictLoser struct {
	// RequestID (request_id) is the block's id.
	RequestID string `json:"request_id"`
	// Trust is the trust it was compared with.
	Trust float64 `json:"trust"`
	// Rule is the comparison that decided against it.
	Rule ConflictRule `json:"rule"`
}

// ErrConflict means required blocks share a conflict_key: the host said
// each must be in the context, and they exclude each other. The error is
// a *ConflictError naming them.
var ErrConflict = errors.New("required blocks in conflict")

// ConflictError names the required blocks that share a conflict_key, per
// key. It wraps [ErrConflict].
type ConflictError struct {
	// Keys are the conflicting keys, in order, each with its required
	// blocks' request_ids (two or more, in order).
	Keys []RequiredConflict
}

// RequiredConflict is one key shared by required blocks.
type RequiredConflict struct {
	// Key is the conflict_key.
	Key string
	// IDs are the required blocks' request_ids, two or more.
	IDs []string
}

// Error names every key and its blocks, one key a line.
func (e *ConflictError) Error() string {
	var b strings.Builder
	b.WriteString(ErrConflict.Error())
	for _, k := range e.Keys {
		b.WriteString("\nconflict_key ")
		b.WriteString(strconv.Quote(k.Key))
		b.WriteString(": required blocks ")
		for i, id := range k.IDs {
			switch {
			case i == 0:
			case i == len(k.IDs)-1:
				b.WriteString(" and ")
			default:
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(id))
		}
		b.WriteString(" exclude each other")
	}
	return b.String()
}

// Unwrap returns [ErrConflict].
func (e *ConflictError) Unwrap() error { return ErrConflict }

// TemplateChoice says which template of a fallback chain (the request's
// template, then its fallbacks, in preference order) an assembly used,
// and why each earlier one was not.
type TemplateChoice struct {
	// Used is the position of the template used in the chain: 0 for the
	// request's own template.
	Used int `json:"used"`
	// Fingerprint is the used template's fingerprint.
	Fingerprint string `json:"fingerprint"`
	// Skipped are the templates tried before it, in chain order.
	Skipped []TemplateSkip `json:"skipped,omitempty"`
}

// TemplateSkip is one template of a fallback chain that was not used.
type TemplateSkip struct {
	// Fingerprint is its fingerprint; ProtocolVersion (protocol_version)
	// the protocol version it speaks.
	Fingerprint string `json:"fingerprint"`
	// ProtocolVersion is the protocol version of its header.
	ProtocolVersion string `json:"protocol_version"`
	// Reason says why it was not used.
	Reason SkipReason `json:"reason"`
	// Detail is the error's text, for budget_too_small (which required
	// blocks did not fit).
	Detail string `json:"detail,omitempty"`
}

// SkipReason says why a template of a fallback chain was not used.
type SkipReason string

// The skip reasons.
const (
	// SkipNotAccepted: neither its protocol version nor its fingerprint
	// is among those the request accepts.
	SkipNotAccepted SkipReason = "not_accepted"
	// SkipBudgetTooSmall: its required blocks do not fit its caps or its
	// budget.
	SkipBudgetTooSmall SkipReason = "budget_too_small"
)
