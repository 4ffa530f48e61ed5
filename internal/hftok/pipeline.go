package hftok

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// span is a stretch of text on its way through the pipeline: its current
// form s and, when the caller tracks offsets (to cut), where each byte
// offset of s lies in the original text.
type span struct {
	s string
	// back[i] is the original offset of offset i of s (len(s)+1 entries),
	// -1 where s and the original do not line up (inside a character a
	// normalizer rewrote). nil means s is the original from base on.
	back []int32
	base int32
}

// orig returns the original offset of offset i of s, or -1.
func (sp span) orig(i int) int32 {
	if sp.back == nil {
		return sp.base + int32(i)
	}
	return sp.back[i]
}

// sub returns the span of s[a:b].
func (sp span) sub(a, b int) span {
	if sp.back == nil {
		return span{s: sp.s[a:b], base: sp.base + int32(a)}
	}
	return span{s: sp.s[a:b], back: sp.back[a : b+1]}
}

// builder assembles a rewritten span.
type builder struct {
	track bool
	out   strings.Builder
	back  []int32
}

// keep appends s[a:b] of sp unchanged.
func (b *builder) keep(sp span, a, c int) {
	if b.track {
		for i := a; i < c; i++ {
			b.back = append(b.back, sp.orig(i))
		}
	}
	b.out.WriteString(sp.s[a:c])
}

// write appends text that stands for the original from offset at on.
func (b *builder) write(text string, at int32) {
	if text == "" {
		return
	}
	if b.track {
		b.back = append(b.back, at)
		for range len(text) - 1 {
			b.back = append(b.back, -1)
		}
	}
	b.out.WriteString(text)
}

func (b *builder) done(sp span) span {
	if !b.track {
		return span{s: b.out.String(), base: sp.base}
	}
	b.back = append(b.back, sp.orig(len(sp.s)))
	return span{s: b.out.String(), back: b.back}
}

// A normalizer rewrites a span.
type normalizer interface {
	normalize(sp span, track bool, sc *scratch) span
}

type unicodeNorm struct{ form norm.Form }

func (u unicodeNorm) normalize(sp span, track bool, _ *scratch) span {
	if u.form.IsNormalString(sp.s) {
		return sp
	}
	// Segment by segment whether tracked or not: on invalid UTF-8,
	// Form.String and the segments do not always agree.
	b := builder{track: track}
	var it norm.Iter
	it.InitString(u.form, sp.s)
	for !it.Done() {
		start := it.Pos()
		seg := it.Next()
		if len(seg) > 0 {
			b.write(string(seg), sp.orig(start))
		}
	}
	return b.done(sp)
}

type sequenceNorm []normalizer

func (q sequenceNorm) normalize(sp span, track bool, sc *scratch) span {
	for _, n := range q {
		sp = n.normalize(sp, track, sc)
	}
	return sp
}

type replaceNorm struct {
	pat  matcher
	with string
}

func (r replaceNorm) normalize(sp span, track bool, sc *scratch) span {
	b := builder{track: track}
	last, matched := 0, false
	for _, m := range r.pat.matches(nil, sp.s, sc) {
		b.keep(sp, last, m.start)
		b.write(r.with, sp.orig(m.start))
		last, matched = m.end, true
	}
	if !matched {
		return sp
	}
	b.keep(sp, last, len(sp.s))
	return b.done(sp)
}

type prependNorm string

func (p prependNorm) normalize(sp span, track bool, _ *scratch) span {
	if sp.s == "" || p == "" {
		return sp
	}
	b := builder{track: track}
	b.write(string(p), sp.orig(0))
	b.keep(sp, 0, len(sp.s))
	return b.done(sp)
}

// A matcher appends to dst the non-empty, non-overlapping matches of a
// pattern in s, in order. A regex charges its time to sc's budget (nil, or
// a zero budget: only its own MatchTimeout bounds it).
type matcher interface {
	matches(dst []match, s string, sc *scratch) []match
}

// match is the byte offsets where a match starts and ends.
type match struct{ start, end int }

// literal matches a string.
type literal string

func (l literal) matches(dst []match, s string, _ *scratch) []match {
	if l == "" {
		return dst
	}
	for at := 0; ; {
		i := strings.Index(s[at:], string(l))
		if i < 0 {
			return dst
		}
		dst = append(dst, match{at + i, at + i + len(l)})
		at += i + len(l)
	}
}

// runeClass matches each character of a class on its own.
type runeClass func(rune) bool

func (c runeClass) matches(dst []match, s string, _ *scratch) []match {
	for i, r := range s {
		if c(r) {
			dst = append(dst, match{i, i + utf8.RuneLen(r)})
		}
	}
	return dst
}

// isNumeric is Rust's char::is_numeric: general categories Nd, Nl and No.
func isNumeric(r rune) bool { return unicode.IsNumber(r) }

// behavior says what a split does with the matches of its pattern.
type behavior uint8

const (
	removed behavior = iota
	isolated
	mergedWithPrevious
	mergedWithNext
	contiguous
)

// A preStep is one pre-tokenizer: it splits (and may rewrite) a span into
// pieces, appended to out. sc is scratch it may use (nil: its own).
type preStep interface {
	split(sp span, track bool, out []span, sc *scratch) []span
}

// scratch is the reusable memory of one encode: the pieces before and after
// a step, and a split's parts; and the time its regex matches may take,
// from when the first started (see regex.go).
type scratch struct {
	cur, next []span
	parts     []part
	matches   []match
	started   time.Time
	budget    time.Duration
}

type splitStep struct {
	pat      matcher
	behavior behavior
	invert   bool
}

// part is a stretch of a span and whether it matched the pattern.
type part struct {
	start, end int
	match      bool
}

func (st splitStep) split(sp span, track bool, out []span, sc *scratch) []span {
	if sp.s == "" {
		return out
	}
	if sc == nil {
		sc = new(scratch)
	}
	// The stretches of s, matches and the gaps between them, in order.
	sc.matches = st.pat.matches(sc.matches[:0], sp.s, sc)
	parts := sc.parts[:0]
	last := 0
	for _, m := range sc.matches {
		if m.start > last {
			parts = append(parts, part{last, m.start, st.invert})
		}
		parts = append(parts, part{m.start, m.end, !st.invert})
		last = m.end
	}
	if last < len(sp.s) {
		parts = append(parts, part{last, len(sp.s), st.invert})
	}
	emit := func(p part) {
		if p.end > p.start {
			out = append(out, sp.sub(p.start, p.end))
		}
	}
	switch st.behavior {
	case isolated:
		for _, p := range parts {
			emit(p)
		}
	case removed:
		for _, p := range parts {
			if !p.match {
				emit(p)
			}
		}
	case contiguous, mergedWithPrevious:
		var acc []part
		prev := false
		for _, p := range parts {
			join := p.match == prev
			if st.behavior == mergedWithPrevious {
				join = p.match && !prev
			}
			if join && len(acc) > 0 {
				acc[len(acc)-1].end = p.end
			} else {
				acc = append(acc, p)
			}
			prev = p.match
		}
		for _, p := range acc {
			emit(p)
		}
	case mergedWithNext:
		var acc []part // built backwards
		prev := false
		for i := len(parts) - 1; i >= 0; i-- {
			p := parts[i]
			if p.match && !prev && len(acc) > 0 {
				acc[len(acc)-1].start = p.start
			} else {
				acc = append(acc, p)
			}
			prev = p.match
		}
		for i := len(acc) - 1; i >= 0; i-- {
			emit(acc[i])
		}
	}
	sc.parts = parts[:0]
	return out
}

// byteLevelStep is ByteLevel: an optional prefix space and GPT-2's split.
// Mapping bytes to the byte-level alphabet is left to the model, which
// looks pieces up by their raw bytes.
type byteLevelStep struct {
	addPrefixSpace bool
	regex          *splitStep // nil unless use_regex
}

func (st byteLevelStep) split(sp span, track bool, out []span, sc *scratch) []span {
	if sp.s == "" {
		return out // the pipeline has no empty pieces
	}
	if st.addPrefixSpace && !strings.HasPrefix(sp.s, " ") {
		b := builder{track: track}
		b.write(" ", sp.orig(0))
		b.keep(sp, 0, len(sp.s))
		sp = b.done(sp)
	}
	if st.regex == nil {
		if sp.s != "" {
			out = append(out, sp)
		}
		return out
	}
	return st.regex.split(sp, track, out, sc)
}

type prependScheme uint8

const (
	prependAlways prependScheme = iota
	prependFirst
	prependNever
)

// metaspaceStep is Metaspace: spaces become the replacement character, which
// may be prepended, and pieces start at each replacement character.
type metaspaceStep struct {
	replacement string
	scheme      prependScheme
	splits      bool
}

func (st metaspaceStep) split(sp span, track bool, out []span, sc *scratch) []span {
	if sp.s == "" {
		return out // the pipeline has no empty pieces
	}
	b := builder{track: track}
	first := sp.orig(0) == 0
	if !strings.HasPrefix(sp.s, st.replacement) && !strings.HasPrefix(sp.s, " ") &&
		(st.scheme == prependAlways || (st.scheme == prependFirst && first)) {
		b.write(st.replacement, sp.orig(0))
	}
	last := 0
	for _, m := range literal(" ").matches(nil, sp.s, nil) {
		b.keep(sp, last, m.start)
		b.write(st.replacement, sp.orig(m.start))
		last = m.end
	}
	b.keep(sp, last, len(sp.s))
	sp = b.done(sp)
	if !st.splits {
		if sp.s != "" {
			out = append(out, sp)
		}
		return out
	}
	return splitStep{pat: literal(st.replacement), behavior: mergedWithNext}.split(sp, track, out, sc)
}
