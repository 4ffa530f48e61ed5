package assemble

import (
	"regexp"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/outcome"
)

// Block is one declared memory as the Assembler sees it: flat, immutable,
// with times resolved. Package contextasm builds Blocks from declarations.
type Block struct {
	ID           string
	Type         declare.MemoryType
	Content      string
	SourceID     string
	Seq          int64 // declaration order, for order "declared"
	Priority     float64
	HasPriority  bool
	Weight       float64
	Trust        float64
	Required     bool
	Scope        declare.Scope
	SessionID    string
	UserID       string
	Roles        []string
	ForAssistant bool
	ValidUntil   time.Time // zero: never expires
	StaleFrom    time.Time // zero: never stale
	StaleAfter   time.Duration
	LastModified time.Time // zero: unknown
	// IdleTTL releases a session-scoped block once its session has been
	// idle that long; the engine acts on it, the Assembler does not read it.
	IdleTTL time.Duration
	// MinTokens is a number of tokens any rendering of the block has at
	// least, for counters that are LowerBounded; 0 means unknown. A block
	// that cannot fit even so is dropped without being counted.
	MinTokens int
	// Key identifies everything a rendering of the block reads (id, type,
	// source, content), for the Assembler's Memo; zero means "not
	// memoised". Package contextasm sets it to a hash.
	Key [16]byte
	// ViolationPatterns are a break_on_violation constraint's patterns, as
	// declared, and Patterns the same compiled once at declaration. The
	// Assembler does not use them; they travel with the block (and into
	// the dump) for feedback.
	ViolationPatterns []string
	Patterns          []*regexp.Regexp

	// SourceLocation and URI are provenance (with SourceID) that the
	// results carry for people reading a dump; assembly does not read them.
	SourceLocation string
	URI            string

	// Role, ToolCalls, ToolCallID and Group are a history block's place in
	// a chat (declare.Declaration): Role is "" for other memory types and
	// RoleUser for history that names none.
	Role       declare.Role
	ToolCalls  []declare.ToolCall
	ToolCallID string
	Group      string

	// Heat counts the block's renders. Package contextasm keeps one per
	// request_id and points every version of the block at it; the
	// Assembler does not touch it, an Index adds the drops it counts.
	Heat *Heat

	// Variants, MaxTokens, Supersedes and Replaces are the declaration's
	// degradation fields (degrade.go): shorter forms of Content, longest
	// first; a cap on the content's tokens (0: none); the ids this block
	// supersedes; and, on a summary, the ids of the turns it stands for.
	Variants   []string
	MaxTokens  int
	Supersedes []string
	Replaces   []string
}

// Heat counts one block's renders: kept whole, dropped, cut. Assemblies
// add to it without a lock.
type Heat struct {
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
	Now       time.Time
	SessionID string
	UserID    string
	Roles     []string
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
}

// Output is the result of one assembly.
type Output struct {
	// Text is the rendered context; for a chat format, the system prompt:
	// everything but the history blocks, which are Messages.
	Text string
	// TotalTokens is the exact count of Text; for a chat format, of the
	// whole conversation as ChatCost counts it.
	TotalTokens int
	Sections    []outcome.SectionResult
	Events      []outcome.Event
	// ExcludedCounts counts the blocks excluded for a hidden reason, per
	// reason, when they are not listed; nil when there are none.
	ExcludedCounts map[outcome.Reason]int
	// Messages are, for a chat format, the kept history blocks in reading
	// order.
	Messages []chat.Message
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

	represented int // blocks in the text, or stood for by a summary in it
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
	Block   [16]byte // Block.Key
	Section [16]byte // template.Section.Key
}

// LineAdditive is implemented by counters for which a text made of lines
// counts as the sum of its lines' counts (each line counted with its
// newline), as long as every line after the first starts cleanly (see
// [StartsLineCleanly]). The BPE tokenizers of o200k_base and cl100k_base
// are: their pre-tokenizer never lets a piece run across a newline into a
// following character that is neither white space nor '/', and BPE never
// merges across pieces. An Assembler uses it to skip counting the final
// text when the sum of the lines already is its count.
type LineAdditive interface {
	LineAdditive() bool
}

// JoinCounter is implemented by counters that can say what joining
// separately counted parts changes, tokenizing only around the joins:
// JoinDelta returns the count of text less the sum of the counts of the
// parts text is cut into at cuts (ascending byte offsets), and ok false
// when it cannot. The BPE tokenizers of o200k_base and cl100k_base can
// (bpe.Tokenizer.JoinDelta). An Assembler uses it for the final text's
// count when its lines do not simply add up: the sum of its parts is
// known, and only the joins are counted.
type JoinCounter interface {
	JoinDelta(text string, cuts []int) (delta int, ok bool)
}

// StartsLineCleanly reports whether s may start a line without its first
// token depending on the line before: it does not start with white space
// (Unicode White_Space or separator) or '/'.
func StartsLineCleanly(s string) bool {
	if s == "" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s)
	return r != '/' && r != utf8.RuneError && !unicode.IsSpace(r) && !unicode.In(r, unicode.Z)
}

// LowerBounded is implemented by counters for which Block.MinTokens, as
// package contextasm computes it, is a lower bound of a block's count (the
// BPE tokenizers: see bpe.LowerBound). Under fill "skip" this spares
// counting the many blocks that cannot fit the room left.
type LowerBounded interface {
	LowerBounded() bool
}
