package hftok

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contextasm/contextasm/truncate"
)

// additivePieces stress the pipelines at line starts and ends: white space
// of several kinds, line breaks, punctuation runs, numbers, contractions,
// marks, CJK and kana, emoji, the families' added tokens (Gemma's line
// breaks, tabs and ▁ runs among them), the word joiner neutralisation
// inserts.
var additivePieces = []string{
	"hello", " world", "。", "中文字符", "ひらがな", "/path", " ", "\t", "\n", "\r\n", "\r", "}", "{",
	"<rule id=\"x\">", "</rule>", "123", "4567", "٣", "'s", "'LL", "é", "e\u0301", "\u0301", "ção", "!!", "...", "  ",
	"//", "a/b", "\u2060", "\u3000", "\u00a0", "x", "Ä", "ß", "😀", "👍🏽", "\\", "\"", ":", "-", "—",
	"【硬性规则】", "\u0085", "\v", "\f", "▁", "▁▁", "\n\n", "\t\t", "\x00",
	"<|begin_of_text|>", "<|im_start|>", "<think>", "<｜User｜>", "<start_of_turn>", "<b>", "<unused3>", "<|EOT|>",
	"\U00010D40123", "\U00016D70", "\U00010D4A\U00010D69", "\u0897", "\U0002EBF0", "\U00011935\U00011930", "\u0898",
}

func randomLines(r *rand.Rand) []string {
	lines := make([]string, 1+r.IntN(4))
	for i := range lines {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			b.WriteString(additivePieces[r.IntN(len(additivePieces))])
		}
		lines[i] = b.String()
	}
	return lines
}

// TestLineAdditive checks the promise behind LineAdditive for every family:
// lines that start cleanly count, with their newlines, exactly as the whole
// text does. As a control, lines that do not start cleanly must break the
// sum at least sometimes: otherwise the generator tests nothing.
func TestLineAdditive(t *testing.T) {
	n := 6000
	if testing.Short() || raceEnabled {
		n = 600
	}
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			tok := loadFamily(t, fam)
			if !tok.LineAdditive() {
				t.Fatalf("%s: LineAdditive() = false", fam)
			}
			r := rand.New(rand.NewPCG(7, 11))
			clean, unclean, uncleanDiffer := 0, 0, 0
			for range n {
				lines := randomLines(r)
				isClean := true
				for _, l := range lines[1:] {
					isClean = isClean && truncate.StartsLineCleanly(l)
				}
				sum := 0
				for _, l := range lines {
					sum += tok.Count(l + "\n")
				}
				whole := tok.Count(strings.Join(lines, "\n") + "\n")
				switch {
				case isClean:
					clean++
					if whole != sum {
						t.Fatalf("%q counts %d whole but %d by lines", lines, whole, sum)
					}
				default:
					unclean++
					if whole != sum {
						uncleanDiffer++
					}
				}
			}
			t.Logf("%d clean cases all additive; %d of %d unclean cases not additive", clean, uncleanDiffer, unclean)
			if clean < n/4 || uncleanDiffer == 0 {
				t.Errorf("generator too weak: %d clean, %d unclean that differ", clean, uncleanDiffer)
			}
		})
	}
}

func FuzzLineAdditive(f *testing.F) {
	f.Add("</rule>", "<rule id=\"x\">")
	f.Add("a  ", "b")
	f.Add("x.", "/y")
	f.Add("中文。", "【硬性规则】")
	f.Add("e", "\u0301x")
	f.Add("a\n\n", "▁▁b")
	f.Add("\U00010D40123 x", "\U00016D70\u0897")
	var toks []*Tokenizer
	for _, fam := range families {
		toks = append(toks, loadFamily(f, fam))
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) || !truncate.StartsLineCleanly(b) {
			return
		}
		for i, tk := range toks {
			whole := tk.Count(a + "\n" + b + "\n")
			if sum := tk.Count(a+"\n") + tk.Count(b+"\n"); whole != sum {
				t.Fatalf("%s: %q + %q: whole %d, lines %d", families[i], a, b, whole, sum)
			}
		}
	})
}

// TestLineAdditiveShapes checks which pipelines LineAdditive is claimed
// for, and that a Prepend normalizer, GPT-2's ByteLevel regex or a token
// spanning a line break turn it off.
func TestLineAdditiveShapes(t *testing.T) {
	const split = `{"type":"Split","pattern":{"Regex":"` + `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+` + `"},"behavior":"Isolated","invert":false}`
	const bl = `{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}`
	seq := func(steps ...string) string {
		return `{"type":"Sequence","pretokenizers":[` + strings.Join(steps, ",") + `]}`
	}
	cases := []struct {
		name, normalizer, pre, added string
		want                         bool
	}{
		{"llama3 shape", "", seq(split, bl), "", true},
		{"nfc", `{"type":"NFC"}`, seq(split, bl), "", true},
		{"nfkc", `{"type":"NFKC"}`, seq(split, bl), "", false},
		{"prepend", `{"type":"Prepend","prepend":"▁"}`, seq(split, bl), "", false},
		{"gpt2 regex", "", `{"type":"ByteLevel","add_prefix_space":false,"use_regex":true}`, "", false},
		{"no split", "", bl, "", false},
		{"other regex", "", seq(`{"type":"Split","pattern":{"Regex":"\\w+"},"behavior":"Isolated"}`, bl), "", false},
		{"token across a break", "", seq(split, bl), `{"id":5,"content":"a\nb"}`, false},
		{"token ending in breaks", "", seq(split, bl), `{"id":5,"content":"a\n\n"}`, true},
		{"newline token", `{"type":"Prepend","prepend":"▁"}`, bl, `{"id":5,"content":"\n"}`, true},
		{"newline token, metaspace first", "", `{"type":"Metaspace","replacement":"▁","prepend_scheme":"first"}`, `{"id":5,"content":"\n"}`, false},
	}
	for _, c := range cases {
		src := tiny(c.normalizer, c.pre, "")
		if c.added != "" {
			src = strings.Replace(src, `"added_tokens":[]`, `"added_tokens":[`+c.added+`]`, 1)
		}
		tok, err := Parse([]byte(src), c.name)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := tok.LineAdditive(); got != c.want {
			t.Errorf("%s: LineAdditive() = %v, want %v", c.name, got, c.want)
		}
	}
}
