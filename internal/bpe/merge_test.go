package bpe

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The heap merge must join in exactly the order of the scan (tiktoken's):
// compared on pieces long enough for both, built to have many ties.
func TestMergeLargeMatchesSmall(t *testing.T) {
	for _, enc := range encodings {
		tk := load(t, enc)
		r := rand.New(rand.NewPCG(9, 9))
		for range 3000 {
			var b strings.Builder
			for b.Len() < 2+r.IntN(smallPiece-1) {
				switch r.IntN(4) {
				case 0:
					b.WriteString(strings.Repeat("a", 1+r.IntN(9)))
				case 1:
					b.WriteString("中文字符规则"[r.IntN(6)*3:][:3])
				case 2:
					b.WriteString([]string{"ing", "the", "ab", "ba", "\xe4", "\x80", " ", "0"}[r.IntN(8)])
				default:
					b.WriteByte(byte(r.IntN(256)))
				}
			}
			piece := b.String()
			if len(piece) > smallPiece {
				piece = piece[:smallPiece]
			}
			var buf [smallPiece + 1]part
			var small []int32
			for _, p := range tk.voc.mergeSmall(piece, buf[:])[1:] {
				small = append(small, p.start)
			}
			next := tk.voc.mergeLarge(piece)
			var large []int32
			for i := next[0]; ; i = next[i] {
				large = append(large, i)
				if int(i) == len(piece) {
					break
				}
			}
			if !slices.Equal(small, large) {
				t.Fatalf("%s: %q: scan %v, heap %v", enc, piece, small, large)
			}
			if got := tk.voc.countLarge(piece); got != len(small) {
				t.Fatalf("%s: countLarge = %d, want %d", enc, got, len(small))
			}
		}
	}
}

// Long pieces (above smallPiece) against tiktoken-go.
func TestLongPiecesMatchTiktokenGo(t *testing.T) {
	for _, enc := range encodings {
		tk := load(t, enc)
		o := loadOracle(t, enc)
		for _, text := range []string{
			strings.Repeat("中文字符规则硬性", 40),
			strings.Repeat("a", 700),
			strings.Repeat("ab", 600),
			strings.Repeat("!?", 500),
			strings.Repeat(" ", 1500),
			strings.Repeat("Ж", 900),
		} {
			if got, want := tk.Count(text), len(o.enc.EncodeOrdinary(text)); got != want {
				t.Errorf("%s: Count(%q…) = %d, tiktoken-go %d", enc, text[:9], got, want)
			}
		}
	}
}
