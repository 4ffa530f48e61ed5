package assemble

import (
	"regexp"
	"sync/atomic"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/lexical"
	"github.com/contextasm/contextasm/outcome"
)

// Block is one declared memory as the Assembler sees it: flat, immutable,
// with times resolved. Package contextasm builds Blocks from declarations.
//
// The fields most blocks leave empty live in Rare, nil for a block that
// sets none of them: an Engine holds hundreds of thousands of Blocks, and
// the rare fields would double each one's size. Read them through the
// accessor methods (Roles, Variants, ...), which are nil-safe.
type Block struct {
	// ID is the declaration's request_id: the block's identity.
	ID string
	// Type is the memory type; the template routes the block by it.
	Type declare.MemoryType
	// Content is the text the model sees, as declared.
	Content string
	// SourceID is the provenance's source_id; it fills a render string's
	// {source_id}.
	SourceID string
	// Scope says who the block is visible to: session, user or global.
	Scope declare.Scope
	// SessionID is the session a session-scoped block belongs to; a request
	// of another session does not see it.
	SessionID string
	// UserID is the user a user-scoped block belongs to; a request of
	// another user does not see it.
	UserID string
	// Role is a history block's role in a chat (declare.Declaration): ""
	// for other memory types and RoleUser for history that names none.
	Role declare.Role

	Seq int64 // declaration order, for order "declared"
	// Priority is the declared priority, from 0 to 1; it counts only with
	// HasPriority (without, the score uses Scoring.DefaultPriority).
	Priority float64
	// Weight is the semantic weight, from 0 to 1, the default applied.
	Weight float64
	// Trust is the trust score, from 0 to declare.MaxTrustScore, the
	// default applied.
	Trust      float64
	ValidUntil time.Time // zero: never expires
	StaleFrom  time.Time // zero: never stale
	// StaleAfter is how long, from StaleFrom, the stale penalty takes to
	// grow from half to full; 0: full at once.
	StaleAfter time.Duration
	// LastModified is zero when unknown.
	LastModified time.Time
	// Key identifies everything a rendering of the block reads (id, type,
	// source, content), for the Assembler's Memo; zero means "not
	// memoised". Package contextasm sets it to a hash.
	Key [16]byte

	// Doc is the block's content analysed for relevance (package lexical),
	// once, when it is declared; nil: analysed when a query needs it.
	Doc *lexical.Doc

	// Heat counts the block's renders. Package contextasm keeps one per
	// request_id and points every version of the block at it; the
	// Assembler does not touch it, an Index adds the drops it counts.
	Heat *Heat

	// Rare holds the fields most blocks leave empty; nil when all of them
	// are. Use the accessors to read them.
	Rare *Rare

	// MinTokens is a number of tokens any rendering of the block has at
	// least, for counters that are LowerBounded; 0 means unknown. A block
	// that cannot fit even so is dropped without being counted. (An int32
	// beside the flags keeps a Block in its allocation size class.)
	MinTokens int32

	// HasPriority reports whether the declaration gave a Priority.
	HasPriority bool
	// Required means the block is never dropped or cut: declared required,
	// or priority 1 from a trusted source. If it cannot fit, assembly fails.
	Required bool
	// ForAssistant is false when the declared audience leaves out
	// "assistant": the block is then excluded (reason audience).
	ForAssistant bool
}

// Rare is the part of a Block most blocks leave empty (see Block.Rare).
type Rare struct {
	// Roles, when not empty, admit the block only to a request holding at
	// least one of them (Request.Roles).
	Roles []string
	// IdleTTL releases a session-scoped block once its session has been
	// idle that long; the engine acts on it, the Assembler does not read it.
	IdleTTL time.Duration
	// ViolationPatterns are a break_on_violation constraint's patterns, as
	// declared, and Patterns the same compiled once at declaration. The
	// Assembler does not use them; they travel with the block (and into
	// the dump) for feedback.
	ViolationPatterns []string
	// Patterns are ViolationPatterns compiled, in the same order.
	Patterns []*regexp.Regexp

	// SourceLocation and URI are provenance (with SourceID) that the
	// results carry for people reading a dump; assembly does not read them.
	SourceLocation string
	// URI is a URI of the original.
	URI string

	// ToolCalls, ToolCallID and Group are, with Block.Role, a history
	// block's place in a chat (declare.Declaration).
	ToolCalls []declare.ToolCall
	// ToolCallID is, on a tool result, the id of the call it answers.
	ToolCallID string
	// Group names the group the block is kept or dropped with.
	Group string
	// Reasoning are an assistant turn's reasoning items (chatmode.go).
	Reasoning []declare.Reasoning

	// Variants, MaxTokens, Supersedes and Replaces are the declaration's
	// degradation fields (degrade.go): shorter forms of Content, longest
	// first; a cap on the content's tokens (0: none); the ids this block
	// supersedes; and, on a summary, the ids of the turns it stands for.
	Variants []string
	// MaxTokens caps the content's tokens, the rest cut off with a marker;
	// 0: no cap.
	MaxTokens int
	// Supersedes are the ids of the blocks this one replaces; they are left
	// out while it is eligible.
	Supersedes []string
	// Replaces are, on a summary, the ids of the turns it stands for.
	Replaces []string
	// ConflictKey names the fact or rule the block states: of the eligible
	// blocks sharing it, one enters (conflict.go).
	ConflictKey string
}

// IsZero reports whether r sets none of its fields (nil slices and empty
// strings; a non-nil empty slice counts as set, so that a Block built
// with one reads back the same).
func (r *Rare) IsZero() bool {
	return r.Roles == nil && r.IdleTTL == 0 && r.ViolationPatterns == nil && r.Patterns == nil &&
		r.SourceLocation == "" && r.URI == "" && r.ToolCalls == nil && r.ToolCallID == "" &&
		r.Group == "" && r.Reasoning == nil && r.Variants == nil && r.MaxTokens == 0 && r.Supersedes == nil && r.Replaces == nil && r.ConflictKey == ""
}

// SetRare sets b.Rare to r, or to nil when r sets nothing.
func (b *Block) SetRare(r Rare) {
	if r.IsZero() {
		b.Rare = nil
		return
	}
	b.Rare = &r
}

// EditRare returns rare fields of b's own to set: a copy of b.Rare (or a
// zero Rare), which it then points to, so that a Block copied from b
// before keeps its fields. Package contextasm builds a Block's Rare once,
// with SetRare; EditRare is for building Blocks field by field.
func (b *Block) EditRare() *Rare {
	var r Rare
	if b.Rare != nil {
		r = *b.Rare
	}
	b.Rare = &r
	return b.Rare
}

// rare returns b's rare fields, the zero Rare when it has none.
func (b *Block) rare() *Rare {
	if b.Rare == nil {
		return &noRare
	}
	return b.Rare
}

// noRare is the zero Rare the accessors read for a Block without one;
// nothing writes to it.
var noRare Rare

// Roles returns the roles a request needs one of to see b; nil: none.
func (b *Block) Roles() []string { return b.rare().Roles }

// IdleTTL returns Rare.IdleTTL, 0 without one.
func (b *Block) IdleTTL() time.Duration { return b.rare().IdleTTL }

// ViolationPatterns returns Rare.ViolationPatterns.
func (b *Block) ViolationPatterns() []string { return b.rare().ViolationPatterns }

// Patterns returns Rare.Patterns.
func (b *Block) Patterns() []*regexp.Regexp { return b.rare().Patterns }

// SourceLocation returns Rare.SourceLocation.
func (b *Block) SourceLocation() string { return b.rare().SourceLocation }

// URI returns Rare.URI.
func (b *Block) URI() string { return b.rare().URI }

// ToolCalls returns Rare.ToolCalls.
func (b *Block) ToolCalls() []declare.ToolCall { return b.rare().ToolCalls }

// ToolCallID returns Rare.ToolCallID.
func (b *Block) ToolCallID() string { return b.rare().ToolCallID }

// Group returns Rare.Group.
func (b *Block) Group() string { return b.rare().Group }

// Reasoning returns Rare.Reasoning.
func (b *Block) Reasoning() []declare.Reasoning { return b.rare().Reasoning }

// Variants returns Rare.Variants.
func (b *Block) Variants() []string { return b.rare().Variants }

// MaxTokens returns Rare.MaxTokens, 0 (no cap) without one.
func (b *Block) MaxTokens() int { return b.rare().MaxTokens }

// Supersedes returns Rare.Supersedes.
func (b *Block) Supersedes() []string { return b.rare().Supersedes }

// Replaces returns Rare.Replaces.
func (b *Block) Replaces() []string { return b.rare().Replaces }

// ConflictKey returns Rare.ConflictKey, "" without one.
func (b *Block) ConflictKey() string { return b.rare().ConflictKey }

// Heat counts one block's renders: kept whole, dropped, cut. Assemblies
// add to it without a lock.
type Heat struct {
	// Included, Dropped and Cut count the renders that kept the block
	// whole, dropped it (section cap or budget), and kept only part of it.
	Included, Dropped, Cut atomic.Int64
}

// staleness reports whether b is stale at now and how far through its
// stale window it is, in [0, 1].
func (b *Block) staleness(now time.Time) (float64, bool) {
	if b.StaleFrom.IsZero() || now.Before(b.StaleFrom) {
		return 0, false
	}
	if b.StaleAfter <= 0 {
		return 1, true
	}
	f := float64(now.Sub(b.StaleFrom)) / float64(b.StaleAfter)
	return min(f, 1), true
}

// Request says who assembles and when.
type Request struct {
	// Now is the instant expiry, staleness and recency are judged at.
	Now time.Time
	// SessionID selects session-scoped blocks: those of another session
	// are out of scope.
	SessionID string
	// UserID selects user-scoped blocks likewise; empty: the request sees
	// no user-scoped block.
	UserID string
	// Roles are the roles the request holds; a block with roles needs one.
	Roles []string
	// ListHidden lists blocks excluded for a hidden reason (see
	// outcome.Hidden) by id, as events, instead of counting them: a
	// trusted debugging mode.
	ListHidden bool
	// Chat, when its Format is set, assembles for a chat format: history
	// blocks become Output.Messages and the budget covers them.
	Chat ChatCost
	// Previous is the decision of the previous assembly of the same
	// conversation (session, user, template and format), or nil: the assembly
	// follows it (see Assembler.Stickiness) and compares its text with it
	// (Output.Prefix).
	Previous *Decision
	// Fresh decides from scratch even with a Previous decision, which
	// then serves only to compare texts.
	Fresh bool
	// Record asks for Output.Decision, for the next assembly.
	Record bool
	// Query, when it has terms, is what the request is about: each
	// eligible block's relevance to it enters its score
	// (truncate.Scoring.Relevance), from the built-in lexical scorer over
	// the eligible blocks, unless Relevance is set.
	Query *lexical.Query
	// Relevance, when not nil, is the host's relevance by request_id, in
	// [0, 1], in place of the built-in scorer's (Query is then not read):
	// a block it does not name has relevance 0.
	Relevance map[string]float64
	// QueryKey identifies what relevance is computed from (the query's
	// text, or the host's scores), as the caller hashes it: a section that
	// follows its previous decision takes relevance as news only when the
	// key changed (Decision.Query).
	QueryKey string
	// NewestTurnQuery, without a Query or Relevance, makes the query the
	// newest user turn of the request's session among the eligible blocks
	// (a history block of the session whose role is user, not a summary),
	// when there is one; its key is its content's SHA-256.
	NewestTurnQuery bool
	// Tools, when set, are the tool definitions a chat request may carry
	// (tools.go); their tokens count in the budget.
	Tools *Tools
}

// queried reports whether relevance enters the request's scores.
func (r *Request) queried() bool {
	return r.Relevance != nil || r.Query != nil && r.Query.Terms() > 0
}

// Output is the result of one assembly.
type Output struct {
	// Text is the rendered context; for a chat format, the system prompt:
	// everything but the history blocks, which are Messages.
	Text string
	// TotalTokens is the exact count of Text; for a chat format, of the
	// whole conversation as ChatCost counts it.
	TotalTokens int
	// Sections are the sections' results, in template order.
	Sections []outcome.SectionResult
	// Events report decisions about single blocks: exclusions, drops, cuts
	// and notices (hidden exclusions only with Request.ListHidden).
	Events []outcome.Event
	// ExcludedCounts counts the blocks excluded for a hidden reason, per
	// reason, when they are not listed; nil when there are none.
	ExcludedCounts map[outcome.Reason]int
	// Messages are, for a chat format, the kept history blocks in reading
	// order.
	Messages []chat.Message
	// CacheTTL is, for a chat format, the template's cache_ttl.
	CacheTTL string
	// Decision is what the next assembly of the conversation follows, when
	// Request.Record asked for it.
	Decision *Decision
	// Prefix compares Text with the previous text (Request.Previous); nil
	// without one.
	Prefix *outcome.Prefix
	// Breakpoints are where a prompt cache may end, when Request.Previous
	// or Request.Record is set.
	Breakpoints []outcome.Breakpoint
	// Repeat is the Prefix of the same assembly made again following
	// Decision (all of the text, unchanged), when Request.Record is set: a
	// caller that memoises outputs hands it out rather than assemble again.
	Repeat *outcome.Prefix
	// SummarizeCandidates are the runs of history dropped for room that
	// nothing in the text represents (degrade.go).
	SummarizeCandidates []outcome.SummarizeCandidate
	// Conflicts are the conflict_keys shared by eligible blocks, in key
	// order, each with its winner and losers (conflict.go); nil without.
	Conflicts []outcome.Conflict
	// QueryTurn is the block whose content was the query, when
	// Request.NewestTurnQuery found one; nil otherwise.
	QueryTurn *Block
	// Tools is a chat request's tools part, nil without tools.
	Tools *ToolsOutput

	represented int // blocks in the text, or stood for by a summary in it
	// written are Decision's blocks, section after section in its order:
	// the Index keeps them for the next call (Index.rememberDecision).
	written []*Block
}

// Memo remembers the token counts of rendered blocks. Package contextasm
// backs it with a bounded LRU shared by all assemblies.
type Memo interface {
	Get(k MemoKey) (tokens int, ok bool)
	Add(k MemoKey, tokens int)
}

// RenderMemo remembers the text of blocks rendered whole (content, no
// variant, no max_tokens) by the same key as Memo. Package contextasm
// backs it with a bounded LRU.
type RenderMemo interface {
	GetRender(k MemoKey) (text string, escaped bool, ok bool)
	AddRender(k MemoKey, text string, escaped bool)
}

// MemoKey identifies a block rendered by a section: everything the
// rendering reads. A zero Block key means "not memoised".
type MemoKey struct {
	Block   [16]byte // Block.Key: the entry's group, dropped with the block
	Section [16]byte // template.Section.Key
	// Of is what of the block the entry holds: the form it is written
	// in (a variant, or its content) and, for a figure other than its
	// count, a tag (memoOf).
	Of uint16
}

// hostRelevance reports whether the request ranks with the host's own
// relevance (Relevance), whose share is Scoring.HostRelevance.
func (r *Request) hostRelevance() bool { return r.Relevance != nil }
