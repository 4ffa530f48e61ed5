package truncate

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/contextasm/contextasm/outcome"
)

// Counter counts tokens. The engine's implementation is a cached BPE
// tokenizer; a host may bring its own.
//
// A Counter may promise more, by methods the assembler looks for:
// LineAdditive() bool reporting true promises that a text made of lines
// counts as the sum of its lines' counts (each with its newline) whenever
// no line after the first starts with white space or '/', which spares
// counting the final text; LowerBounded() bool reporting true promises that
// the engine's lower bound of a block's count (computed for the built-in
// BPE encodings' vocabularies) never exceeds the count, which spares
// counting blocks that cannot fit; JoinDelta(text string, cuts []int)
// (int, bool) returning true says what joining separately counted parts
// changes (the count of text less those of the parts it is cut into at
// cuts), which spares counting the final text whole.
// Promise none unless it holds: a wrong promise breaks the budget.
type Counter interface {
	// Count returns the number of tokens of text.
	Count(text string) int
	// Cut returns the longest prefix of text that ends on a token
	// boundary, never inside a UTF-8 character, and counts at most
	// maxTokens tokens.
	Cut(text string, maxTokens int) string
}

// LineAdditive is implemented by counters for which a text made of lines
// counts as the sum of its lines' counts (each line counted with its
// newline), as long as every line after the first starts cleanly (see
// [StartsLineCleanly]). The BPE tokenizers of o200k_base and cl100k_base
// are: their pre-tokenizer never lets a piece run across a newline into a
// following character that is neither white space nor '/', and BPE never
// merges across pieces. The assembler uses it to skip counting the final
// text when the sum of the lines already is its count.
type LineAdditive interface {
	LineAdditive() bool
}

// JoinCounter is implemented by counters that can say what joining
// separately counted parts changes, tokenizing only around the joins:
// JoinDelta returns the count of text less the sum of the counts of the
// parts text is cut into at cuts (ascending byte offsets), and ok false
// when it cannot. The BPE tokenizers of o200k_base and cl100k_base can
// (bpe.Tokenizer.JoinDelta). The assembler uses it for the final text's
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

// LowerBounded is implemented by counters for which a block's lower bound, as
// the engine computes it, is a lower bound of a block's count (the
// BPE tokenizers: see bpe.LowerBound). Under fill "skip" this spares
// counting the many blocks that cannot fit the room left.
type LowerBounded interface {
	LowerBounded() bool
}

// Scoring sets the weights of the score that ranks blocks inside a section:
//
//	base  = (P·priority + S·semantic_weight + T·trust) / (P + S + T)                    most blocks
//	base  = (P·priority + S·semantic_weight + T·trust + R·recency) / (P + S + T + R)    history blocks
//	score = base · (1 − StalePenalty · (1 + s) / 2)   for a stale block
//	score = base                                      otherwise
//
// where priority is the block's MCP priority (DefaultPriority when it has
// none) and s ∈ [0, 1] is how far the block is through its stale window
// (0 when it just became stale, 1 at valid_until). A stale block thus loses
// between half of StalePenalty and all of it. The score lies in [0, 1].
//
// Recency is what makes a conversation keep its newest turns: for a block
// of memory type history,
//
//	recency = H / (H + age)      age = now − last_modified (0 if in the future)
//	recency = 0                  for a block without last_modified
//
// with H = RecencyHalfAge: 1 for a turn of this instant, ½ for one H old,
// falling ever more slowly after. With the defaults (R = 1, H = 1 h) and
// equal weights, history ranks strictly newest first; blocks of equal
// score are ordered newer last_modified first, then later declaration,
// and only then by request_id, so a tie never falls to text order when
// the times differ. Weights override recency where they differ by more
// than recency does: a history block ranks above a newer one when
// S·Δsemantic_weight + T·Δtrust + P·Δpriority > R·Δrecency. With the
// defaults, a turn with a semantic_weight 0.1 higher outranks turns up to
// about 2 minutes newer when it is recent itself, and a day-old turn
// outranks turns up to about 12 hours newer. To rank history by weights alone, make R tiny (1e-9); to make
// recency all but absolute, make it large.
//
// Each field left zero takes its value from [DefaultScoring], so
// Scoring{StalePenalty: 0.2} keeps every default weight. The weights are
// relative (the score divides by their sum): to make a term count for
// little, make the others large; to make staleness cost (almost) nothing,
// set a tiny StalePenalty such as 1e-9.
type Scoring struct {
	Priority        float64 // P
	SemanticWeight  float64 // S
	Trust           float64 // T
	DefaultPriority float64 // priority of a block that declares none
	StalePenalty    float64 // in [0, 1]
	Recency         float64 // R, for history blocks only
	// RecencyHalfAge is H: the age at which a history block's recency is
	// one half.
	RecencyHalfAge time.Duration
	// Relevance is λ, the share of the score a block's relevance to the
	// request's query takes when the request has one:
	//
	//	score_q = (1 − λ)·score + λ·relevance
	//
	// with relevance in [0, 1] (docs/relevance.md). Without a query the
	// score is as above. A template section may set its own λ, zero
	// included ("relevance": 0); to make relevance count for almost
	// nothing engine-wide, set a tiny value such as 1e-9.
	Relevance float64
	// HostRelevance is λ for a request that carries the host's own
	// relevance (a retriever's or an embedding index's scores) instead of
	// the built-in lexical one. It is larger than Relevance by default:
	// the host's scores are its judgement of what the call needs, and
	// recency's share then orders the blocks they leave unscored, newest
	// first. A template section's own λ sets both.
	HostRelevance float64
}

// DefaultScoring returns the default weights: MCP priority weighs most,
// then the declared semantic weight, then learned trust; a block without a
// priority counts as 0.5, and staleness costs a quarter to a half of the
// score. History blocks weigh recency as much as the three others
// together, with a half-age of one hour.
func DefaultScoring() Scoring {
	return Scoring{
		Priority:        0.4,
		SemanticWeight:  0.35,
		Trust:           0.25,
		DefaultPriority: 0.5,
		StalePenalty:    0.5,
		Recency:         1,
		RecencyHalfAge:  time.Hour,
		Relevance:       DefaultRelevance,
		HostRelevance:   DefaultHostRelevance,
	}
}

// DefaultRelevance is the default relevance share (Scoring.Relevance).
const DefaultRelevance = 0.5

// DefaultHostRelevance is the default relevance share of the host's own
// relevance (Scoring.HostRelevance).
const DefaultHostRelevance = 0.85

// WithDefaults returns s with each zero field set to its default.
func (s Scoring) WithDefaults() Scoring {
	d := DefaultScoring()
	for _, f := range [...]struct{ v, def *float64 }{
		{&s.Priority, &d.Priority},
		{&s.SemanticWeight, &d.SemanticWeight},
		{&s.Trust, &d.Trust},
		{&s.DefaultPriority, &d.DefaultPriority},
		{&s.StalePenalty, &d.StalePenalty},
		{&s.Recency, &d.Recency},
		{&s.Relevance, &d.Relevance},
		{&s.HostRelevance, &d.HostRelevance},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if s.RecencyHalfAge <= 0 {
		s.RecencyHalfAge = d.RecencyHalfAge
	}
	return s
}

// ErrBudgetTooSmall means required blocks do not fit their section cap or
// the budget. The error is a *RequiredError listing them.
var ErrBudgetTooSmall = errors.New("budget too small for required blocks")

// RequiredMiss is one required block that could not be placed.
type RequiredMiss struct {
	RequestID string         // the block's request_id
	Section   string         // "" for no_section
	Tokens    int            // the block's count, when known
	Limit     int            // the cap or budget it did not fit
	Reason    outcome.Reason // section_cap, budget, no_section, orphan or first_message
	// Need is, for section_cap, the tokens all required blocks of the
	// section take together, separators included.
	Need int
	// Current marks a block of a chat's current turn (the newest user
	// message, or the tool results the model must answer): required by
	// the chat formats, not by its declaration.
	Current bool
}

// what names a missed block in an error: "required block", or "the
// current turn's block" for one the chat formats require.
func (m RequiredMiss) what() string {
	if m.Current {
		return "current turn's block"
	}
	return "required block"
}

// RequiredError lists the required blocks that could not be placed. It
// wraps [ErrBudgetTooSmall].
type RequiredError struct {
	// Misses are the required blocks that could not be placed.
	Misses []RequiredMiss
}

// Error lists the blocks, one a line, and then how many tokens they need
// against the cap or budget they did not fit.
func (e *RequiredError) Error() string {
	var b strings.Builder
	b.WriteString(ErrBudgetTooSmall.Error())
	var sections []string // in order of first miss
	need := map[string]int{}
	limit := map[string]int{}
	budgetNeed, budgetLimit := 0, 0
	for _, m := range e.Misses {
		switch m.Reason {
		case outcome.ReasonSectionCap:
			if _, ok := need[m.Section]; !ok {
				sections = append(sections, m.Section)
			}
			need[m.Section] = max(need[m.Section], m.Need)
			limit[m.Section] = m.Limit
		case outcome.ReasonBudget:
			budgetNeed += m.Tokens
			budgetLimit = m.Limit
		}
	}
	for _, m := range e.Misses {
		b.WriteString("\n")
		switch m.Reason {
		case outcome.ReasonNoSection:
			fmt.Fprintf(&b, "%s %q: no section takes its memory type", m.what(), m.RequestID)
		case outcome.ReasonOrphan:
			fmt.Fprintf(&b, "%s %q (section %q): a tool call and its result travel together, and its counterpart is not among the eligible blocks", m.what(), m.RequestID, m.Section)
		case outcome.ReasonFirstMessage:
			fmt.Fprintf(&b, "%s %q (section %q): the format needs a user turn first, and no user turn comes before this one", m.what(), m.RequestID, m.Section)
		case outcome.ReasonSectionCap:
			fmt.Fprintf(&b, "%s %q (%d tokens): the required blocks of section %q exceed its max_tokens %d", m.what(), m.RequestID, m.Tokens, m.Section, m.Limit)
		default:
			fmt.Fprintf(&b, "%s %q (%d tokens, section %q): the required blocks alone exceed the budget of %d", m.what(), m.RequestID, m.Tokens, m.Section, m.Limit)
		}
	}
	for _, s := range sections {
		fmt.Fprintf(&b, "\nsection %q: its required blocks need %d tokens, its max_tokens is %d", s, need[s], limit[s])
	}
	if budgetNeed > 0 {
		fmt.Fprintf(&b, "\nthe required blocks need %d tokens, plus the header and the joins; the budget is %d", budgetNeed, budgetLimit)
	}
	return b.String()
}

// Unwrap returns [ErrBudgetTooSmall].
func (e *RequiredError) Unwrap() error { return ErrBudgetTooSmall }

// Stickiness sets how an assembly that follows another one of the same
// conversation (session, user and template) keeps the rendered prefix
// byte-stable, so a model provider's prompt cache can reuse it. The
// engine keeps each conversation's previous decisions; docs/conversations.md
// explains the model.
//
// Each field left zero takes its value from [DefaultStickiness].
type Stickiness struct {
	// Margin is how far a block's score must rise above a block the
	// previous assembly kept before it may take that block's place: learned
	// trust, staleness and recency move scores a little on every call, and
	// a decision that followed every move would rewrite the text every
	// call. In score units (scores lie in [0, 1]); a tiny Margin (1e-9)
	// follows every move.
	Margin float64
	// Slack is how far a section sheds when it must drop blocks it kept
	// last time because new blocks entered (a conversation's history
	// growing past its cap or the budget): down to Slack times what it
	// could keep, dropping its lowest-ranked (oldest) blocks at once, so
	// that the next calls only append. In (0, 1]; 1 sheds only what it
	// must.
	Slack float64
	// MinCachePrefix is the fewest tokens a cache breakpoint may cover:
	// providers cache no shorter prefix.
	MinCachePrefix int
}

// DefaultStickiness returns the defaults: a margin of 0.05 (four
// first-third citations' worth of trust, with the default Scoring and
// Policy), a slack of 0.75, and breakpoints from 1,024 tokens.
func DefaultStickiness() Stickiness {
	return Stickiness{Margin: 0.05, Slack: 0.75, MinCachePrefix: 1024}
}

// WithDefaults returns s with each zero field set to its default.
func (s Stickiness) WithDefaults() Stickiness {
	d := DefaultStickiness()
	if s.Margin == 0 {
		s.Margin = d.Margin
	}
	if s.Slack == 0 {
		s.Slack = d.Slack
	}
	if s.MinCachePrefix == 0 {
		s.MinCachePrefix = d.MinCachePrefix
	}
	return s
}

// Validate reports a field out of range, naming it.
func (s Stickiness) Validate() error {
	switch {
	case s.Margin < 0 || s.Margin != s.Margin:
		return fmt.Errorf("Stickiness.Margin %v is negative (0 means the default)", s.Margin)
	case s.Slack < 0 || s.Slack > 1 || s.Slack != s.Slack:
		return fmt.Errorf("Stickiness.Slack %v is outside (0, 1] (0 means the default)", s.Slack)
	case s.MinCachePrefix < 0:
		return fmt.Errorf("Stickiness.MinCachePrefix %d is negative (0 means the default)", s.MinCachePrefix)
	}
	return nil
}
