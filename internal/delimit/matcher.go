package delimit

import (
	"slices"
	"unicode/utf8"
)

// Matcher finds the protected strings of a template in text in time
// linear in the text, whatever their number: a template of 8,000 sections
// protects some 16,000 literals, and scanning for each of them in every
// block made an assembly cost blocks × literals. It holds two
// Aho-Corasick automata built once: one over the strings, to tell whether
// one crosses a join, and one over the strings reversed, to find where
// occurrences start. A Matcher is immutable and safe for concurrent use.
//
// For a few strings, one vectorised search for each is faster than the
// automaton's step per byte, so a Matcher of at most scanMax strings
// searches for each, as [Neutralize] does.
type Matcher struct {
	protected []string
	auto      bool // the automata, not a search per string
	fwd, rev  automaton
	maxLen    int // the longest string's bytes
}

// scanMax is the most strings a Matcher searches for one by one: on clean
// text, some 128 searches cost what one scan by the automaton does
// (BenchmarkMatcher: 64 searches take half of it, 1,000 seven times it).
const scanMax = 128

// NewMatcher builds the Matcher of protected strings (see [Neutralize]).
func NewMatcher(protected []string) *Matcher { return newMatcher(protected, len(protected) > scanMax) }

func newMatcher(protected []string, auto bool) *Matcher {
	m := &Matcher{protected: slices.Clone(protected), auto: auto}
	if !auto {
		return m
	}
	rev := make([]string, len(protected))
	for i, p := range protected {
		m.maxLen = max(m.maxLen, len(p))
		b := []byte(p)
		for l, r := 0, len(b)-1; l < r; l, r = l+1, r-1 {
			b[l], b[r] = b[r], b[l]
		}
		rev[i] = string(b)
	}
	m.fwd.build(protected)
	m.rev.build(rev)
	return m
}

// automaton is an Aho-Corasick automaton: a trie of the strings with a
// failure link per node to the longest proper suffix of its string that is
// also a node, and for each node the longest string that ends there (0:
// none), its own or a suffix's.
type automaton struct {
	nodes []acNode
	root  [256]int32 // the root's transitions, every byte (0: back to root)
}

type acNode struct {
	edges   []acEdge // sorted by byte
	fail    int32
	longest int32
}

type acEdge struct {
	b    byte
	next int32
}

func (a *automaton) child(n int32, b byte) int32 {
	if n == 0 {
		return a.root[b]
	}
	e := a.nodes[n].edges
	lo, hi := 0, len(e)
	for lo < hi { // a binary search, by hand: this is the hot loop
		mid := int(uint(lo+hi) >> 1)
		if e[mid].b < b {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(e) && e[lo].b == b {
		return e[lo].next
	}
	return -1
}

func (a *automaton) build(strs []string) {
	a.nodes = []acNode{{}}
	for _, s := range strs {
		n := int32(0)
		for i := 0; i < len(s); i++ {
			next := int32(-1)
			if n == 0 {
				if c := a.root[s[i]]; c != 0 {
					next = c
				}
			} else {
				next = a.child(n, s[i])
			}
			if next < 0 {
				next = int32(len(a.nodes))
				a.nodes = append(a.nodes, acNode{})
				if n == 0 {
					a.root[s[i]] = next
				} else {
					e := a.nodes[n].edges
					j := 0
					for j < len(e) && e[j].b < s[i] {
						j++
					}
					e = append(e, acEdge{})
					copy(e[j+1:], e[j:])
					e[j] = acEdge{b: s[i], next: next}
					a.nodes[n].edges = e
				}
			}
			n = next
		}
		a.nodes[n].longest = max(a.nodes[n].longest, int32(len(s)))
	}
	// Failure links and longest, breadth first.
	queue := make([]int32, 0, len(a.nodes))
	for b := range 256 {
		if c := a.root[b]; c != 0 {
			queue = append(queue, c) // fail 0
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if f := a.nodes[a.nodes[n].fail].longest; a.nodes[n].longest == 0 {
			a.nodes[n].longest = f
		}
		for _, e := range a.nodes[n].edges {
			a.nodes[e.next].fail = a.step(a.nodes[n].fail, e.b)
			queue = append(queue, e.next)
		}
	}
}

// step is the transition from node n on byte b.
func (a *automaton) step(n int32, b byte) int32 {
	for n != 0 {
		if c := a.child(n, b); c >= 0 {
			return c
		}
		n = a.nodes[n].fail
	}
	return a.root[b]
}

// Neutralize is [Neutralize] with the Matcher's strings: s appended to dst
// with a joiner after the first character of every occurrence, and at its
// edges where one would form across them with before or after. It reports
// whether it changed anything. It allocates only to grow dst.
func (m *Matcher) Neutralize(dst []byte, s, before, after string) ([]byte, bool) {
	if !m.auto {
		return scanNeutralize(dst, s, before, after, m.protected)
	}
	if m.maxLen == 0 {
		return append(dst, s...), false
	}
	headBreak := m.crossesStart(before, s, after)
	tailBreak := m.crossesEnd(s, after)
	changed := headBreak || tailBreak
	if headBreak {
		dst = append(dst, Joiner...)
	}
	// Where occurrences start, found right to left by the reversed
	// strings: each start gets a joiner after its first character, which
	// breaks every string starting there. One pass counts them, a second
	// spreads s out from its end, a joiner at each, in place.
	joiners := 0
	n := int32(0)
	for i := len(s) - 1; i >= 0; i-- {
		if n = m.rev.step(n, s[i]); m.rev.nodes[n].longest > 0 {
			joiners++
		}
	}
	if joiners == 0 {
		dst = append(dst, s...)
		if tailBreak {
			dst = append(dst, Joiner...)
		}
		return dst, changed
	}
	start := len(dst)
	grow := joiners * len(Joiner)
	dst = slices.Grow(dst, len(s)+grow)[:start+len(s)+grow]
	copy(dst[start:], s)
	w, r := len(dst), len(s) // dst[w:] is written; s[r:] is placed
	n = 0
	for i := len(s) - 1; i >= 0; i-- {
		if n = m.rev.step(n, s[i]); m.rev.nodes[n].longest == 0 {
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		e := i + size
		w -= r - e
		copy(dst[w:], s[e:r])
		w -= len(Joiner)
		copy(dst[w:], Joiner)
		r = e
	}
	if tailBreak {
		dst = append(dst, Joiner...)
	}
	return dst, true
}

// NeedsNeutralizing reports whether [Matcher.Neutralize] would change s.
func (m *Matcher) NeedsNeutralizing(s, before, after string) bool {
	if !m.auto {
		return scanNeeds(s, before, after, m.protected)
	}
	if m.maxLen == 0 {
		return false
	}
	n := int32(0)
	for i := 0; i < len(s); i++ {
		if n = m.fwd.step(n, s[i]); m.fwd.nodes[n].longest > 0 {
			return true
		}
	}
	return m.crossesStart(before, s, after) || m.crossesEnd(s, after)
}

// crossesStart reports whether a string starts inside before and ends
// inside s, or spans all of s and ends inside after (either way a joiner
// at s's start breaks it).
func (m *Matcher) crossesStart(before, s, after string) bool {
	if before == "" || s == "" {
		return false
	}
	return m.crosses(before, s, after)
}

// crossesEnd reports whether a string starts inside s and ends inside
// after.
func (m *Matcher) crossesEnd(s, after string) bool {
	if after == "" || s == "" {
		return false
	}
	return m.crosses(s, after, "")
}

// crosses reports whether a string occurs in left+mid+right starting
// inside left and ending past it. Only the last maxLen-1 bytes of left and
// the first maxLen-1 after it can hold such an occurrence.
func (m *Matcher) crosses(left, mid, right string) bool {
	n := int32(0)
	for i := max(0, len(left)-m.maxLen+1); i < len(left); i++ {
		n = m.fwd.step(n, left[i])
	}
	// Past the join, the longest string ending at each byte: one that
	// crosses the join is longer than the bytes past it.
	past := 0
	for _, part := range [2]string{mid, right} {
		for i := 0; i < len(part) && past < m.maxLen-1; i++ {
			n = m.fwd.step(n, part[i])
			past++
			if int(m.fwd.nodes[n].longest) > past {
				return true
			}
		}
	}
	return false
}
