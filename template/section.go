package template

import (
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/fingerprint"
	"github.com/contextasm/contextasm/internal/delimit"
)

// Template is a compiled template. It is immutable and safe for concurrent
// use.
type Template struct {
	def         Definition
	sections    []Section // in file order
	byPriority  []int     // section indices, most important first; ties in file order
	typeSection [declare.NumMemoryTypes]int
	protected   []string
	fingerprint string
	header      string
	// encoding is the canonical encoding: the name, or a tokenizer file's
	// identity; tokenizerFile is that file's path.
	encoding, tokenizerFile string
}

// finish derives the lookup tables once validation has passed.
func (t *Template) finish() {
	t.byPriority = make([]int, len(t.sections))
	for i := range t.byPriority {
		t.byPriority[i] = i
	}
	slices.SortStableFunc(t.byPriority, func(a, b int) int {
		return t.sections[a].def.Priority - t.sections[b].def.Priority
	})
	for ti, mt := range declare.MemoryTypes() {
		t.typeSection[ti] = -1
		for _, si := range t.byPriority {
			if slices.Contains(t.sections[si].def.MemoryTypes, mt) {
				t.typeSection[ti] = si
				break
			}
		}
	}
	m := delimit.NewMatcher(t.protected) // once: it costs the delimiters' length
	for i := range t.sections {
		t.sections[i].protected = m
	}
}

// Budget returns the most tokens the whole rendering may have.
func (t *Template) Budget() int { return t.def.Budget }

// Encoding returns the token encoding: a built-in name, an approximate
// encoding ("approx:claude"), or the identity of the tokenizer file the
// template names ("sha256:" and hex; see TokenizerFile).
func (t *Template) Encoding() string { return t.encoding }

// CacheTTL returns the template's cache_ttl: "1h", or "" for the API's
// default of 5 minutes.
func (t *Template) CacheTTL() string { return t.def.CacheTTL }

// Version returns the template's version label: its author's own, such as
// "2.0" (DefaultVersion when the file gives none). It enters the
// fingerprint; it is not the protocol version of the header.
func (t *Template) Version() string { return t.def.TemplateVersion }

// Fingerprint returns "sha256:" and 16 hex digits identifying the template.
func (t *Template) Fingerprint() string { return t.fingerprint }

// Header returns the protocol header line that opens every rendering.
func (t *Template) Header() string { return t.header }

// Definition returns a copy of the template's definition, defaults filled in.
func (t *Template) Definition() Definition { return withDefaults(t.def) }

// Canonical returns the canonical JSON the fingerprint is computed over.
func (t *Template) Canonical() []byte {
	def := t.def
	def.Encoding = t.encoding          // a tokenizer file's identity, not its path
	c, _ := fingerprint.Canonical(def) // cannot fail: it did at compile time
	return c
}

// NumSections returns the number of sections.
func (t *Template) NumSections() int { return len(t.sections) }

// Section returns section i, in file order (the order sections are written).
func (t *Template) Section(i int) *Section { return &t.sections[i] }

// ByPriority returns the index of the k-th most important section
// (k = 0 is the most important). Cutting goes from the last one.
func (t *Template) ByPriority(k int) int { return t.byPriority[k] }

// SectionFor returns the index of the section that takes blocks of type mt:
// the first in priority order that lists it. ok is false when none does.
func (t *Template) SectionFor(mt declare.MemoryType) (i int, ok bool) {
	for ti, m := range declare.MemoryTypes() {
		if m == mt {
			i = t.typeSection[ti]
			return i, i >= 0
		}
	}
	return -1, false
}

// Protected returns the strings that block content must not contain
// verbatim: the header opening and every protected delimiter.
func (t *Template) Protected() []string { return slices.Clone(t.protected) }

// WithBudget returns a copy of t with another budget. Its fingerprint
// differs: the budget is part of what the template means.
func (t *Template) WithBudget(budget int) (*Template, error) {
	def := t.Definition()
	def.Budget = budget
	if t.tokenizerFile != "" {
		def.Encoding = t.tokenizerFile
	}
	return Compile(def)
}

// WithClearToolResults returns a copy of t whose sections that take
// history clear older tool results as c says (clear_tool_results), or,
// for a nil c, do not clear them: what an adapter's option sets for its
// requests. Its fingerprint differs when the clearing does. A template
// with no history section is returned as it is.
func (t *Template) WithClearToolResults(c *ClearToolResults) (*Template, error) {
	def := t.Definition()
	changed := false
	for i := range def.Sections {
		if slices.Contains(def.Sections[i].MemoryTypes, declare.History) {
			def.Sections[i].ClearToolResults = nil
			if c != nil {
				def.Sections[i].ClearToolResults = &ClearToolResults{Keep: clonePtr(c.Keep), AtLeast: c.AtLeast}
			}
			changed = true
		}
	}
	if !changed {
		return t, nil
	}
	if t.tokenizerFile != "" {
		def.Encoding = t.tokenizerFile
	}
	return Compile(def)
}

// Section is one compiled section of a [Template].
type Section struct {
	key       [16]byte
	def       SectionDefinition
	index     int
	pieces    []piece
	separator string
	protected *delimit.Matcher // the template's delimiters
}

// Fields are the values a render string's placeholders are filled with.
type Fields struct {
	Content    string // {content}: the block's content
	RequestID  string // {request_id}: the block's request_id
	MemoryType string // {memory_type}: the block's memory_type
	SourceID   string // {source_id}: the block's provenance.source_id, or ""
}

// Key identifies how the section renders a block: the same key means the
// same render string, separator and protected delimiters (it is derived from
// the template's canonical JSON and the section's index), so a cache may
// keep a rendered block's token count under it.
func (s *Section) Key() [16]byte { return s.key }

// Name returns the section's name.
func (s *Section) Name() string { return s.def.Name }

// Index returns the section's position in the template's file order.
func (s *Section) Index() int { return s.index }

// Priority returns the section's priority; 1 is the most important.
func (s *Section) Priority() int { return s.def.Priority }

// MaxTokens returns the section's token cap.
func (s *Section) MaxTokens() int { return s.def.MaxTokens }

// Fill returns what the section does with a block that does not fit.
func (s *Section) Fill() Fill { return s.def.Fill }

// Order returns the order the section writes its blocks in.
func (s *Section) Order() Order { return s.def.Order }

// Partial reports whether the first misfit may be cut to fit.
func (s *Section) Partial() bool { return s.def.Partial }

// MinPartialTokens returns the least room worth cutting a block for.
func (s *Section) MinPartialTokens() int { return s.def.MinPartialTokens }

// ToolResultMaxTokens returns what a tool result of the section that sets
// no max_tokens of its own is clipped to, in tokens; 0 when it is not
// clipped.
func (s *Section) ToolResultMaxTokens() int {
	switch n := s.def.ToolResultMaxTokens; {
	case n == NoToolResultClip:
		return 0
	case n > 0:
		return n
	}
	return max(1, int(DefaultToolResultShare*float64(s.def.MaxTokens)))
}

// ClearToolResults reports whether the section clears older tool results
// before it drops turns, how many of the newest it keeps whole, and the
// fewest tokens a batch of clearing frees.
func (s *Section) ClearToolResults() (on bool, keep, atLeast int) {
	c := s.def.ClearToolResults
	if c == nil {
		return false, 0, 0
	}
	keep, atLeast = DefaultClearKeep, c.AtLeast
	if c.Keep != nil {
		keep = *c.Keep
	}
	if atLeast == 0 {
		atLeast = max(1, s.def.MaxTokens/4)
	}
	return true, keep, atLeast
}

// DegradeRequired reports whether a required block of the section may be
// written as one of its variants when it does not fit whole.
func (s *Section) DegradeRequired() bool { return s.def.DegradeRequired }

// Separator returns the text written between two blocks of the section.
func (s *Section) Separator() string { return s.separator }

// FixedEdges returns how many bytes every block the section renders starts
// and ends with that are literal text of its render string (not a value).
func (s *Section) FixedEdges() (prefix, suffix int) {
	if s.pieces[0].kind == literal {
		prefix = len(s.pieces[0].text)
	}
	if last := s.pieces[len(s.pieces)-1]; last.kind == literal {
		suffix = len(last.text)
	}
	return prefix, suffix
}

// MemoryTypes returns the memory types the section lists.
func (s *Section) MemoryTypes() []declare.MemoryType { return slices.Clone(s.def.MemoryTypes) }

// AppendRender appends one block rendered by the section's render string
// to dst. Every value filled in is neutralised first: content (and ids,
// which MCP servers choose) cannot forge the protocol header or any
// section's delimiter. escaped reports whether neutralising changed a value.
func (s *Section) AppendRender(dst []byte, f Fields) (out []byte, escaped bool) {
	start := len(dst)
	for i, p := range s.pieces {
		if p.kind == literal {
			dst = append(dst, p.text...)
			continue
		}
		// What stands before the value is all of the block so far, not just
		// the literal piece before it: in "<<{source_id}{content}>>" a
		// source id ">" and content ">x" would otherwise forge ">>".
		var before string
		switch {
		case i == 1 && s.pieces[0].kind == literal:
			before = s.pieces[0].text // what dst[start:] holds, without a copy
		case i > 0:
			before = string(dst[start:])
		}
		var changed bool
		dst, changed = s.protected.Neutralize(dst, f.value(p.kind), before, s.following(i, f))
		escaped = escaped || changed
	}
	return dst, escaped
}

// value returns the field a placeholder of kind k is filled with.
func (f *Fields) value(k pieceKind) string {
	switch k {
	case content:
		return f.Content
	case requestID:
		return f.RequestID
	case memoryType:
		return f.MemoryType
	case sourceID:
		return f.SourceID
	}
	return ""
}

// following returns the literal text that will follow piece i up to the
// next non-empty value (whose own check sees everything before it). It is
// the next literal piece, without a copy, unless an empty value sits
// between two literals.
func (s *Section) following(i int, f Fields) string {
	var out string
	for _, p := range s.pieces[i+1:] {
		if p.kind == literal {
			out += p.text
		} else if f.value(p.kind) != "" {
			break
		}
	}
	return out
}

// delimiters returns the strings block content must not contain verbatim:
// the header's opening and every literal of every section's render string
// and separator (see package internal/delimit). A literal that cannot be
// protected is a problem reported through add.
func delimiters(sections []Section, add func(field, format string, args ...any)) []string {
	var set delimit.Set
	set.Add(fingerprint.HeaderPrefix)
	said := map[string]bool{}
	refuse := func(field, lone string) {
		if !said[field+"\x00"+lone] {
			said[field+"\x00"+lone] = true
			add(field, unprotectable, lone)
		}
	}
	for i := range sections {
		s := &sections[i]
		// What always stands right before a block and right after it: the
		// line break of the section's start or end, or the separator.
		var before, after []string
		if s.separator != "" {
			first, _ := utf8.DecodeRuneInString(s.separator)
			last, _ := utf8.DecodeLastRuneInString(s.separator)
			before = uniq("\n", string(last))
			after = uniq("\n", string(first))
		}
		for j, p := range s.pieces {
			if p.kind != literal {
				continue
			}
			var b, a []string
			if j == 0 {
				b = before
			}
			if j == len(s.pieces)-1 {
				a = after
			}
			if lone := set.AddLiteral(p.text, b, a); lone != "" {
				refuse(fmt.Sprintf("sections[%d].render", i), lone)
			}
		}
		if lone := set.AddLiteral(s.separator, nil, nil); lone != "" {
			refuse(fmt.Sprintf("sections[%d].separator", i), lone)
		}
	}
	return set.List()
}

const unprotectable = "the literal %q is a lone character that block content could forge, " +
	"and nothing fixed stands beside it to protect it with: put a space or a line break next to it, or make it two characters"

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

// Relevance returns the section's relevance share and true, or false when
// the template leaves it to the engine.
func (s *Section) Relevance() (float64, bool) {
	if s.def.Relevance == nil {
		return 0, false
	}
	return *s.def.Relevance, true
}

// Recency returns the section's recency weight and true, or false when
// the template leaves it to the engine.
func (s *Section) Recency() (float64, bool) {
	if s.def.Recency == nil {
		return 0, false
	}
	return *s.def.Recency, true
}

// RecencyHalfAge returns the section's recency half-age and true, or false
// when the template leaves it to the engine.
func (s *Section) RecencyHalfAge() (time.Duration, bool) {
	if s.def.RecencyHalfAge == nil {
		return 0, false
	}
	return time.Duration(*s.def.RecencyHalfAge), true
}
