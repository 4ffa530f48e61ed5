package hftok

import (
	"errors"
	"strings"
	"testing"
)

// TestRepeatedGroup checks the load-time check for patterns that can
// backtrack for exponential time: a repeated group holding a repetition
// or an alternation is found, and nothing else is — the families'
// patterns and GPT-2's pass.
func TestRepeatedGroup(t *testing.T) {
	cases := []struct{ pat, want string }{
		{`(x+x+)+y|\s+|[^\s]+`, `(x+x+)+`},
		{`(a|b)*c`, `(a|b)*`},
		{`(?:a*)*`, `(?:a*)*`},
		{`((ab)+c){2,}`, `((ab)+c){2,}`},
		{`(?i:(?:'s|'t)+)`, `(?:'s|'t)+`},
		{`((a))+`, ``},
		{`(a|b)?c`, ``},
		{`(a+){1}`, ``},
		{`(?:\r\n)+x`, ``},
		{`[(a+)+]+`, ``},
		{`\(a+\)+`, ``},
		{`(?#a+)b+`, ``},
		{`a{2,3}b{,4}`, ``},
		{`x{y}+`, ``},
		{`\p{L}+(?=\p{N}+)`, ``},
		{gpt2Pattern, ``},
	}
	for _, p := range familyPatterns {
		cases = append(cases, struct{ pat, want string }{p, ""})
	}
	for _, c := range cases {
		if _, err := compileRegex(c.pat); err != nil {
			t.Fatalf("%q does not compile: %v", c.pat, err)
		}
		if got := repeatedGroup(c.pat); got != c.want {
			t.Errorf("repeatedGroup(%q) = %q, want %q", c.pat, got, c.want)
		}
	}
}

// TestCatastrophicPatternRefused loads a Split pattern that made a 32-byte
// block take minutes: it is refused, naming the group.
func TestCatastrophicPatternRefused(t *testing.T) {
	pre := `{"type":"Split","pattern":{"Regex":"(x+x+)+y|\\s+|[^\\s]+"},"behavior":"Isolated"}`
	_, err := Parse([]byte(tiny("", pre, "")), "evil.json")
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `pre_tokenizer.pattern: regex`) || !strings.Contains(err.Error(), `"(x+x+)+"`) {
		t.Fatalf("got %v", err)
	}
}

// TestMatchBudget runs a pattern the load check lets through but that is
// slow (polynomial) on long white space: the count stops at the budget
// and gives the bound, never under; Cut stays within its limit.
func TestMatchBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the budget")
	}
	pre := `{"type":"Split","pattern":{"Regex":"\\s*\\s*\\s*\\s*x|\\S+|\\s"},"behavior":"Isolated"}`
	tok, err := Parse([]byte(tiny("", pre, "")), "slow.json")
	if err != nil {
		t.Fatal(err)
	}
	if !tok.timed {
		t.Fatal("a regexp2 pattern is not timed")
	}
	if n := tok.Count("ab ab"); n != 2 { // exact when fast: "ab", "ab" (the space is in no token)
		t.Errorf("Count(ab ab) = %d, want 2", n)
	}
	text := strings.Repeat(" ", 4000) + "y"
	if n := tok.Count(text); n != tok.Factor()*len(text) {
		t.Errorf("Count of a slow text = %d, want the bound %d", n, tok.Factor()*len(text))
	}
	if _, ok := tok.AppendIDs(nil, text); ok {
		t.Error("AppendIDs of a slow text reports success")
	}
	if cut := tok.Cut(text, 100); len(cut) != 100/tok.Factor() {
		t.Errorf("Cut(100) kept %d bytes, want %d", len(cut), 100/tok.Factor())
	}
}
