package bpe

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// A plan's cuts count exactly the tokens the plan says, are prefixes that
// never split a character, grow with the room, and lose at most one piece
// to Cut, which may end inside one.
func TestCutPlan(t *testing.T) {
	for _, enc := range []string{O200kBase, CL100kBase} {
		tok, err := Load(enc)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(5, 8))
		for range 150 {
			var b strings.Builder
			for range 1 + r.IntN(30) {
				b.WriteString(additivePieces[r.IntN(len(additivePieces))])
			}
			text := b.String()
			plan, ok := tok.PlanCuts(text)
			if !ok {
				t.Fatalf("no plan for ordinary text %q", text)
			}
			if plan.Tokens() != tok.Count(text) {
				t.Fatalf("%s: plan counts %d, Count %d for %q", enc, plan.Tokens(), tok.Count(text), text)
			}
			prev := ""
			for n := 0; n <= plan.Tokens()+1; n++ {
				cut := plan.Cut(text, n)
				if !strings.HasPrefix(text, cut) || !utf8.ValidString(cut) || len(cut) < len(prev) {
					t.Fatalf("%s: Cut(%q, %d) = %q", enc, text, n, cut)
				}
				want := plannedTokens(plan, len(cut))
				if cut == text {
					want = plan.Tokens()
				}
				if c := tok.Count(cut); c > n || c != want {
					t.Fatalf("%s: Cut(%q, %d) = %q counts %d, the plan says %d", enc, text, n, cut, c, want)
				}
				if n >= plan.Tokens() && cut != text {
					t.Fatalf("%s: Cut with room for all of %q = %q", enc, text, cut)
				}
				prev = cut
			}
		}
	}
	tok, _ := Load(O200kBase)
	if _, ok := tok.PlanCuts(strings.Repeat("a", 3*MaxPieceBytes)); ok {
		t.Error("a plan for hostile text: Cut must handle it")
	}
	plan, _ := tok.PlanCuts("The applicant's income is EUR 3,450.")
	if got := plan.Cut("The applicant's income is EUR 3,450.", 3); got != "The applicant's" {
		t.Errorf("Cut to 3 tokens = %q, want the words that fit", got)
	}
}

// plannedTokens is what the plan says a prefix of length end counts.
func plannedTokens(p CutPlan, end int) int {
	for i, e := range p.ends {
		if int(e) == end {
			return int(p.tokens[i])
		}
	}
	return 0
}

func FuzzCutPlan(f *testing.F) {
	f.Add("é\r😀a/b/path's<rule id=\"x\">\\ção\u00a0\u00a0【/硬性规则】123", 16)
	f.Add("The applicant's income is EUR 3,450.", 3)
	f.Add("a  b\n\n c", 2)
	tok, err := Load(O200kBase)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, n int) {
		if !utf8.ValidString(text) || len(text) > 2048 || n < 0 || n > 4096 {
			return
		}
		plan, ok := tok.PlanCuts(text)
		if !ok {
			return
		}
		cut := plan.Cut(text, n)
		want := plannedTokens(plan, len(cut))
		if cut == text {
			want = plan.Tokens()
		}
		if !strings.HasPrefix(text, cut) || tok.Count(cut) != want || want > max(n, 0) && cut != text || plan.Tokens() != tok.Count(text) {
			t.Fatalf("Cut(%q, %d) = %q counts %d, plan says %d (total %d, Count %d)", text, n, cut, tok.Count(cut), want, plan.Tokens(), tok.Count(text))
		}
	})
}

// CutPlanned keeps the contract of Cut (a prefix, whole characters, at most
// n tokens, everything when it fits), is never shorter than the plan's
// whole-piece cut, and gives what Cut gives, with a fraction of the work.
func TestCutPlanned(t *testing.T) {
	for _, enc := range []string{O200kBase, CL100kBase} {
		tok, err := Load(enc)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(6, 1))
		same, all := 0, 0
		for range 150 {
			var b strings.Builder
			for range 1 + r.IntN(30) {
				b.WriteString(additivePieces[r.IntN(len(additivePieces))])
			}
			text := b.String()
			plan, _ := tok.PlanCuts(text)
			for n := 0; n <= plan.Tokens()+1; n++ {
				got := tok.CutPlanned(plan, text, n)
				if !strings.HasPrefix(text, got) || !utf8.ValidString(got) || tok.Count(got) > n ||
					len(got) < len(plan.Cut(text, n)) || (n >= plan.Tokens() && got != text) {
					t.Fatalf("%s: CutPlanned(%q, %d) = %q (%d tokens), plan cut %q", enc, text, n, got, tok.Count(got), plan.Cut(text, n))
				}
				all++
				if want := tok.Cut(text, n); got != want {
					t.Errorf("%s: CutPlanned(%q, %d) = %q, Cut = %q", enc, text, n, got, want)
				} else {
					same++
				}
			}
		}
		t.Logf("%s: CutPlanned equals Cut in %d of %d cuts", enc, same, all)
	}
}
