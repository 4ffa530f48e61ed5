package hftok

import (
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// Regex patterns of a tokenizer file run on regexp2, a backtracking engine:
// a pattern can take time exponential in the text's length ((x+x+)+y on 32
// bytes takes minutes), or polynomial (\s*\s*\s*x on a long run of spaces).
// Two bounds keep a file from stalling a count:
//
//   - at load, a pattern that repeats a group holding a repetition or an
//     alternation — the shape of every exponential case — is refused,
//     naming the group (repeatedGroup). The families' patterns have none;
//   - at run time, the matches of one Count or Cut share a time budget
//     (matchBudget, and the same bound on each match call, regexp2's
//     MatchTimeout). Past it the count stops and the text is counted as
//     the bound, Factor tokens a byte: never under the library's count,
//     but then a count depends on the machine's speed. The patterns of
//     Llama 3, Qwen 3 and DeepSeek V3 run on hand-written matchers, linear
//     and never timed.

// matchBudget is the time the regex matches of one encode may take: a base
// and a rate far below regexp2's speed on the patterns files use.
func matchBudget(textBytes int) time.Duration {
	return 250*time.Millisecond + time.Duration(textBytes)*time.Microsecond
}

// matchTimeout bounds a single match call.
const matchTimeout = 250 * time.Millisecond

// regex matches a regexp2 pattern.
type regex struct{ re *regexp2.Regexp }

// compileRegex compiles an Oniguruma pattern of a tokenizer.json with
// regexp2. The two engines agree on the syntax these files use (classes,
// \p{..}, (?i:..), look-ahead), as the reference tests check, down to case
// folding: both match (?i:'s) on "'ſ" (U+017F LATIN SMALL LETTER LONG S).
func compileRegex(pat string) (regex, error) {
	re, err := regexp2.Compile(pat, regexp2.Unicode)
	if err != nil {
		return regex{}, err
	}
	re.MatchTimeout = matchTimeout
	return regex{re}, nil
}

// outOfTime is the panic a regex raises when its encode's budget is spent;
// guarded recovers it. A panic keeps the budget out of every signature
// between the tokenizer and the matcher.
type outOfTime struct{}

func (r regex) matches(dst []match, s string, sc *scratch) []match {
	if s == "" {
		return dst
	}
	if sc != nil && sc.started.IsZero() {
		sc.started = time.Now()
	}
	runes := []rune(s)
	// regexp2 reports rune offsets; map them to bytes as we go, by decoding
	// s itself: an invalid byte is one rune (U+FFFD) but one byte.
	byteAt, runeAt := 0, 0
	advance := func(to int) int {
		for runeAt < to {
			_, size := utf8.DecodeRuneInString(s[byteAt:])
			byteAt += size
			runeAt++
		}
		return byteAt
	}
	m, err := r.re.FindRunesMatch(runes)
	for m != nil && err == nil {
		start := advance(m.Index)
		end := advance(m.Index + m.Length)
		if end > start {
			dst = append(dst, match{start, end})
		}
		if sc != nil && sc.budget > 0 && time.Since(sc.started) > sc.budget {
			panic(outOfTime{})
		}
		m, err = r.re.FindNextMatch(m)
	}
	if err != nil { // regexp2's only error: MatchTimeout
		panic(outOfTime{})
	}
	return dst
}

// repeatedGroup returns the first group of pat that a quantifier repeats
// (more than once) and that holds a repetition or an alternation, or "".
// pat is a pattern regexp2 compiled. The scan knows the syntax's escapes,
// classes (nested ones too), groups and quantifiers; it errs on the side of
// finding a group.
func repeatedGroup(pat string) string {
	type group struct {
		start int
		risky bool // holds a repetition or an alternation
	}
	var stack []group
	// lastGroup is the group that ended just before i, if the atom before i
	// is one (start -1 otherwise).
	lastGroup := group{start: -1}
	for i := 0; i < len(pat); {
		c := pat[i]
		atomGroup := group{start: -1}
		switch c {
		case '\\':
			i = skipEscape(pat, i)
		case '[':
			i = skipClass(pat, i)
		case '(':
			if end, ok := comment(pat, i); ok {
				i = end
				continue
			}
			stack = append(stack, group{start: i})
			i++
			continue
		case ')':
			if len(stack) > 0 {
				g := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && g.risky {
					stack[len(stack)-1].risky = true
				}
				atomGroup = g
			}
			i++
		case '|':
			if len(stack) > 0 {
				stack[len(stack)-1].risky = true
			}
			i++
			lastGroup = group{start: -1}
			continue
		case '*', '+', '?', '{':
			end, repeats := quantifier(pat, i)
			if end == i { // a '{' that is no quantifier: a literal
				i++
				break
			}
			if repeats {
				if lastGroup.start >= 0 && lastGroup.risky {
					return pat[lastGroup.start:end]
				}
				if len(stack) > 0 {
					stack[len(stack)-1].risky = true
				}
			}
			i = end
			lastGroup = group{start: -1}
			continue
		default:
			_, size := utf8.DecodeRuneInString(pat[i:])
			i += size
		}
		lastGroup = atomGroup
	}
	return ""
}

// skipEscape returns the end of the escape at pat[i] ('\\').
func skipEscape(pat string, i int) int {
	if i+1 >= len(pat) {
		return len(pat)
	}
	switch pat[i+1] {
	case 'p', 'P', 'x', 'k', 'g', 'N':
		if i+2 >= len(pat) {
			break
		}
		var close byte
		switch pat[i+2] {
		case '{':
			close = '}'
		case '<':
			close = '>'
		case '\'':
			close = '\''
		}
		if close != 0 {
			for j := i + 3; j < len(pat); j++ {
				if pat[j] == close {
					return j + 1
				}
			}
			return len(pat)
		}
	}
	_, size := utf8.DecodeRuneInString(pat[i+1:])
	return i + 1 + size
}

// skipClass returns the end of the character class at pat[i] ('['),
// nested classes and POSIX brackets ([:alpha:]) included.
func skipClass(pat string, i int) int {
	depth := 0
	for j := i; j < len(pat); {
		switch pat[j] {
		case '\\':
			j = skipEscape(pat, j)
			continue
		case '[':
			depth++
			j++
			if j < len(pat) && pat[j] == '^' {
				j++
			}
			if j < len(pat) && pat[j] == ']' { // a literal ] first
				j++
			}
			continue
		case ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
		j++
	}
	return len(pat)
}

// comment returns the end of a (?#...) comment at pat[i].
func comment(pat string, i int) (int, bool) {
	if len(pat) < i+3 || pat[i+1] != '?' || pat[i+2] != '#' {
		return 0, false
	}
	for j := i + 3; j < len(pat); j++ {
		if pat[j] == ')' {
			return j + 1, true
		}
	}
	return len(pat), true
}

// quantifier returns the end of the quantifier at pat[i] (with a lazy or
// possessive suffix) and whether it may repeat its atom more than once;
// end == i for a '{' that starts no quantifier.
func quantifier(pat string, i int) (end int, repeats bool) {
	switch pat[i] {
	case '*', '+':
		end, repeats = i+1, true
	case '?':
		end = i + 1
	case '{':
		lo, hi, comma, j := -1, -1, false, i+1
		num := func() int {
			n, start := 0, j
			for j < len(pat) && '0' <= pat[j] && pat[j] <= '9' {
				n = n*10 + int(pat[j]-'0')
				if n > 1<<20 {
					n = 1 << 20
				}
				j++
			}
			if j == start {
				return -1
			}
			return n
		}
		lo = num()
		if j < len(pat) && pat[j] == ',' {
			comma = true
			j++
			hi = num()
		}
		if j >= len(pat) || pat[j] != '}' || (lo < 0 && hi < 0) {
			return i, false
		}
		end = j + 1
		switch {
		case !comma:
			repeats = lo > 1
		case hi < 0:
			repeats = true // {n,}
		default:
			repeats = hi > 1
		}
	}
	if end < len(pat) && (pat[end] == '?' || pat[end] == '+') {
		end++
	}
	return end, repeats
}

// guarded runs encode, reporting false when a regex spent the budget.
func (t *Tokenizer) guarded(text string, track, bound bool, fn func(id int32, end int32)) (n int, ok bool) {
	if !t.timed {
		return t.encode(text, track, bound, fn), true
	}
	defer func() {
		if r := recover(); r != nil {
			if _, spent := r.(outOfTime); !spent {
				panic(r)
			}
			n, ok = 0, false
		}
	}()
	return t.encode(text, track, bound, fn), true
}
