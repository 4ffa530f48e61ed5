package outcome

import (
	"context"
	"fmt"
	"log/slog"
)

// Status is what became of an eligible block.
type Status uint8

// The statuses.
const (
	StatusKept Status = iota
	StatusCut
	StatusDropped
)

// String returns "kept", "cut" or "dropped".
func (s Status) String() string {
	switch s {
	case StatusKept:
		return "kept"
	case StatusCut:
		return "cut"
	}
	return "dropped"
}

// MarshalText writes the status as its name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a status name.
func (s *Status) UnmarshalText(b []byte) error {
	switch string(b) {
	case "kept":
		*s = StatusKept
	case "cut":
		*s = StatusCut
	case "dropped":
		*s = StatusDropped
	default:
		return fmt.Errorf("outcome: unknown status %q", b)
	}
	return nil
}

// Reason says why a block was left out, cut or flagged.
type Reason string

// The reasons.
const (
	ReasonSectionCap        Reason = "section_cap"
	ReasonBudget            Reason = "budget"
	ReasonCut               Reason = "cut"
	ReasonExpired           Reason = "expired"
	ReasonStale             Reason = "stale"
	ReasonOutOfScope        Reason = "out_of_scope"
	ReasonAccessDenied      Reason = "access_denied"
	ReasonAudience          Reason = "audience"
	ReasonNoSection         Reason = "no_section"
	ReasonEscaped           Reason = "escaped"
	ReasonBinary            Reason = "binary"
	ReasonSourceUnavailable Reason = "source_unavailable"
	ReasonOutsideRoot       Reason = "outside_root"
	// ReasonSourceCut: a source's listing or scan stopped at a bound
	// (MaxResources, MaxPages, a cursor that repeats, MaxFiles): what lies
	// past it is not collected. Its request_id is the source's key.
	ReasonSourceCut Reason = "source_cut"
	// ReasonStateUnavailable: the learned-state store could not be reached
	// lately; the assembly ranked with the last snapshot of it. Its event
	// is not about a block: its request_id is "learned-state".
	ReasonStateUnavailable Reason = "state_unavailable"
	// ReasonGroup: dropped with its group (blocks of one group, or an
	// assistant turn and its tool results), which did not fit whole or
	// lost a member; the event names the group.
	ReasonGroup Reason = "group"
	// ReasonOrphan: a tool result whose call, or an assistant turn with a
	// call whose result, is not among the eligible blocks.
	ReasonOrphan Reason = "orphan"
	// ReasonFirstMessage: the format needs the conversation to start with
	// a user turn (Anthropic), and this turn came before the first one.
	ReasonFirstMessage Reason = "first_message"
	// ReasonSticky: the previous assembly of the same conversation
	// decided this way and the difference in score is within the margin.
	// A dropped block with it outscores a kept one (kind dropped); a kept
	// block with it is outscored by a dropped one (kind notice).
	ReasonSticky Reason = "sticky"
	// ReasonSlack: dropped ahead of need, in a batch with older blocks,
	// so that the next calls of the conversation only append; or held
	// out of the room such a batch freed, which is for new blocks, until
	// a call brings the section nothing new.
	ReasonSlack Reason = "slack"
)

// Kind groups reasons by what happened to the block.
type Kind string

// The kinds.
const (
	KindExcluded Kind = "excluded" // never eligible: expired, out_of_scope, access_denied, audience, no_section, orphan (and group, for its group's other members), superseded, conflict, no_gain
	KindDropped  Kind = "dropped"  // eligible but did not fit: section_cap, budget, group, first_message; or held back: sticky, slack; or stood for: summarized, turns_kept
	KindCut      Kind = "cut"      // kept in part: cut
	KindNotice   Kind = "notice"   // kept or eligible, with something to know: stale, escaped, sticky, degraded, clipped
	KindSource   Kind = "source"   // a source's problem: binary, source_unavailable, outside_root, source_cut, state_unavailable
)

// Event reports one decision about one block.
type Event struct {
	// Kind is what happened to the block: excluded, dropped, cut, notice or
	// source.
	Kind Kind `json:"kind"`
	// Section is the section concerned; empty for source events and for a
	// block excluded before it was routed to a section.
	Section string `json:"section,omitempty"`
	// RequestID (request_id) is the block's id; for a whole source that
	// failed, "mcp:<server>", and for the state store, "learned-state".
	RequestID string `json:"request_id"`
	// Reason says why (see the Reason constants).
	Reason Reason `json:"reason"`
	// Tokens is the block's count for dropped and cut events (0 when it was
	// not counted), the tokens left out for clipped, and 0 otherwise.
	Tokens int `json:"tokens"`
	// Group names the group the block was kept or dropped with: its
	// declared group, or the request_id of the assistant turn whose tool
	// calls it belongs to.
	Group string `json:"group,omitempty"`
	// By names the block that stands for this one: for superseded, the
	// newest block that supersedes it; for summarized, the summary.
	By string `json:"by,omitempty"`
	// Variant is, for degraded, which variant was written, counting from
	// 1 (variants[0] of the declaration, the longest).
	Variant int `json:"variant,omitempty"`
	// Conflict is, for conflict, the key and the trusts compared (By
	// names the winner).
	Conflict *EventConflict `json:"conflict,omitempty"`
}

// Hidden reports whether blocks excluded for reason r belong to someone
// else's view: another session's or user's block, one that needs a role the
// request lacks, or one meant for the user only. Their ids are not listed
// in an assembly's events (they would tell one tenant another's block
// ids); they are counted per reason in ExcludedCounts instead, unless the
// host asked for the full list in a trusted debugging mode.
func Hidden(r Reason) bool {
	return r == ReasonOutOfScope || r == ReasonAccessDenied || r == ReasonAudience
}

// BlockResult is one eligible block's outcome in its section.
type BlockResult struct {
	// RequestID (request_id) is the block's id.
	RequestID string `json:"request_id"`
	// MemoryType is the block's declared memory type: "constraint",
	// "context", "history" or "external".
	MemoryType string `json:"memory_type"`
	// Tokens is the rendered block's token count (of the part kept, for a
	// cut block). It is 0 for a block dropped without being counted:
	// under fill "stop" nothing after a section's first misfit is counted.
	Tokens int `json:"tokens"`
	// Score is the ranking score, rounded to 4 decimals.
	Score float64 `json:"score"`
	// Relevance is the block's relevance to the request's query, from 0
	// to 1, rounded to 4 decimals; absent without a query, or when it is 0.
	Relevance float64 `json:"relevance,omitempty"`
	// RelevancePoints (relevance_points) is what relevance added to the
	// score: the section's relevance share times Relevance, rounded.
	RelevancePoints float64 `json:"relevance_points,omitempty"`
	// LostOnRelevance (lost_on_relevance) is set on a block dropped for
	// room that a block kept above it outranked by relevance alone: that
	// block's score less its relevance_points is below this one's (see
	// [LostOnRelevance]).
	LostOnRelevance bool `json:"lost_on_relevance,omitempty"`
	// Status is kept, cut (in the text in part) or dropped.
	Status Status `json:"status"`
	// Reason says why a cut or dropped block is, as its event does; empty
	// for a kept block.
	Reason Reason `json:"reason,omitempty"`
	// Required is set for a required block.
	Required bool `json:"required,omitempty"`
	// Trust is the trust the block was ranked with (declared, or learned
	// from feedback).
	Trust float64 `json:"trust"`
	// ViolationPatterns are the block's break_on_violation patterns, so
	// feedback can check a response against a dump alone.
	ViolationPatterns []string `json:"violation_patterns,omitempty"`
	// Offset and Length locate the rendered block in the text, in bytes;
	// both are 0 for a block that is not in the text.
	Offset int `json:"offset,omitempty"`
	// Length is the rendered block's length in the text, in bytes.
	Length int `json:"length,omitempty"`
	// Index is the block's position in the blocks assembled, so the
	// assembler's caller can map a result back to its block without a
	// lookup. It is not part of the dump.
	Index int32 `json:"-"`
	// Provenance, from the block's declaration, when it declared any:
	// where the block came from, for people reading a dump.
	SourceID string `json:"source_id,omitempty"`
	// SourceLocation (source_location) is where in its source the block is.
	SourceLocation string `json:"source_location,omitempty"`
	// URI is the block's declared URI.
	URI string `json:"uri,omitempty"`
	// Group names the group the block is kept or dropped with (see
	// Event.Group).
	Group string `json:"group,omitempty"`
	// Message is, in a chat format, the index of the block's message in
	// the conversation's messages, plus one (0: not a message).
	Message int `json:"message,omitempty"`
	// Variant is the variant written for a degraded block, counting from
	// 1 (0: the content itself).
	Variant int `json:"variant,omitempty"`
	// By names the block that stands for this one (see Event.By).
	By string `json:"by,omitempty"`
}

// SectionResult is one section's outcome. Blocks are in rank order.
type SectionResult struct {
	// Name is the section's name.
	Name string `json:"name"`
	// Priority is the section's priority; 1 is the most important.
	Priority int `json:"priority"`
	// MaxTokens (max_tokens) is the section's cap.
	MaxTokens int `json:"max_tokens"`
	// UsedTokens is the sum the cap is applied to: the kept blocks' counts
	// plus the separators between them.
	UsedTokens int `json:"used_tokens"`
	// Blocks are every eligible block routed to the section, kept or not.
	Blocks []BlockResult `json:"blocks"`
}

// Dump is one assembly in the JSON shape of `contextasm render --format
// json` (see docs/). It round-trips through encoding/json, so tools can read
// dumps back (to diff two turns, say).
type Dump struct {
	// ProtocolVersion (protocol_version) is the protocol of the header,
	// "1.2".
	ProtocolVersion string `json:"protocol_version"`
	// Fingerprint is the template's fingerprint, as in the header.
	Fingerprint string `json:"fingerprint"`
	// RenderHash (render_hash) is "sha256:" and the hex SHA-256 of what was
	// sent: Text, or for a chat format the request body.
	RenderHash string `json:"render_hash"`
	// Encoding is the template's encoding, which counted every token.
	Encoding string `json:"encoding"`
	// Budget is the budget applied.
	Budget int `json:"budget"`
	// TotalTokens (total_tokens) is the exact token count of Text; at most
	// Budget.
	TotalTokens int `json:"total_tokens"`
	// Now is the instant the assembly judged expiry and staleness at,
	// RFC 3339 in UTC.
	Now string `json:"now"`
	// Sections are every section of the template, in template order, also
	// those that kept nothing.
	Sections []SectionResult `json:"sections"`
	// Events are every decision worth explaining, in a fixed order.
	Events []Event `json:"events"`
	// ExcludedCounts counts, per reason, the blocks excluded for a hidden
	// reason (see [Hidden]), whose ids the events do not list.
	ExcludedCounts map[Reason]int `json:"excluded_counts,omitempty"`
	// Prefix compares the text with the previous assembly of the same
	// session, user, template and format; absent on a conversation's first.
	Prefix *Prefix `json:"prefix,omitempty"`
	// CacheBreakpoints are where a host may mark its prompt cache.
	CacheBreakpoints []Breakpoint `json:"cache_breakpoints,omitempty"`
	// SummarizeCandidates are the runs of history dropped for room that
	// nothing in the text represents, for the host to summarise.
	SummarizeCandidates []SummarizeCandidate `json:"summarize_candidates,omitempty"`
	// Text is the rendered context, exactly as `--format text` prints it.
	Text string `json:"text"`
	// StateVersion is the version of the shared learned state the
	// assembly ranked with; absent without a state store.
	StateVersion uint64 `json:"state_version,omitempty"`
	// Approximate is set when the budget was enforced with an approximate
	// counter (encoding "approx:..."): how the counts were estimated.
	Approximate *Approximation `json:"approximate,omitempty"`
	// Query says what the assembly's relevance came from; absent when
	// relevance did not count.
	Query *Query `json:"query,omitempty"`
	// Conflicts are the conflict_keys shared by eligible blocks, each with
	// the block that entered and those it excluded, in key order; absent
	// without any.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// Template says which template of a fallback chain was used and why
	// the earlier ones were not; absent for a request without one.
	Template *TemplateChoice `json:"template,omitempty"`
	// Tools is a chat request's tools part; absent without tools.
	Tools *Tools `json:"tools,omitempty"`
}

// Query says what an assembly's relevance came from, without its text: a
// dump or an audit record names the query by hash only.
type Query struct {
	// From is QueryRequest (the request gave its text), QueryNewestUserTurn
	// (the session's newest user turn, by default) or QueryHost (the
	// host's own scores, Request.Relevance).
	From string `json:"from"`
	// SHA256 is "sha256:" and the hex SHA-256 of the query's text (for
	// QueryHost, of the scores as canonical JSON).
	SHA256 string `json:"sha256"`
	// Tokens is the query text's token count in the template's encoding
	// (0 for QueryHost).
	Tokens int `json:"tokens,omitempty"`
	// Block is, for QueryNewestUserTurn, the request_id of the turn.
	Block string `json:"block,omitempty"`
	// Scores is, for QueryHost, how many blocks the host scored.
	Scores int `json:"scores,omitempty"`
}

// Where a Query came from.
const (
	QueryRequest        = "request"
	QueryNewestUserTurn = "newest_user_turn"
	QueryHost           = "host"
)

// Approximation says how an approximate counter estimated the counts of
// one assembly, for a model without a local tokenizer. See
// docs/tokenizers.md.
type Approximation struct {
	// Family is the model family of the encoding ("claude" for
	// "approx:claude").
	Family string `json:"family"`
	// Basis is BasisBytes (one token per UTF-8 byte: no usage reported
	// yet) or BasisO200k (o200k_base counts times Ratio, rounded up).
	Basis string `json:"basis"`
	// Ratio is the margin: the largest ratio of provider-reported input
	// tokens to o200k_base tokens among the recent reports.
	Ratio float64 `json:"ratio,omitempty"`
	// Reports is how many provider-reported usages Ratio rests on.
	Reports int `json:"reports"`
}

// The bases of an approximate count.
const (
	BasisBytes = "bytes"
	BasisO200k = "o200k_base"
)

// Audit is the record of one assembly. It carries ids and hashes, never
// block content.
type Audit struct {
	// RequestID (request_id) is the assembly's id: the request's, or "asm-"
	// and the first 12 hex digits of the render hash.
	RequestID string `json:"request_id"`
	// Fingerprint is the template's fingerprint.
	Fingerprint string `json:"fingerprint"`
	// RenderHash (render_hash) is "sha256:" and the hex SHA-256 of what was
	// sent, as in the dump.
	RenderHash string `json:"render_hash"`
	// DeclaredMemoryTypes are the memory types of the blocks that took
	// part in the assembly (were eligible for a section), in the fixed
	// order constraint, context, history, external.
	DeclaredMemoryTypes []string `json:"declared_memory_types"`
	// RenderedTokens (rendered_tokens) is the text's token count.
	RenderedTokens int `json:"rendered_tokens"`
	// Budget is the budget applied.
	Budget int `json:"budget"`
	// Blocks are the blocks in the rendered text, sections in template
	// order and blocks in rank order, each with the hash of exactly the
	// text rendered for it: which version of a rule the model saw is
	// answered from the record alone.
	Blocks []AuditBlock `json:"blocks"`
	// Inputs are the declaration files and source snapshots the engine
	// had loaded, by name, with their hashes, as the host reported them.
	Inputs []Input `json:"inputs,omitempty"`
	// Events are the assembly's events, as in the dump.
	Events []Event `json:"events"`
	// ExcludedCounts counts the blocks excluded for a hidden reason, per
	// reason (see [Hidden]).
	ExcludedCounts map[Reason]int `json:"excluded_counts,omitempty"`
	// ModelResponseHash is set in the record feedback logs: the hash of
	// the model's response to this assembly.
	ModelResponseHash string `json:"model_response_hash,omitempty"`
	// Conflicts are the assembly's conflicts, as in the dump: keys, ids
	// and trusts.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// Template is the fallback chain's choice, as in the dump.
	Template *TemplateChoice `json:"template,omitempty"`
}

// AuditBlock is one block in a rendered text, as the audit record lists
// it: no content, only a hash of it.
type AuditBlock struct {
	// RequestID (request_id) is the block's id.
	RequestID string `json:"request_id"`
	// Status is kept, or cut for a block kept in part.
	Status Status `json:"status"`
	// SHA256 is the hex SHA-256 of the block's span in the rendered text:
	// the render string filled in, neutralised, and cut if it was.
	SHA256 string `json:"sha256"`
}

// Input is one declaration file or source snapshot an engine loaded.
type Input struct {
	// Name says what was loaded, e.g. "file:memories.jsonl" or
	// "source:docs".
	Name string `json:"name"`
	// SHA256 is the hex SHA-256 of the bytes loaded.
	SHA256 string `json:"sha256"`
}

// Log writes the record as one log entry ("contextasm.assembly") with the
// record's fields as attributes; with slog's JSON handler it is one JSON
// line.
func (a *Audit) Log(ctx context.Context, l *slog.Logger) {
	attrs := []slog.Attr{
		slog.String("request_id", a.RequestID),
		slog.String("fingerprint", a.Fingerprint),
		slog.String("render_hash", a.RenderHash),
		slog.Any("declared_memory_types", a.DeclaredMemoryTypes),
		slog.Int("rendered_tokens", a.RenderedTokens),
		slog.Int("budget", a.Budget),
		slog.Any("blocks", a.Blocks),
	}
	if len(a.Inputs) > 0 {
		attrs = append(attrs, slog.Any("inputs", a.Inputs))
	}
	attrs = append(attrs, slog.Any("events", a.Events))
	if len(a.ExcludedCounts) > 0 {
		attrs = append(attrs, slog.Any("excluded_counts", a.ExcludedCounts))
	}
	if len(a.Conflicts) > 0 {
		attrs = append(attrs, slog.Any("conflicts", a.Conflicts))
	}
	if a.Template != nil {
		attrs = append(attrs, slog.Any("template", a.Template))
	}
	if a.ModelResponseHash != "" {
		attrs = append(attrs, slog.String("model_response_hash", a.ModelResponseHash))
	}
	l.LogAttrs(ctx, slog.LevelInfo, "contextasm.assembly", attrs...)
}
