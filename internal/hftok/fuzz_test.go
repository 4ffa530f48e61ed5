package hftok

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The pre-tokenizers' invariants, checked on any input: the pieces are
// non-empty and, but for what a step removes or rewrites, put back
// together they are the input; and tracking offsets (as Cut does) never
// changes the pieces.

// The Split patterns of the supported families.
var familyPatterns = map[string]string{
	"llama3":       `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	"qwen3":        `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	"deepseek":     "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
	"deepseek_cjk": "[一-龥぀-ゟ゠-ヿ]+",
	"deepseek_num": `\p{N}{1,3}`,
}

var seeds = []string{
	"", "a", " ", "Hello world", "It's   fine\n\n\tok", "1234567 ٣٤ ½", "中文 日本語 ｶﾀｶﾅ",
	"e\u0301 A\u030a ﬁ", "😀👍🏽 👨‍👩‍👧", "a  \n  b", "x'ſ y'S", "<|im_start|>hi▁▁there",
	"\r\n\r\n  \u00a0\u3000", strings.Repeat(" ", 300) + "z", "\xff\xfe invalid",
	// Newer than Go's tables: Unicode 16.0 digits, letters and marks,
	// 15.1's CJK Extension I, 17.0's Sidetic; and characters of 10.0 to
	// 15.0 the library's normalizer does not know.
	"\U00010D40123", "x\U00016D70 \U0001CCF012\n\U00010D4A\U00010D69", "\U00011380\U000113B8 \uA7CB\u1C89\u0897",
	"\U0002EBF0\u2FFC \U00010940", "\U00011935\U00011930 e\u0898\u0301 \u32FF",
}

// checkPieces checks pieces against the input they came from.
func checkPieces(t *testing.T, in string, pieces []span, rejoin bool) {
	t.Helper()
	var b strings.Builder
	for _, p := range pieces {
		if p.s == "" {
			t.Fatalf("%q: empty piece", in)
		}
		b.WriteString(p.s)
	}
	if rejoin && b.String() != in {
		t.Fatalf("%q: pieces %q do not rejoin to the input", in, b.String())
	}
}

func splitAll(st preStep, in string, track bool) []span {
	return st.split(span{s: in}, track, nil, nil)
}

func samePieces(t *testing.T, in string, a, b []span) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%q: %d pieces untracked, %d tracked", in, len(a), len(b))
	}
	for i := range a {
		if a[i].s != b[i].s {
			t.Fatalf("%q: piece %d is %q untracked, %q tracked", in, i, a[i].s, b[i].s)
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range seeds {
		f.Add(s, uint8(0))
	}
	var steps []splitStep
	for _, name := range []string{"llama3", "qwen3", "deepseek", "deepseek_cjk", "deepseek_num"} {
		re, err := compileRegex(familyPatterns[name])
		if err != nil {
			f.Fatal(err)
		}
		for b := removed; b <= contiguous; b++ {
			steps = append(steps, splitStep{pat: re, behavior: b}, splitStep{pat: re, behavior: b, invert: true})
		}
	}
	steps = append(steps, splitStep{pat: literal(" "), behavior: mergedWithPrevious}, splitStep{pat: runeClass(isNumeric), behavior: contiguous})
	f.Fuzz(func(t *testing.T, in string, which uint8) {
		st := steps[int(which)%len(steps)]
		pieces := splitAll(st, in, false)
		checkPieces(t, in, pieces, st.behavior != removed)
		samePieces(t, in, pieces, splitAll(st, in, true))
		if st.behavior == isolated && !st.invert {
			// Isolated regex pieces are exactly the matches and the gaps.
			n := len(st.pat.matches(nil, in, nil))
			if n > len(pieces) {
				t.Fatalf("%q: %d matches but %d pieces", in, n, len(pieces))
			}
		}
	})
}

func FuzzByteLevel(f *testing.F) {
	for _, s := range seeds {
		f.Add(s, false)
	}
	re, err := compileRegex(gpt2Pattern)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string, prefix bool) {
		st := byteLevelStep{addPrefixSpace: prefix, regex: &splitStep{pat: re, behavior: isolated}}
		pieces := splitAll(st, in, false)
		want := in
		if prefix && in != "" && !strings.HasPrefix(in, " ") {
			want = " " + in
		}
		checkPieces(t, want, pieces, true)
		samePieces(t, in, pieces, splitAll(st, in, true))
	})
}

func FuzzDigits(f *testing.F) {
	for _, s := range seeds {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, in string, individual bool) {
		b := contiguous
		if individual {
			b = isolated
		}
		st := splitStep{pat: runeClass(isNumeric), behavior: b}
		pieces := splitAll(st, in, false)
		checkPieces(t, in, pieces, true)
		for _, p := range pieces {
			digits := 0
			for _, r := range p.s {
				if isNumeric(r) {
					digits++
				}
			}
			if digits > 0 && (digits != utf8.RuneCountInString(p.s) || (individual && digits != 1)) {
				t.Fatalf("%q: piece %q mixes digits and other characters", in, p.s)
			}
		}
	})
}

func FuzzMetaspace(f *testing.F) {
	for _, s := range seeds {
		f.Add(s, uint8(0), true)
	}
	f.Fuzz(func(t *testing.T, in string, scheme uint8, split bool) {
		st := metaspaceStep{replacement: "▁", scheme: prependScheme(scheme % 3), splits: split}
		pieces := splitAll(st, in, false)
		checkPieces(t, in, pieces, false)
		var b strings.Builder
		for _, p := range pieces {
			b.WriteString(p.s)
			if strings.Contains(p.s, " ") {
				t.Fatalf("%q: piece %q keeps a space", in, p.s)
			}
			if split && strings.Count(p.s, "▁") > 0 && !strings.HasPrefix(p.s, "▁") {
				t.Fatalf("%q: piece %q has a ▁ not at its start", in, p.s)
			}
		}
		if got, want := strings.TrimPrefix(b.String(), "▁"), strings.TrimPrefix(strings.ReplaceAll(in, " ", "▁"), "▁"); got != want {
			t.Fatalf("%q: pieces rejoin to %q, want %q", in, got, want)
		}
		samePieces(t, in, pieces, splitAll(st, in, true))
	})
}

// FuzzNormalize checks that the tracked normalizers write what the plain
// ones do, and that every aligned offset maps inside the original.
func FuzzNormalize(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	ns := []normalizer{unicodeNorm{norm.NFC}, unicodeNorm{norm.NFKD}, replaceNorm{pat: literal(" "), with: "▁"},
		prependNorm("▁"), sequenceNorm{prependNorm("▁"), replaceNorm{pat: literal(" "), with: "▁"}}}
	f.Fuzz(func(t *testing.T, in string) {
		for i, n := range ns {
			plain := n.normalize(span{s: in}, false, nil)
			tracked := n.normalize(span{s: in}, true, nil)
			if plain.s != tracked.s {
				t.Fatalf("normalizer %d, %q: %q untracked, %q tracked", i, in, plain.s, tracked.s)
			}
			if tracked.back != nil && len(tracked.back) != len(tracked.s)+1 {
				t.Fatalf("normalizer %d, %q: %d offsets for %d bytes", i, in, len(tracked.back), len(tracked.s))
			}
			last := int32(0)
			for j := 0; j <= len(tracked.s); j++ {
				o := tracked.orig(j)
				if o < 0 {
					continue
				}
				if o < last || int(o) > len(in) {
					t.Fatalf("normalizer %d, %q: offset %d maps to %d (after %d)", i, in, j, o, last)
				}
				last = o
			}
			if tracked.orig(len(tracked.s)) != int32(len(in)) {
				t.Fatalf("normalizer %d, %q: the end maps to %d", i, in, tracked.orig(len(tracked.s)))
			}
		}
	})
}

// FuzzFastSplit checks the hand-written matcher of Llama 3's and Qwen 3's
// patterns against regexp2, match for match.
func FuzzFastSplit(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Add("'S'T'RE'Ve'M'LL'D 're'l 'x ' \u00a0a \ta \na \u2003\u2003x !!\r\n\r\n  !x 12345 ١٢٣٤")
	f.Add("e\u0301\u0301x 1st _a .NET \x00a \x01\x02 日本語ひらがなカタカナ한글 ¥€$ +-=<> «a» \u0301 ~~\n\n")
	type pair struct {
		fast matcher
		re   regex
	}
	var pairs []pair
	for _, pat := range []string{patternLlama3, patternQwen, patternDigits3, patternKana, patternDS} {
		fast, ok := fastPattern(pat)
		re, err := compileRegex(pat)
		if !ok || err != nil {
			f.Fatal(ok, err)
		}
		pairs = append(pairs, pair{fast, re})
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, p := range pairs {
			got, want := p.fast.matches(nil, s, nil), p.re.matches(nil, s, nil)
			if len(got) != len(want) {
				t.Fatalf("pattern %d, %q: %d matches %v, regexp2 %d %v", i, s, len(got), got, len(want), want)
			}
			for j := range got {
				if got[j] != want[j] {
					t.Fatalf("pattern %d, %q: match %d is %q, regexp2's %q", i, s, j, s[got[j].start:got[j].end], s[want[j].start:want[j].end])
				}
			}
		}
	})
}
