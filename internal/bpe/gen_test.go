package bpe

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// genAtoms are the characters and strings random texts are made of: every
// class the pre-tokenizers tell apart (upper, lower, title, modifier and
// other letters, the three kinds of marks, digits of several kinds, white
// space of every kind, newlines, punctuation and symbols), the characters
// their patterns name ('\”, '/', ' ', the contraction letters, ſ), and
// runs of them that make the longer pieces.
var genAtoms = []string{
	"a", "b", "z", "A", "Q", "Z", "s", "S", "t", "T", "r", "R", "e", "E", "v", "V", "m", "M", "l", "L", "d", "D",
	"'", "'", "'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'LL", "'d", "'x", "ſ", "'ſ", "K", "İ", "ı",
	"é", "É", "ß", "ç", "ñ", "ǅ", "ʰ", "ˆ", "ª", "中", "文", "字", "か", "ア", "한", "ا", "ل", "م", "ع",
	"п", "Р", "ω", "Σ", "ς", "न", "्", "ि", "\u0301", "\u0308", "\u20dd", "\u0903", "\u064b",
	"0", "1", "7", "42", "12345", "²", "½", "٣", "٤", "Ⅻ", "〇", "①", "𝟙",
	" ", " ", "  ", "   ", "\t", "\n", "\n", "\n\n", "\r\n", "\r", "\v", "\f", "\u0085", "\u00a0", "\u1680", "\u2003",
	"\u2028", "\u2029", "\u202f", "\u3000",
	".", ",", ";", ":", "!", "?", "-", "_", "(", ")", "{", "}", "[", "]", "<", ">", "\"", "/", "//", "\\",
	"|", "#", "@", "$", "€", "%", "^", "&", "*", "+", "=", "~", "`", "—", "…", "。", "，", "【", "】", "「",
	"😀", "👍🏽", "🇵🇹", "👩‍💻", "\u200d", "\u2060", "\ufeff", "\x00", "\x1f", "\x7f", "\ue000", "\U000f0000",
	"hello", " world", "Hello", "HELLO", "don't", "WeIRD", "camelCase", "memória", "ação", "你好", "<|endoftext|>",
	"\n/", "/\n", "./", " .", " ,\n", ".\n\n", "\t\n", " \n ", "\n\t", "\u0301.", "A\u0301", "a\u0301b",
}

// genText returns a random text of up to maxAtoms atoms.
func genText(r *rand.Rand, maxAtoms int) string {
	var b strings.Builder
	for range r.IntN(maxAtoms + 1) {
		b.WriteString(genAtoms[r.IntN(len(genAtoms))])
	}
	return b.String()
}

// newerRanges hold the code points Unicode assigned after version 15.0
// (Go's tables) up to 17.0, small gaps merged: the characters whose class
// Go's tables cannot tell.
var newerRanges = [][2]rune{
	{0x88F, 0x897}, {0xC5C, 0xC5C}, {0xCDC, 0xCDC}, {0x1ACF, 0x1AEB}, {0x1B4E, 0x1B4F}, {0x1B7F, 0x1B7F},
	{0x1C89, 0x1C8A}, {0x20C1, 0x20C1}, {0x2427, 0x2429}, {0x2B96, 0x2B96}, {0x2FFC, 0x2FFF}, {0x31E4, 0x31EF},
	{0xA7CB, 0xA7DC}, {0xA7F1, 0xA7F1}, {0xFBC3, 0xFBD2}, {0xFD90, 0xFD91}, {0xFDC8, 0xFDCE}, {0x105C0, 0x105F3},
	{0x10940, 0x10959}, {0x10D40, 0x10D8F}, {0x10EC2, 0x10ED8}, {0x10EFA, 0x10EFC}, {0x11380, 0x113E2},
	{0x116D0, 0x116E3}, {0x11B60, 0x11B67}, {0x11BC0, 0x11BF9}, {0x11DB0, 0x11DE9}, {0x11F5A, 0x11F5A},
	{0x13460, 0x143FA}, {0x16100, 0x16139}, {0x16D40, 0x16D79}, {0x16EA0, 0x16ED3}, {0x16FF2, 0x16FF6},
	{0x187F8, 0x187FF}, {0x18CFF, 0x18D1E}, {0x18D80, 0x18DF2}, {0x1CC00, 0x1CEF0}, {0x1E5D0, 0x1E5FF},
	{0x1E6C0, 0x1E6FF}, {0x1F6D8, 0x1F6D8}, {0x1F777, 0x1F77A}, {0x1F8B2, 0x1F8D8}, {0x1FA54, 0x1FA57},
	{0x1FA89, 0x1FA8F}, {0x1FABE, 0x1FAEF}, {0x1FBCB, 0x1FBFA}, {0x2B73A, 0x2B73F}, {0x2CEA2, 0x2CEAD},
	{0x2EBF0, 0x2EE5D}, {0x323B0, 0x33479}, {0x295, 0x295},
}

// genRune returns a random valid character: one Unicode assigned after
// Go's tables, or from anywhere in Unicode (unassigned code points
// included), or from the BMP, or ASCII.
func genRune(r *rand.Rand) rune {
	for {
		var c rune
		switch r.IntN(5) {
		case 4:
			rg := newerRanges[r.IntN(len(newerRanges))]
			c = rg[0] + rune(r.IntN(int(rg[1]-rg[0]+1)))
		case 0:
			c = rune(r.IntN(unicode.MaxRune + 1))
		case 1:
			c = rune(r.IntN(0x10000))
		case 2:
			c = rune(r.IntN(0x30000)) // the supplementary planes in use
		default:
			c = rune(r.IntN(0x80))
		}
		if utf8.ValidRune(c) {
			return c
		}
	}
}

// genUnicode returns a random text mixing atoms and arbitrary characters.
func genUnicode(r *rand.Rand, maxParts int) string {
	var b strings.Builder
	for range r.IntN(maxParts + 1) {
		if r.IntN(3) == 0 {
			b.WriteRune(genRune(r))
		} else {
			b.WriteString(genAtoms[r.IntN(len(genAtoms))])
		}
	}
	return b.String()
}

// known reports whether every character of text is one Go's tables know.
func known(text string) bool {
	return classesOfText(text)&cUnknown == 0
}

func classesOfText(text string) uint8 {
	var all uint8
	for _, r := range text {
		all |= classes().of(r)
	}
	return all
}

// cjkChars are frequent characters of text without spaces: Chinese,
// Japanese kana, Korean, their punctuation and full-width forms.
const cjkChars = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跑根话语言客户要求周五之前完成转账并希望了解所有手续费根据最新的政策债务收入比超过百分四十三申请需人工审核あいうえおかきくけこアイウエオカキクケコ한국어입니다ქართულიენა，。、；：？！「」『』（）【】《》〈〉…—～ＡＢＣ１２３"

// genCJK returns a random run of CJK characters, with now and then a
// space, a digit run or a Latin word.
func genCJK(r *rand.Rand, max int) string {
	chars := []rune(cjkChars)
	var b strings.Builder
	for range r.IntN(max + 1) {
		switch r.IntN(20) {
		case 0:
			b.WriteByte(' ')
		case 1:
			b.WriteString("2026")
		case 2:
			b.WriteString("API")
		case 3:
			b.WriteRune(rune(0x4e00 + r.IntN(0x9fff-0x4e00+1)))
		default:
			b.WriteRune(chars[r.IntN(len(chars))])
		}
	}
	return b.String()
}
