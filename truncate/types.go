package truncate

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/contextasm/contextasm/declare"
)

// Counter counts tokens. The engine's implementation is a cached BPE
// tokenizer; a host may bring its own.
type Counter interface {
	// Count returns the number of tokens of text.
	Count(text string) int
	// Cut returns the longest prefix of text that ends on a token
	// boundary, never inside a UTF-8 character, and counts at most
	// maxTokens tokens.
	Cut(text string, maxTokens int) string
}

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
}

// Status is what became of an eligible block.
type Status uint8

// The statuses.
const (
	Kept Status = iota
	Cut
	Dropped
)

// String returns "kept", "cut" or "dropped".
func (s Status) String() string {
	switch s {
	case Kept:
		return "kept"
	case Cut:
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
		*s = Kept
	case "cut":
		*s = Cut
	case "dropped":
		*s = Dropped
	default:
		return fmt.Errorf("truncate: unknown status %q", b)
	}
	return nil
}

// Reason says why a block was left out, cut or flagged (SPEC §7).
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
)

// Kind groups reasons by what happened to the block.
type Kind string

// The kinds.
const (
	KindExcluded Kind = "excluded" // never eligible: expired, out_of_scope, access_denied, audience, no_section
	KindDropped  Kind = "dropped"  // eligible but did not fit: section_cap, budget
	KindCut      Kind = "cut"      // kept in part: cut
	KindNotice   Kind = "notice"   // kept or eligible, with something to know: stale, escaped
	KindSource   Kind = "source"   // a source's problem: binary, source_unavailable, outside_root
)

// Event reports one decision about one block.
type Event struct {
	Kind      Kind   `json:"kind"`
	Section   string `json:"section,omitempty"`
	RequestID string `json:"request_id"`
	Reason    Reason `json:"reason"`
	Tokens    int    `json:"tokens"`
}

// BlockResult is one eligible block's outcome in its section.
type BlockResult struct {
	RequestID  string             `json:"request_id"`
	MemoryType declare.MemoryType `json:"memory_type"`
	// Tokens is the rendered block's token count (of the part kept, for a
	// cut block). It is 0 for a block dropped without being counted:
	// under fill "stop" nothing after a section's first misfit is counted.
	Tokens   int     `json:"tokens"`
	Score    float64 `json:"score"`
	Status   Status  `json:"status"`
	Reason   Reason  `json:"reason,omitempty"`
	Required bool    `json:"required,omitempty"`
	// Trust is the trust the block was ranked with (declared, or learned
	// from feedback).
	Trust float64 `json:"trust"`
	// ViolationPatterns are the block's break_on_violation patterns, so
	// feedback can check a response against a dump alone.
	ViolationPatterns []string `json:"violation_patterns,omitempty"`
	// Offset and Length locate the rendered block in Output.Text, in bytes;
	// both are 0 for a block that is not in the text.
	Offset int `json:"offset,omitempty"`
	Length int `json:"length,omitempty"`
	// Index is the block's position in the blocks given to Assemble, so a
	// caller can map a result back to its block without a lookup.
	Index int32 `json:"-"`
	// Provenance, from the block's declaration, when it declared any:
	// where the block came from, for people reading a dump.
	SourceID       string `json:"source_id,omitempty"`
	SourceLocation string `json:"source_location,omitempty"`
	URI            string `json:"uri,omitempty"`
}

// SectionResult is one section's outcome. Blocks are in rank order.
type SectionResult struct {
	Name      string `json:"name"`
	Priority  int    `json:"priority"`
	MaxTokens int    `json:"max_tokens"`
	// UsedTokens is the sum the cap is applied to: the kept blocks' counts
	// plus the separators between them.
	UsedTokens int           `json:"used_tokens"`
	Blocks     []BlockResult `json:"blocks"`
}

// Output is the result of one assembly.
type Output struct {
	Text        string
	TotalTokens int // exact count of Text
	Sections    []SectionResult
	Events      []Event
}

// ErrBudgetTooSmall means required blocks do not fit their section cap or
// the budget. The error is a *RequiredError listing them.
var ErrBudgetTooSmall = errors.New("budget too small for required blocks")

// RequiredMiss is one required block that could not be placed.
type RequiredMiss struct {
	RequestID string
	Section   string // "" for no_section
	Tokens    int    // the block's count, when known
	Limit     int    // the cap or budget it did not fit
	Reason    Reason // section_cap, budget or no_section
}

// RequiredError lists the required blocks that could not be placed. It
// wraps [ErrBudgetTooSmall].
type RequiredError struct {
	Misses []RequiredMiss
}

// Error lists the blocks, one a line.
func (e *RequiredError) Error() string {
	var b strings.Builder
	b.WriteString(ErrBudgetTooSmall.Error())
	for _, m := range e.Misses {
		b.WriteString("\n")
		switch m.Reason {
		case ReasonNoSection:
			fmt.Fprintf(&b, "required block %q: no section takes its memory type", m.RequestID)
		case ReasonSectionCap:
			fmt.Fprintf(&b, "required block %q (%d tokens): the required blocks of section %q exceed its max_tokens %d", m.RequestID, m.Tokens, m.Section, m.Limit)
		default:
			fmt.Fprintf(&b, "required block %q (%d tokens, section %q): the required blocks alone exceed the budget of %d", m.RequestID, m.Tokens, m.Section, m.Limit)
		}
	}
	return b.String()
}

// Unwrap returns [ErrBudgetTooSmall].
func (e *RequiredError) Unwrap() error { return ErrBudgetTooSmall }

// Memo remembers the token counts of rendered blocks. Package contextasm
// backs it with a bounded LRU shared by all assemblies.
type Memo interface {
	Get(k MemoKey) (tokens int, ok bool)
	Add(k MemoKey, tokens int)
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
