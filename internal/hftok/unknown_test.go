package hftok

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPipelineShapes checks what each family's pipeline is taken to be:
// which characters it may see otherwise than the library, whether sync
// points bound them, and the bound's factor.
func TestPipelineShapes(t *testing.T) {
	want := map[string]struct {
		uncertain uint8
		syncable  bool
		factor    int
	}{
		"llama3":      {uncClass, true, 1},
		"qwen3":       {uncClass | uncCanon, true, 3},
		"deepseek_v3": {uncClass, true, 1},
		"gemma3":      {0, false, 3}, // no class or normalization table: exact
	}
	for _, fam := range families {
		tok := loadFamily(t, fam)
		w := want[fam]
		if tok.uncertain != w.uncertain || tok.syncable != w.syncable || tok.Factor() != w.factor || tok.timed {
			t.Errorf("%s: uncertain %b, syncable %v, factor %d, timed %v; want %b, %v, %d, false",
				fam, tok.uncertain, tok.syncable, tok.Factor(), tok.timed, w.uncertain, w.syncable, w.factor)
		}
	}
}

// syncParts cuts text at every sync point.
func syncParts(text string) []string {
	var parts []string
	from := 0
	var prev rune = -1
	for i, r := range text {
		if prev >= 0 && syncPoint(prev, r) {
			parts = append(parts, text[from:i])
			from = i
		}
		prev = r
	}
	return append(parts, text[from:])
}

// TestSyncPoints checks the rules the bound around uncertain characters
// rests on, for each family with sync points: a text of characters Go's
// tables know tokenizes as its parts between sync points do, one after the
// other. The characters the library may class otherwise are, to it, known
// characters of some class other than white space, which the texts here
// hold of every kind, so its tokens end at the same points.
func TestSyncPoints(t *testing.T) {
	n := 4000
	if testing.Short() || raceEnabled {
		n = 400
	}
	r := rand.New(rand.NewPCG(26, 1))
	texts := make([]string, n)
	for i := range texts {
		texts[i] = diffText(r, nil, 24, false)
	}
	for _, fam := range families {
		tok := loadFamily(t, fam)
		if !tok.syncable {
			continue
		}
		t.Run(fam, func(t *testing.T) {
			split := 0
			for _, text := range texts {
				parts := syncParts(text)
				if len(parts) > 1 {
					split++
				}
				var ids []int
				for _, p := range parts {
					ids = append(ids, appendIDs(t, tok, p)...)
				}
				if whole := appendIDs(t, tok, text); !slices.Equal(whole, ids) {
					t.Fatalf("%+q: ids %v whole, %v by parts %+q", text, whole, ids, parts)
				}
			}
			if split < n/2 {
				t.Errorf("generator too weak: %d of %d texts have a sync point", split, n)
			}
		})
	}
}

// TestUnicode16Counts pins the library's counts (testdata/ref/count.js)
// of text with characters of Unicode 16.0, which Go's tables (15.0) do not
// know: counts must never be below them. They used to be: Llama 3 counted
// "\U00010D40123" as 5 tokens, the library 6; that string 300 times, 985
// against 1,364.
func TestUnicode16Counts(t *testing.T) {
	block := strings.Repeat("\U00010D40123", 300)
	cases := []struct {
		text string
		want map[string]int // family: the library's count
	}{
		{"\U00010D40123", map[string]int{"llama3": 6, "qwen3": 6, "deepseek_v3": 5, "gemma3": 7}},
		{"\U00016D70abc", map[string]int{"llama3": 5, "qwen3": 4, "deepseek_v3": 5, "gemma3": 5}},
		{"\U0001CCF012", map[string]int{"llama3": 5, "qwen3": 6, "deepseek_v3": 5, "gemma3": 6}},
		{"\U00011935\U00011930", map[string]int{"qwen3": 6}}, // composed by Go's NFC, not the library's
		{block, map[string]int{"llama3": 1364}},
	}
	for _, fam := range families {
		tok := loadFamily(t, fam)
		for _, c := range cases {
			want, ok := c.want[fam]
			if !ok {
				continue
			}
			if got := tok.Count(c.text); got < want {
				t.Errorf("%s: Count(%+q) = %d, below the library's %d", fam, trunc(c.text), got, want)
			}
			for _, m := range []int{1, want / 2, want} {
				if cut := tok.Cut(c.text, m); tok.Count(cut) > m || (m >= 8 && cut == "") {
					t.Errorf("%s: Cut(%+q, %d) = %+q counts %d", fam, trunc(c.text), m, trunc(cut), tok.Count(cut))
				}
			}
		}
	}
}

// TestBoundedCutKeepsText checks that Cut, on text counted at the bound,
// still keeps what fits: within a character of the bound's limit.
func TestBoundedCutKeepsText(t *testing.T) {
	tok := loadFamily(t, "llama3")
	text := strings.Repeat("\U00010D40123 word ", 50)
	for _, m := range []int{10, 37, 100, 333} {
		cut := tok.Cut(text, m)
		n := tok.Count(cut)
		if n > m {
			t.Fatalf("Cut(%d) counts %d", m, n)
		}
		next := text[len(cut):]
		_, size := utf8.DecodeRuneInString(next)
		if m-n >= size*tok.Factor()+8 {
			t.Errorf("Cut(%d) keeps %d tokens (%d bytes): more would fit", m, n, len(cut))
		}
	}
}
