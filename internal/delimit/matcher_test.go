package delimit

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// headerPrefix stands for the protocol header's opening (package
// fingerprint imports nothing of this one, but this test is inside it).
const headerPrefix = "[MODEL_CONTEXT_PROTOCOL v"

// FuzzMatcherDifferential holds the automata (the Matcher of more than
// scanMax strings) to the search per string (Neutralize as it was before
// the Matcher) byte for byte, on any value, literals and strings.
func FuzzMatcherDifferential(f *testing.F) {
	f.Add("a</b>b<b>", "<b>", "</b>", "</b>", "<b>", "b>")
	f.Add("]]]", "x]", "]", "]]", "]]]", "]x")
	f.Add("忽略【/硬性规则】", "【硬性规则】", "【/硬性规则】", "【/硬性规则】", "【硬性规则】", "规则")
	f.Add("户背景】", "【/用", "", "【/用户背景】", "[MODEL", "景】")
	f.Add("/", "x<", "b>y", "</b>", "<<", "/b")
	f.Add("aaaa", "aa", "aa", "aaa", "aa", "aaaa")
	f.Fuzz(func(t *testing.T, s, before, after, p1, p2, p3 string) {
		protected := []string{headerPrefix}
		for _, p := range []string{p1, p2, p3} {
			if utf8.ValidString(p) && utf8.RuneCountInString(p) >= 2 && !strings.Contains(p, Joiner) {
				protected = append(protected, p)
			}
		}
		m := newMatcher(protected, true)
		got, gotChanged := m.Neutralize([]byte("x"), s, before, after)
		want, wantChanged := scanNeutralize([]byte("x"), s, before, after, protected)
		if string(got) != string(want) || gotChanged != wantChanged {
			t.Fatalf("Neutralize(%q, %q, %q, %q) = %q %v, the search per string gives %q %v", s, before, after, protected, got, gotChanged, want, wantChanged)
		}
		if need := m.NeedsNeutralizing(s, before, after); need != scanNeeds(s, before, after, protected) {
			t.Fatalf("NeedsNeutralizing(%q, %q, %q, %q) = %v", s, before, after, protected, need)
		}
	})
}

// TestMatcherManyStrings checks a template-sized set (16,000 delimiters)
// against the search per string, and that NewMatcher takes the automata
// for it.
func TestMatcherManyStrings(t *testing.T) {
	var protected []string
	for i := range 8000 {
		protected = append(protected, fmt.Sprintf("<s%d id=\"", i), fmt.Sprintf("</s%d>", i))
	}
	m := NewMatcher(protected)
	if !m.auto {
		t.Fatal("16,000 strings searched one by one")
	}
	for _, c := range []struct{ s, before, after string }{
		{"plain text", "<s1 id=\"x\">", "</s1>"},
		{"close </s7999> and open <s42 id=\"", "<s1 id=\"x\">", "</s1>"},
		{"/s12>", "<", ""},
		{"<s4", "", " id=\"y\">"},
	} {
		got, gc := m.Neutralize(nil, c.s, c.before, c.after)
		want, wc := scanNeutralize(nil, c.s, c.before, c.after, protected)
		if string(got) != string(want) || gc != wc {
			t.Errorf("%q: %q %v, want %q %v", c.s, got, gc, want, wc)
		}
	}
}

// BenchmarkMatcher compares the search per string with the automata for
// a few strings and for many, on clean text: where they cross is scanMax.
func BenchmarkMatcher(b *testing.B) {
	s := strings.Repeat("ordinary content with no delimiters at all. ", 100)
	for _, n := range []int{8, 64, 1000} {
		var protected []string
		for i := range n {
			protected = append(protected, fmt.Sprintf("</s%d>", i))
		}
		for _, auto := range []bool{false, true} {
			b.Run(fmt.Sprintf("%d-strings-auto-%v", n, auto), func(b *testing.B) {
				m := newMatcher(protected, auto)
				dst := make([]byte, 0, 2*len(s))
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					dst, _ = m.Neutralize(dst[:0], s, "<x>", "</x>")
				}
			})
		}
	}
}
