package template

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/fingerprint"
	"github.com/contextasm/contextasm/internal/delimit"
)

// Fill says what a section does with a block that does not fit its cap.
type Fill string

// The fill modes.
const (
	// FillStop ends the section at the first block that does not fit;
	// lower-ranked blocks are dropped too.
	FillStop Fill = "stop"
	// FillSkip keeps trying smaller lower-ranked blocks.
	FillSkip Fill = "skip"
)

// Order says in which order a section writes the blocks it selected.
// Selection is always by rank.
type Order string

// The write orders.
const (
	OrderRank     Order = "rank"     // best first
	OrderDeclared Order = "declared" // order of declaration to the engine
	OrderTime     Order = "time"     // last_modified ascending; undated first
)

// Defaults filled in when a template leaves a field out.
const (
	// DefaultVersion is the label of a template that gives none. It is
	// the label every template had to carry before labels were free, so
	// their fingerprints stay as they were.
	DefaultVersion   = "1.2"
	DefaultEncoding  = "o200k_base"
	DefaultSeparator = "\n"
	DefaultFill      = FillStop
	// DefaultHistoryFill is the fill of a section that takes history and
	// names none: one turn that does not fit must not end the
	// conversation, so the section goes on with older turns.
	DefaultHistoryFill      = FillSkip
	DefaultOrder            = OrderRank
	DefaultMinPartialTokens = 32
)

// MaxVersionLen is the longest template_version, in characters.
const MaxVersionLen = 64

// Encodings returns the encodings a template may name.
func Encodings() []string { return []string{"o200k_base", "cl100k_base"} }

// ErrInvalid is wrapped by every load error of this package.
var ErrInvalid = errors.New("template: invalid template")

// Problem is one thing wrong with a template.
type Problem struct {
	File    string // the name given to Parse or LoadFile; "" from Compile
	Line    int    // for JSON syntax errors; 0 otherwise
	Field   string // e.g. "budget", "sections[1].render"
	Message string // what is wrong, e.g. "must be a positive number of tokens (got 0)"
}

// String formats the problem as "file:line: field: message".
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// ValidationError lists every problem of a template. It wraps [ErrInvalid].
type ValidationError struct {
	// Problems are every problem found, at least one.
	Problems []Problem
}

// Error returns one problem a line.
func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = "template: " + p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns [ErrInvalid].
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// Definition is a template as written in JSON.
type Definition struct {
	// TemplateVersion (template_version) is the author's label for this
	// version of the template; empty means DefaultVersion.
	TemplateVersion string `json:"template_version"`
	// Budget is the most tokens the whole rendered context may have, header
	// line included.
	Budget int `json:"budget"`
	// Encoding names the tokenizer blocks are counted with: a built-in name,
	// "approx:FAMILY" or a tokenizer file's path; empty means DefaultEncoding.
	Encoding string `json:"encoding"`
	// CacheTTL (cache_ttl) is how long Anthropic keeps the prompt cache a
	// chat body's breakpoints write: "5m" (the API's default) or "1h";
	// empty means "5m". Left out of the canonical JSON unless "1h", so
	// templates without it keep their fingerprints (docs/chat.md).
	CacheTTL string `json:"cache_ttl,omitempty"`
	// Sections are the sections, written into the text in this order.
	Sections []SectionDefinition `json:"sections"`
	// Tools is the tools part (docs/tools.md); nil means none. Left out
	// of the canonical JSON when nil, so templates without it keep their
	// fingerprints.
	Tools *ToolsDefinition `json:"tools,omitempty"`
}

// SectionDefinition is one section as written in JSON. Separator is a
// pointer so that an explicit "" (blocks written back to back) differs from
// an absent separator (the default "\n").
type SectionDefinition struct {
	// Name names the section in events, the dump and the views; it is not
	// written into the text.
	Name string `json:"name"`
	// Priority ranks the section's importance, 1 first: it decides routing
	// and which section the budget cut starts from.
	Priority int `json:"priority"`
	// MemoryTypes (memory_types) are the memory types the section takes.
	MemoryTypes []declare.MemoryType `json:"memory_types"`
	// MaxTokens (max_tokens) is the section's token cap.
	MaxTokens int `json:"max_tokens"`
	// Render is how each block is written: {content}, and optionally
	// {request_id}, {memory_type} and {source_id}, in literal text.
	Render string `json:"render"`
	// Separator is written between two blocks of the section; nil means
	// DefaultSeparator.
	Separator *string `json:"separator"`
	// Fill says what the section does with the first block that does not
	// fit its cap; empty means DefaultFill, or DefaultHistoryFill for a
	// section that takes history.
	Fill Fill `json:"fill"`
	// Order is the order the section writes its selected blocks in; empty
	// means DefaultOrder.
	Order Order `json:"order"`
	// Partial lets the first block that does not fit be cut to the room left.
	Partial bool `json:"partial"`
	// MinPartialTokens (min_partial_tokens) is the least room worth cutting
	// a block for; 0 means DefaultMinPartialTokens.
	MinPartialTokens int `json:"min_partial_tokens"`
	// DegradeRequired lets the section write a required block as one of
	// its variants when it does not fit whole (docs/degrade.md). Left out
	// of the canonical JSON when false, so templates without it keep
	// their fingerprints.
	DegradeRequired bool `json:"degrade_required,omitempty"`
	// Relevance is the share of a block's score that its relevance to the
	// request's query takes, from 0 to 1 (docs/relevance.md); nil means
	// the engine's (truncate.Scoring.Relevance), 0 that relevance does
	// not count in this section. Recency is the weight of a history
	// block's recency in its score (nil: the engine's, 0: none), and
	// RecencyHalfAge (recency_half_age) the age at which it is ½ (nil:
	// the engine's). The three are left out of the canonical JSON when
	// nil, so templates without them keep their fingerprints.
	Relevance      *float64          `json:"relevance,omitempty"`
	Recency        *float64          `json:"recency,omitempty"`
	RecencyHalfAge *declare.Duration `json:"recency_half_age,omitempty"`
	// ToolResultMaxTokens (tool_result_max_tokens) clips the content of
	// each tool result in the section that sets no max_tokens of its own
	// (docs/chat.md): 0 means DefaultToolResultShare of the section's
	// max_tokens, NoToolResultClip (-1) that tool results are not clipped.
	// Left out of the canonical JSON when 0, so templates without it keep
	// their fingerprints.
	ToolResultMaxTokens int `json:"tool_result_max_tokens,omitempty"`
	// ClearToolResults (clear_tool_results), when set, lets the section
	// replace older tool results by a placeholder before it drops whole
	// turns (docs/chat.md). Left out of the canonical JSON when nil.
	ClearToolResults *ClearToolResults `json:"clear_tool_results,omitempty"`
}

// ClearToolResults says how a section clears older tool results.
type ClearToolResults struct {
	// Keep is how many of the newest tool results are never cleared; nil
	// means DefaultClearKeep, 0 that any may be.
	Keep *int `json:"keep,omitempty"`
	// AtLeast (at_least) is the fewest tokens a batch of clearing frees,
	// so that the prompt's prefix changes rarely; 0 means a quarter of
	// the section's max_tokens.
	AtLeast int `json:"at_least,omitempty"`
}

// DefaultClearKeep is how many of the newest tool results a section that
// clears keeps whole when its clear_tool_results sets no keep.
const DefaultClearKeep = 3

// DefaultToolResultShare is the share of its section's max_tokens a tool
// result is clipped to when the section sets no tool_result_max_tokens:
// one result never takes the whole history.
const DefaultToolResultShare = 0.5

// NoToolResultClip, as a section's tool_result_max_tokens, writes tool
// results whole (a result that does not fit is then skipped with its
// exchange, or fails the assembly when it is the current turn's).
const NoToolResultClip = -1

// MaxRecencyWeight bounds a section's recency weight: the score's other
// weights sum to 1 by default, and a weight a thousand times theirs is
// the same as all.
const MaxRecencyWeight = 1000

// LoadFile reads, validates and compiles a template file. A tokenizer
// file its encoding names must lie inside the template's directory.
func LoadFile(name string) (*Template, error) {
	data, err := readFile(name)
	if err != nil {
		return nil, err
	}
	return parse(data, name, true)
}

// Parse validates and compiles a template's JSON; name is used in problems.
// It reports every problem at once: a key given twice, in another case or
// unknown (with the nearest field), a value of the wrong type and every
// rule broken, each with its field's path and line. A UTF-8 byte-order mark
// is accepted.
func Parse(data []byte, name string) (*Template, error) { return parse(data, name, false) }

// Compile validates and compiles a template built in Go.
func Compile(def Definition) (*Template, error) { return compile(def, "", false) }

// withDefaults returns a deep copy of def with every default filled in.
func withDefaults(def Definition) Definition {
	out := def
	if out.TemplateVersion == "" {
		out.TemplateVersion = DefaultVersion
	}
	if out.Encoding == "" {
		out.Encoding = DefaultEncoding
	}
	if out.CacheTTL == "5m" {
		out.CacheTTL = "" // the default: the same template
	}
	out.Tools = cloneTools(def.Tools)
	out.Sections = make([]SectionDefinition, len(def.Sections))
	for i, s := range def.Sections {
		s.MemoryTypes = slices.Clone(s.MemoryTypes)
		if s.Separator == nil {
			sep := DefaultSeparator
			s.Separator = &sep
		} else {
			sep := *s.Separator
			s.Separator = &sep
		}
		if s.Fill == "" {
			s.Fill = DefaultFill
			if slices.Contains(s.MemoryTypes, declare.History) {
				s.Fill = DefaultHistoryFill
			}
		}
		if s.Order == "" {
			s.Order = DefaultOrder
		}
		if s.MinPartialTokens == 0 {
			s.MinPartialTokens = DefaultMinPartialTokens
		}
		s.Relevance, s.Recency, s.RecencyHalfAge = clonePtr(s.Relevance), clonePtr(s.Recency), clonePtr(s.RecencyHalfAge)
		if c := s.ClearToolResults; c != nil {
			s.ClearToolResults = &ClearToolResults{Keep: clonePtr(c.Keep), AtLeast: c.AtLeast}
		}
		out.Sections[i] = s
	}
	return out
}

func compile(def Definition, name string, confined bool) (*Template, error) {
	def = withDefaults(def)
	var probs []Problem
	add := func(field, format string, args ...any) {
		probs = append(probs, Problem{File: name, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if !validVersion(def.TemplateVersion) {
		add("template_version", "must be a label of 1 to %d printable characters, such as \"2.0\" or \"2026-11-checkout\" (got %q)", MaxVersionLen, def.TemplateVersion)
	}
	if def.Budget <= 0 {
		add("budget", "must be a positive number of tokens (got %d)", def.Budget)
	}
	encoding, tokenizerFile, problem := resolveEncoding(def.Encoding, name, confined)
	if problem != "" {
		add("encoding", "%s", problem)
	}
	if def.CacheTTL != "" && def.CacheTTL != "5m" && def.CacheTTL != "1h" {
		add("cache_ttl", "must be \"5m\" or \"1h\" (got %q)", def.CacheTTL)
	}
	if len(def.Sections) == 0 {
		add("sections", "a template needs at least one section")
	}
	toolsProblems(def.Tools, add)
	t := &Template{def: def, sections: make([]Section, len(def.Sections))}
	seen := make(map[string]int, len(def.Sections))
	for i, sd := range def.Sections {
		field := func(f string) string { return fmt.Sprintf("sections[%d].%s", i, f) }
		if sd.Name == "" {
			add(field("name"), "is required")
		} else if j, dup := seen[sd.Name]; dup {
			add(field("name"), "duplicate section name %q (also sections[%d])", sd.Name, j)
		} else {
			seen[sd.Name] = i
		}
		checkSectionShape(i, sd, field, add)
		checkSectionTuning(sd, field, add)
		pieces, err := parseRender(sd.Render)
		if err != nil {
			add(field("render"), "%v", err)
		}
		if strings.Contains(sd.Render, delimit.Joiner) {
			add(field("render"), "must not contain U+2060 WORD JOINER (used to neutralise content)")
		}
		if strings.Contains(*sd.Separator, delimit.Joiner) {
			add(field("separator"), "must not contain U+2060 WORD JOINER (used to neutralise content)")
		}
		t.sections[i] = Section{def: sd, index: i, pieces: pieces, separator: *sd.Separator}
	}
	if len(probs) == 0 {
		t.protected = delimiters(t.sections, add)
	}
	if len(probs) > 0 {
		return nil, &ValidationError{Problems: probs}
	}
	t.finish()
	t.encoding, t.tokenizerFile = encoding, tokenizerFile
	canonDef := def
	canonDef.Encoding = encoding // a file's identity, not its path
	canon, err := fingerprint.Canonical(canonDef)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	t.fingerprint = fingerprint.Sum(canon)
	// Each key hashes canon, then the section's number: canon is hashed
	// once and the hash cloned per section, not hashed again for each
	// (8,000 sections took a minute).
	base := sha256.New()
	base.Write(canon)
	for i := range t.sections {
		h, err := base.(hash.Cloner).Clone()
		if err != nil {
			return nil, fmt.Errorf("template: %w", err)
		}
		fmt.Fprintf(h, "\x00section %d", i)
		copy(t.sections[i].key[:], h.Sum(nil))
	}
	t.header = fingerprint.Header(t.fingerprint)
	return t, nil
}

// problemFunc adds a problem about a field.
type problemFunc func(field, format string, args ...any)

// checkSectionShape checks section i's priority, memory types, cap, fill
// and order.
func checkSectionShape(i int, sd SectionDefinition, field func(string) string, add problemFunc) {
	if sd.Priority < 1 {
		add(field("priority"), "must be 1 or more; 1 is the most important (got %d)", sd.Priority)
	}
	if len(sd.MemoryTypes) == 0 {
		add(field("memory_types"), "a section must take at least one memory type")
	}
	for j, mt := range sd.MemoryTypes {
		if !mt.Valid() {
			add(fmt.Sprintf("sections[%d].memory_types[%d]", i, j), "unknown memory type %q (want constraint, context, history or external)", mt)
		} else if slices.Index(sd.MemoryTypes, mt) < j {
			add(fmt.Sprintf("sections[%d].memory_types[%d]", i, j), "memory type %q listed twice", mt)
		}
	}
	if sd.MaxTokens <= 0 {
		add(field("max_tokens"), "must be a positive number of tokens (got %d)", sd.MaxTokens)
	}
	if sd.Fill != FillStop && sd.Fill != FillSkip {
		add(field("fill"), "must be stop or skip (got %q)", sd.Fill)
	}
	if sd.Order != OrderRank && sd.Order != OrderDeclared && sd.Order != OrderTime {
		add(field("order"), "must be rank, declared or time (got %q)", sd.Order)
	}
}

// checkSectionTuning checks a section's optional settings: partial cuts,
// tool results, and its scoring.
func checkSectionTuning(sd SectionDefinition, field func(string) string, add problemFunc) {
	if sd.MinPartialTokens < 0 {
		add(field("min_partial_tokens"), "must not be negative (got %d)", sd.MinPartialTokens)
	}
	if c := sd.ClearToolResults; c != nil {
		if c.Keep != nil && *c.Keep < 0 {
			add(field("clear_tool_results.keep"), "must not be negative (got %d)", *c.Keep)
		}
		if c.AtLeast < 0 {
			add(field("clear_tool_results.at_least"), "must not be negative (got %d)", c.AtLeast)
		}
	}
	if sd.ToolResultMaxTokens < NoToolResultClip {
		add(field("tool_result_max_tokens"), "must be a positive number of tokens, or -1 for no clip (got %d)", sd.ToolResultMaxTokens)
	}
	if v := sd.Relevance; v != nil && !(*v >= 0 && *v <= 1) {
		add(field("relevance"), "must be a share from 0 to 1 (got %v)", *v)
	}
	if v := sd.Recency; v != nil && !(*v >= 0 && *v <= MaxRecencyWeight) {
		add(field("recency"), "must be a weight from 0 to %d (got %v)", MaxRecencyWeight, *v)
	}
	if v := sd.RecencyHalfAge; v != nil && *v <= 0 {
		add(field("recency_half_age"), "must be a positive duration such as \"2h\" (got %v)", time.Duration(*v))
	}
}

// placeholder names; the values are what a Fields field fills them with.
const (
	phContent    = "content"
	phRequestID  = "request_id"
	phMemoryType = "memory_type"
	phSourceID   = "source_id"
)

type pieceKind uint8

const (
	literal pieceKind = iota
	content
	requestID
	memoryType
	sourceID
)

type piece struct {
	kind pieceKind
	text string // for literals
}

// parseRender splits a render string into literal pieces and placeholders.
func parseRender(render string) ([]piece, error) {
	var (
		pieces   []piece
		lit      strings.Builder
		contents int
	)
	for i := 0; i < len(render); {
		if render[i] == '{' {
			if name, ok := placeholderAt(render[i+1:]); ok {
				var k pieceKind
				switch name {
				case phContent:
					k = content
					contents++
				case phRequestID:
					k = requestID
				case phMemoryType:
					k = memoryType
				case phSourceID:
					k = sourceID
				default:
					return nil, fmt.Errorf("unknown placeholder {%s} (want {content}, {request_id}, {memory_type} or {source_id})", name)
				}
				if lit.Len() > 0 {
					pieces = append(pieces, piece{kind: literal, text: lit.String()})
					lit.Reset()
				}
				pieces = append(pieces, piece{kind: k})
				i += len(name) + 2
				continue
			}
		}
		lit.WriteByte(render[i])
		i++
	}
	if lit.Len() > 0 {
		pieces = append(pieces, piece{kind: literal, text: lit.String()})
	}
	if contents != 1 {
		return nil, fmt.Errorf("must contain {content} exactly once (found %d)", contents)
	}
	return pieces, nil
}

// placeholderAt reports whether s starts with "name}" for an identifier name.
func placeholderAt(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '}':
			return s[:i], i > 0
		case c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
		case '0' <= c && c <= '9' && i > 0:
		default:
			return "", false
		}
	}
	return "", false
}

// validVersion reports whether v is a usable template_version: the
// template author's own label, short and printable (it is written in
// errors and dumps, never into the rendered text).
func validVersion(v string) bool {
	if v == "" || utf8.RuneCountInString(v) > MaxVersionLen {
		return false
	}
	for _, r := range v {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return utf8.ValidString(v)
}

// clonePtr returns a pointer to a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
