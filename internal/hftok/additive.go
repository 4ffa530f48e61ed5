package hftok

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// LineAdditive reports whether a text made of lines counts as the sum of
// its lines (each counted with its newline) whenever every line after the
// first starts cleanly: not with white space, '/' or invalid UTF-8 (see
// truncate.StartsLineCleanly). An Assembler then skips
// counting a final text whose lines it counted.
//
// It holds for a tokenizer whose pipeline never lets a piece run across a
// line break into the next line, decided when the file is loaded:
//
//   - no added token holds a line break followed by anything but white
//     space, so no token can match across a break into a clean line start;
//   - and either the file has a "\n" added token matched in the raw text
//     (Gemma 3): every line break is then split out before anything else,
//     and all that follows works on the stretches between breaks alone —
//     except a Metaspace that prepends only at the start of the text;
//   - or the normalizer is none, NFC or NFD (they never join a line break
//     with what follows), and the pre-tokenizer is Llama 3's, Qwen 3's or
//     DeepSeek V3's Split patterns (isolated) and a ByteLevel without its
//     own regex. Those patterns end a piece at every line break followed by
//     a clean line start, as cl100k_base's does (see internal/bpe); the
//     digit and kana splits before DeepSeek's only split further.
//
// TestLineAdditive and FuzzLineAdditive check the promise on every family.
func (t *Tokenizer) LineAdditive() bool { return t.lineAdditive }

// additive decides LineAdditive for a loaded tokenizer.
func (t *Tokenizer) additive(added []addedJSON) bool {
	newlineToken := false
	for _, a := range added {
		for i := 0; i < len(a.Content); i++ {
			if a.Content[i] != '\n' || i+1 == len(a.Content) {
				continue
			}
			if r, _ := utf8.DecodeRuneInString(a.Content[i+1:]); !unicode.IsSpace(r) {
				return false
			}
		}
		if a.Content == "\n" && !a.Normalized {
			newlineToken = true
		}
	}
	if newlineToken {
		for _, st := range t.pre {
			if m, ok := st.(metaspaceStep); ok && m.scheme == prependFirst {
				return false
			}
		}
		return true
	}
	if !joinsNoBreak(t.norm) {
		return false
	}
	lineSplit := false
	for _, st := range t.pre {
		switch st := st.(type) {
		case splitStep:
			if st.behavior != isolated || st.invert {
				return false
			}
			switch st.pat.(type) {
			case clSplit, dsSplit:
				lineSplit = true
			case digitSplit, kanaSplit:
			default:
				return false
			}
		case byteLevelStep:
			if st.regex != nil {
				return false
			}
		default:
			return false
		}
	}
	return lineSplit
}

// joinsNoBreak reports whether a normalizer keeps every line break apart
// from what follows it.
func joinsNoBreak(n normalizer) bool {
	return everyNorm(n, func(m normalizer) bool {
		if r, ok := m.(replaceNorm); ok {
			l, lit := r.pat.(literal)
			return lit && !strings.ContainsAny(string(l), "\r\n") && strings.IndexFunc(r.with, unicode.IsSpace) < 0
		}
		// Canonical forms: a line break is a starter nothing composes
		// with. (Compatibility forms may turn a character into a space.)
		return isCanonical(m)
	})
}

// everyNorm reports whether ok holds for every normalizer of a sequence
// (nested ones too); none is true.
func everyNorm(n normalizer, ok func(normalizer) bool) bool {
	switch n := n.(type) {
	case nil:
		return true
	case sequenceNorm:
		for _, m := range n {
			if !everyNorm(m, ok) {
				return false
			}
		}
		return true
	}
	return ok(n)
}

// isCanonical reports whether a normalizer is NFC or NFD.
func isCanonical(n normalizer) bool {
	u, ok := n.(unicodeNorm)
	return ok && (u.form == norm.NFC || u.form == norm.NFD)
}
