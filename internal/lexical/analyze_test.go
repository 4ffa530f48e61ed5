package lexical

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"english question", "When did Caroline go to the LGBTQ support group?",
			[]string{"caroline", "go", "lgbtq", "support", "group"}},
		{"english inflections", "She painted; he paints, painting ponies and cats.",
			[]string{"paint", "paint", "paint", "poni", "cat"}},
		{"possessive and contractions", "Caroline's dog isn't here, we'll see. Don't! Won't? I'm fine, you're late, they've gone, she'd go",
			[]string{"caroline", "dog", "see", "fine", "late", "gone", "go"}},
		{"plural possessive", "the students' books", []string{"student", "book"}},
		{"curly apostrophe", "Melanie’s kids didn’t", []string{"melanie", "kid"}},
		{"apostrophe starts a word", "l'homme rock'n'roll y'all", []string{"l", "homme", "rock", "n", "roll", "y"}},
		{"hyphens", "a debt-to-income ratio, e-mail and co-op", []string{"debt", "income", "debttoincome", "ratio", "e", "mail", "email", "co", "op", "coop"}},
		{"dangling hyphen", "pre- and post-war -x", []string{"pre", "post", "war", "postwar", "x"}},
		{"code identifiers", "func applyFee(debtToIncome float64) { fee_amount := HTTPServer.URLs }",
			[]string{"func", "appli", "fee", "applyfee", "debt", "income", "debttoincome", "float64", "fee", "amount", "feeamount", "http", "server", "httpserver", "url"}},
		{"acronym plural", "PDFs and IDs", []string{"pdfs", "id"}},
		{"numbers", "EUR 3,450 at 3.14% on 2023-05-08, v1.2.3 ok.", []string{"eur", "3,450", "3.14", "2023", "05", "08", "20230508", "v1.2.3", "ok"}},
		{"portuguese accents", "Ação! AÇÃO, ação, a taxa de juro não inclui a comissão",
			[]string{"ação", "ação", "ação", "taxa", "de", "juro", "não", "inclui", "comissão"}},
		{"decomposed accents compose", "ac\u0327a\u0303o cafe\u0301", []string{"ação", "café"}},
		{"german compounds untouched", "Die Donaudampfschifffahrtsgesellschaft zahlt die Kfz-Steuer",
			[]string{"die", "donaudampfschifffahrtsgesellschaft", "zahlt", "die", "kfz", "steuer", "kfzsteuer"}},
		{"sharp s folds", "Straße STRASSE strasse ẞ", []string{"strasse", "strasse", "strasse", "ss"}},
		{"ligatures fold", "ﬁne ﬂow", []string{"fine", "flow"}},
		{"greek final sigma", "ΣΊΣΥΦΟΣ σίσυφος", []string{"σίσυφοσ", "σίσυφοσ"}},
		{"chinese bigrams", "我爱北京天安门", []string{"我爱", "爱北", "北京", "京天", "天安", "安门"}},
		{"chinese single character", "我 是", []string{"我", "是"}},
		{"chinese with latin", "iPhone手机很好", []string{"phone", "iphone", "手机", "机很", "很好"}},
		{"japanese mixed scripts", "東京タワーに行きました。",
			[]string{"東京", "京タ", "タワ", "ワー", "ーに", "に行", "行き", "きま", "まし", "した"}},
		{"halfwidth katakana", "ｶﾀｶﾅ", []string{"ｶﾀ", "ﾀｶ", "ｶﾅ"}},
		{"thai clusters", "ภาษาไทย", []string{"ภา", "าษ", "ษา", "าไ", "ไท", "ทย"}},
		{"thai marks stay on their letter", "ที่นี่ ที่", []string{"ที่นี่", "ที่"}},
		{"korean words", "한국어 문장입니다", []string{"한국어", "문장입니다"}},
		{"emoji are not terms", "🍕 pizza 👨‍👩‍👧 family ❤️ love 👍🏽", []string{"pizza", "famili", "love"}},
		{"unicode 16 letters", "𐵐𐵑𐵒 𐵰𐵱", []string{"𐵐𐵑𐵒", "𐵰𐵱"}},
		{"invisible characters inside words", "ig\u2060nore co\u00adop\u200dera\u200cte", []string{"ignore", "cooperate"}},
		{"invalid bytes separate", "fee\xffamount", []string{"fee", "amount"}},
		{"overlong word dropped", "fee " + strings.Repeat("x", MaxTermBytes+1) + " rate", []string{"fee", "rate"}},
		{"longest word kept", strings.Repeat("x", MaxTermBytes), []string{strings.Repeat("x", MaxTermBytes)}},
		{"compound with an overlong part", "fee-" + strings.Repeat("x", MaxTermBytes+1) + "-rate", []string{"fee", "rate"}},
		{"overlong compound not joined", strings.Repeat("abcdefgh-", 20) + "end", append(slices.Repeat([]string{"abcdefgh"}, 20), "end")},
		{"stop words only", "it is what it is and that is that", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Tokens(tt.text)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Tokens(%q)\n got %q\nwant %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestStem(t *testing.T) {
	tests := map[string]string{
		// step 1a
		"caresses": "caress", "ponies": "poni", "ties": "tie", "cries": "cri", "cats": "cat",
		"gas": "gas", "gaps": "gap", "kiwis": "kiwi", "bus": "bus", "class": "class", "ied": "ie",
		// step 1b
		"agreed": "agree", "feed": "feed", "proceed": "proceed", "hoping": "hope", "hopping": "hop",
		"painted": "paint", "luxuriated": "luxuriate", "troubled": "trouble", "sized": "size",
		"fizzed": "fizz", "falling": "fall", "sing": "sing", "bed": "bed", "running": "run",
		"exceedingly": "exceed", "hopefully": "hopefulli", "inning": "inning", "adoption": "adoption",
		// step 1c
		"cry": "cri", "by": "by", "say": "say", "happy": "happi", "enjoy": "enjoy",
		// R1 after gener, commun, arsen
		"generated": "generate", "communed": "commune",
		// exceptions
		"dying": "die", "skies": "sky", "news": "news", "early": "earli", "atlas": "atlas",
		// short words are left
		"is": "is", "a": "a",
	}
	for in, want := range tests {
		if got := string(stem([]byte(in))); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAnalyzeMatchesTokens: a Doc is the terms Tokens lists, counted.
func TestAnalyzeMatchesTokens(t *testing.T) {
	for _, text := range []string{
		"the fee, the fee and the FEE again: fees", "東京 東京タワー", "", "🍕",
		strings.Repeat("word ", 70000) + "other",
	} {
		checkDoc(t, text)
	}
}

// checkDoc checks Analyze(text) against Tokens(text): as many terms,
// ascending distinct keys, each term's frequency.
func checkDoc(t *testing.T, text string) {
	t.Helper()
	toks := Tokens(text)
	d := Analyze(text)
	if d.Len() != len(toks) {
		t.Fatalf("%.60q: Doc length %d, %d tokens", text, d.Len(), len(toks))
	}
	count := make(map[uint64]int)
	for _, tok := range toks {
		count[keyOf([]byte(tok))]++
	}
	if d.Distinct() != len(count) {
		t.Fatalf("%.60q: %d distinct terms, want %d", text, d.Distinct(), len(count))
	}
	for i, e := range d.terms {
		if i > 0 && e>>16 <= d.terms[i-1]>>16 {
			t.Fatalf("%.60q: keys not ascending at %d", text, i)
		}
		if want := min(count[e>>16], 65535); int(uint16(e)) != want {
			t.Fatalf("%.60q: term %x has tf %d, want %d", text, e>>16, uint16(e), want)
		}
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{
		"When did Caroline go to the LGBTQ support group?", "don't l'homme rock'n'roll", "a-b_c-",
		"debtToIncome HTTPServer PDFs", "3,450 3.14 1..2 ,5", "Ação ac\u0327a\u0303o Straße ﬃ",
		"東京タワーに行きました 我", "ภาษาไทย ที่นี่", "🍕👨‍👩‍👧❤️", "𐵐𐵑 \U00010D40",
		"e" + strings.Repeat("\u0301", 40), "\xff\xfe\x00", "'s'''t--__", "ig\u2060nore\u00ad",
		strings.Repeat("A", 300) + "b", "x'" + strings.Repeat("s", 5),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		toks := Tokens(text)
		// Each part is at least a byte, and a compound joins two parts or
		// more: at most 1.5 terms a byte.
		if 2*len(toks) > 3*len(text) {
			t.Fatalf("%d terms from %d bytes", len(toks), len(text))
		}
		for _, tok := range toks {
			if tok == "" || !utf8.ValidString(tok) {
				t.Fatalf("term %q: empty or not UTF-8", tok)
			}
			// A part or compound is at most MaxTermBytes (NFC may grow it
			// a little, the stemmer by one byte); a bigram is two
			// characters with at most maxMarks marks each.
			if len(tok) > 2*MaxTermBytes {
				t.Fatalf("term of %d bytes", len(tok))
			}
			if tok != strings.TrimSpace(tok) || strings.ContainsAny(tok, " \n\t.,;:!?\"()[]{}<>/\\|") && !numberLike(tok) {
				t.Fatalf("term %q holds a separator", tok)
			}
		}
		checkDoc(t, text)
		// Deterministic, and the same through a reused analyzer.
		var q Query
		q.Set(text)
		q.Set(text)
		if !slices.Equal(Tokens(text), toks) || q.Terms() != Analyze(text).Distinct() {
			t.Fatal("analysis not deterministic")
		}
	})
}

// numberLike reports whether tok is digits with commas and periods
// between them, the one kind of term that keeps punctuation.
func numberLike(tok string) bool {
	return strings.ContainsAny(tok, "0123456789") && strings.Trim(tok, ".,") == tok
}

// The splitter is linear whatever the input: ns/byte at 1 MiB should be
// that at 64 KiB. The inputs are the worst cases of each rule: one long
// word, a long compound, long camelCase, apostrophes, a run without
// spaces, stacked marks, separators, and numbers.
func BenchmarkAnalyzeHostile(b *testing.B) {
	inputs := []struct{ name, unit string }{
		{"letters", "a"},
		{"compound", "ab-"},
		{"camel", "aB"},
		{"capitals", "ABc"},
		{"apostrophes", "a'b"},
		{"han", "漢"},
		{"marks", "e\u0301\u0302\u0303"},
		{"thai", "ที่"},
		{"separators", "!? "},
		{"numbers", "1,2."},
		{"words", "caroline's painted debtToIncome 3,450 "},
	}
	for _, in := range inputs {
		for _, size := range []int{64 << 10, 1 << 20} {
			text := strings.Repeat(in.unit, size/len(in.unit))
			b.Run(in.name+"/"+sizeName(size), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					Analyze(text)
				}
			})
		}
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return "1MiB"
	}
	return "64KiB"
}

func BenchmarkAnalyzeTurn(b *testing.B) {
	text := "Caroline: I went to the LGBTQ support group yesterday and it was so powerful! The transgender stories were inspiring."
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Analyze(text)
	}
}
