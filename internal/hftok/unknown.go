package hftok

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
)

// Text the reference library may see otherwise than Go's tables do.
//
// The Rust tokenizers library classifies characters for its regexes with
// Oniguruma's Unicode tables, and normalizes with tables of its own; neither
// is Go's. Oniguruma's are newer than Go's (Unicode 15.0 up to Go 1.26):
// U+10D40 GARAY DIGIT ZERO, unassigned in 15.0, is a digit to the library,
// so "\U00010D40123" is the pieces "\U00010D4012" and "3" there and "\U00010D40"
// and "123" here. Its normalizer's are older (Unicode 9.0, measured by
// TestNormalizerTables): U+11935 U+11930 compose into U+11938 in Go's NFC,
// not in the library's. A count of such text is not safe without knowing
// what the library makes of it, so Count finds the stretch around each such
// character that the library tokenizes apart from the rest whatever it
// makes of the character, and counts that stretch as an upper bound: each
// byte Factor tokens (see below).
//
// Which characters are uncertain depends on the pipeline (see uncertainMask):
//
//   - for a regex (a Split or Replace pattern, ByteLevel's own regex) or the
//     Digits pre-tokenizer: a character unassigned in Go's tables. Assigned
//     characters keep their general category's major class (L, M, N, P, S,
//     Z, C) from Unicode 15.0 to 17.0, so the library classes them as Go does;
//   - for NFC or NFD: also a character assigned after Unicode 9.0 whose
//     canonical normalization is not the identity in Go's tables (it
//     decomposes, has a combining class, or composes), and for NFKC or NFKD
//     the same for compatibility normalization. Unicode's stability policy
//     freezes a character's normalization once assigned, so characters of
//     9.0 normalize alike in every version.
//
// The stretch is bounded by sync points: positions where every piece ends
// in the library's pipeline whatever class the uncertain characters have
// (they are never white space: no character has become White_Space since
// Unicode 6), where normalization does not reach across, and where the
// text after tokenizes as it would alone. For the pipelines of Llama 3,
// Qwen 3 and DeepSeek V3 (see syncable) two rules give them, as for the
// built-in encodings (internal/bpe):
//
//   - a character other than white space, then white space other than \r
//     and \n: no piece of those patterns holds non-space characters
//     followed by such white space, and white space is a starter nothing
//     composes with;
//   - \r or \n, then a character that is not white space: a line break ends
//     the piece it is in unless more white space follows, and nothing
//     composes with it.
//
// Both depend on the two characters either side only. TestSyncPoints checks
// on every family that a text counts as the sum of its parts between sync
// points. Other pipelines have no such rules: there the whole stretch
// between added tokens is counted as the bound.
//
// The bound: byte-level BPE starts from one token per byte, byte fallback
// from at most one per byte, and merging only lowers the count, so a piece
// never counts more tokens than its bytes. What reaches the model is the
// stretch rewritten by the normalizer and the pre-tokenizer, so each byte
// of the stretch counts Factor tokens: the product over the steps of how
// much each may grow a text (3 for NFC and NFD, 11 for NFKC and NFKD:
// Unicode's maximum expansion factors in UTF-8; a Replace's replacement
// length, a Prepend's length plus one, a prefix space twice).

// refNormVersion is the Unicode version of the reference library's
// normalizer tables (TestNormalizerTables).
const refNormVersion = "9.0.0"

// Flags of a character: what it may be uncertain for.
const (
	uncClass  uint8 = 1 << iota // unassigned in Go's tables: a regex or Digits
	uncCanon                    // NFC, NFD
	uncCompat                   // NFKC, NFKD
)

// uncertainTable maps every code point to its flags: a two-stage table,
// the first stage indexing 128-code-point blocks, identical blocks shared.
type uncertainTable struct {
	index  []uint16
	blocks []uint8
}

const uncBlockBits = 7

func (t *uncertainTable) of(r rune) uint8 {
	if r < 0 || r > unicode.MaxRune {
		return 0
	}
	return t.blocks[int(t.index[r>>uncBlockBits])<<uncBlockBits|int(r&(1<<uncBlockBits-1))]
}

// uncertainChars returns the process-wide table, built on first use.
var uncertainChars = sync.OnceValue(buildUncertain)

func buildUncertain() *uncertainTable {
	all := make([]uint8, unicode.MaxRune+1)
	for i := range all {
		all[i] = uncClass | uncCanon | uncCompat
	}
	rangetable.Visit(assignedIn(unicode.Version), func(r rune) { all[r] &^= uncClass })
	old := rangetable.Assigned(refNormVersion)
	rangetable.Visit(assignedIn(norm.Version), func(r rune) {
		all[r] &^= uncCanon | uncCompat
		if unicode.Is(old, r) {
			return
		}
		s := string(r)
		if normalizes(norm.NFC, s) || normalizes(norm.NFD, s) {
			all[r] |= uncCanon
		}
		if normalizes(norm.NFKC, s) || normalizes(norm.NFKD, s) {
			all[r] |= uncCompat
		}
	})
	t := &uncertainTable{index: make([]uint16, len(all)>>uncBlockBits)}
	seen := make(map[string]uint16)
	for b := range t.index {
		blk := all[b<<uncBlockBits : (b+1)<<uncBlockBits]
		id, ok := seen[string(blk)]
		if !ok {
			id = uint16(len(t.blocks) >> uncBlockBits)
			seen[string(blk)] = id
			t.blocks = append(t.blocks, blk...)
		}
		t.index[b] = id
	}
	return t
}

// assignedIn returns the characters assigned in a Unicode version, from
// x/text's tables, or, for a version they do not hold, those of Go's
// categories (surrogates and private use included, as assigned).
func assignedIn(version string) *unicode.RangeTable {
	if t := rangetable.Assigned(version); t != nil {
		return t
	}
	return rangetable.Merge(unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z,
		unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// normalizes reports whether a character's normalization in form is other
// than the identity: it changes alone, or may change beside others.
func normalizes(f norm.Form, s string) bool {
	p := f.PropertiesString(s)
	return !p.BoundaryBefore() || !p.BoundaryAfter() || len(p.Decomposition()) > 0 || p.CCC() != 0
}

// hasUncertain reports whether s holds a character of one of the flags.
func hasUncertain(s string, flags uint8) bool {
	if flags == 0 {
		return false
	}
	tab := uncertainChars()
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if tab.of(r)&flags != 0 {
			return true
		}
		i += size
	}
	return false
}

// syncPoint reports whether every piece ends between characters a and b,
// and nothing normalizes across (see the rules above).
func syncPoint(a, b rune) bool {
	bSpace := unicode.IsSpace(b)
	if bSpace && b != '\r' && b != '\n' && !unicode.IsSpace(a) {
		return true
	}
	return (a == '\r' || a == '\n') && !bSpace
}

// boundedStretch counts a stretch between added tokens that holds an
// uncertain character: the parts between sync points that hold none
// exactly, the others as the bound. With fn (a cut's tracking), each
// bounded character yields Factor × its bytes tokens, the last ending
// where it ends.
func (t *Tokenizer) boundedStretch(sp span, track bool, fn func(id int32, end int32), sc *scratch) int {
	s := sp.s
	if !t.syncable {
		return t.bytewise(sp, fn)
	}
	tab := uncertainChars()
	n, from := 0, 0 // from: where the text not yet counted starts, a sync point
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r < utf8.RuneSelf || tab.of(r)&t.uncertain == 0 {
			i += size
			continue
		}
		a := i // the last sync point at or before i (from is one)
		for a > from {
			pr, ps := utf8.DecodeLastRuneInString(s[:a])
			cr, _ := utf8.DecodeRuneInString(s[a:])
			if syncPoint(pr, cr) {
				break
			}
			a -= ps
		}
		b := i + size // the first sync point after the character
		for b < len(s) {
			pr, _ := utf8.DecodeLastRuneInString(s[:b])
			cr, cs := utf8.DecodeRuneInString(s[b:])
			if syncPoint(pr, cr) {
				break
			}
			b += cs
		}
		n += t.exact(sp.sub(from, a), track, fn, sc)
		n += t.bytewise(sp.sub(a, b), fn)
		from, i = b, b
	}
	return n + t.exact(sp.sub(from, len(s)), track, fn, sc)
}

// bytewise counts a stretch as the bound, Factor tokens a byte.
func (t *Tokenizer) bytewise(sp span, fn func(id int32, end int32)) int {
	if fn != nil {
		for i := 0; i < len(sp.s); {
			_, size := utf8.DecodeRuneInString(sp.s[i:])
			for range t.factor*size - 1 {
				fn(-1, -1)
			}
			i += size
			fn(-1, sp.orig(i))
		}
	}
	return t.factor * len(sp.s)
}

// classify decides, for a loaded tokenizer, which characters are uncertain
// (uncertain), whether sync points bound them (syncable), the bound's
// factor and whether any step runs regexp2 (timed).
func (t *Tokenizer) classify(added []addedJSON) {
	canon, compat, normFactor := normShape(t.norm)
	if canon {
		t.uncertain |= uncCanon
	}
	if compat {
		t.uncertain |= uncCompat
	}
	t.factor = normFactor
	t.timed = normTimed(t.norm)
	t.syncable = everyNorm(t.norm, isCanonical) // none, NFC, NFD
	lineSplit := false
	for _, st := range t.pre {
		f, classes, regexp, splits, ok := stepShape(st)
		t.factor = mulCapped(t.factor, f)
		if classes {
			t.uncertain |= uncClass
		}
		t.timed = t.timed || regexp
		lineSplit = lineSplit || splits
		t.syncable = t.syncable && ok
	}
	t.syncable = t.syncable && lineSplit
	for _, a := range added {
		if !a.Normalized {
			continue
		}
		var prev rune = -1
		for _, r := range a.Content {
			if prev >= 0 && syncPoint(prev, r) {
				t.syncable = false // a token could match across a sync point
			}
			prev = r
		}
	}
}

// maxFactor caps Factor, so that a pathological file cannot overflow it.
const maxFactor = 1 << 20

func mulCapped(a, b int) int {
	if a > maxFactor/b {
		return maxFactor
	}
	return a * b
}

// normShape reports whether a normalizer applies canonical or
// compatibility normalization, and how much it may grow a text.
func normShape(n normalizer) (canon, compat bool, factor int) {
	switch n := n.(type) {
	case nil:
		return false, false, 1
	case unicodeNorm:
		if n.form == norm.NFKC || n.form == norm.NFKD {
			return false, true, 11
		}
		return true, false, 3
	case sequenceNorm:
		factor = 1
		for _, m := range n {
			c, k, f := normShape(m)
			canon, compat, factor = canon || c, compat || k, mulCapped(factor, f)
		}
		return canon, compat, factor
	case replaceNorm:
		return false, false, max(1, len(n.with))
	case prependNorm:
		return false, false, min(1+len(n), maxFactor)
	}
	return true, true, maxFactor // unreachable: every normalizer is above
}

// normTimed reports whether a normalizer runs regexp2.
func normTimed(n normalizer) bool {
	return !everyNorm(n, func(m normalizer) bool {
		r, ok := m.(replaceNorm)
		if !ok {
			return true
		}
		_, re := r.pat.(regex)
		return !re
	})
}

// stepShape describes a pre-tokenizer step: how much it may grow a text,
// whether it classes characters by Unicode tables, whether it runs
// regexp2, whether it ends pieces at line breaks as the sync rules need
// (Llama 3's, Qwen 3's or DeepSeek V3's main pattern), and whether it may
// take part in a syncable pipeline.
func stepShape(st preStep) (factor int, classes, regexp, splits, syncable bool) {
	switch st := st.(type) {
	case splitStep:
		plain := st.behavior == isolated && !st.invert
		switch st.pat.(type) {
		case literal:
			return 1, false, false, false, false
		case kanaSplit:
			return 1, false, false, false, plain
		case clSplit, dsSplit:
			return 1, true, false, true, plain
		case digitSplit:
			return 1, true, false, false, plain
		case regex:
			return 1, true, true, false, false
		}
		return 1, true, false, false, false // runeClass: Digits
	case byteLevelStep:
		factor = 1
		if st.addPrefixSpace {
			factor = 2
		}
		if st.regex != nil {
			return factor, true, true, false, false
		}
		return factor, false, false, false, true
	case metaspaceStep:
		r := len(st.replacement)
		return max(1, r) + r, false, false, false, false
	}
	return maxFactor, true, true, false, false // unreachable: every step is above
}
