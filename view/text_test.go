package view

import (
	"strings"
	"testing"
)

func TestRuneWidth(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"abc", 3},
		{"", 0},
		{"硬性规则", 8},         // CJK ideographs: wide
		{"【用户背景】", 12},      // CJK brackets: wide
		{"ｆｕｌｌ", 8},         // fullwidth Latin
		{"한국어", 6},          // Hangul
		{"カタカナ", 8},         // Katakana
		{"ｶﾀｶﾅ", 4},         // halfwidth Katakana: narrow
		{"e\u0301", 1},      // combining acute: zero
		{"a\u2060b", 2},     // word joiner: zero
		{"€ é ß", 5},        // narrow non-ASCII
		{"█▏", 2},           // block elements (ambiguous): one column each
		{"🙂", 2},            // emoji: wide
		{"português", 9},    // precomposed
		{"mcp:文件:x.md", 13}, // mixed
	}
	for _, tt := range tests {
		if got := textWidth(tt.s); got != tt.want {
			t.Errorf("textWidth(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestEllipsis(t *testing.T) {
	tests := []struct {
		s    string
		w    int
		want string
	}{
		{"turn-04-agent", 20, "turn-04-agent"},
		{"turn-04-agent", 13, "turn-04-agent"},
		{"mcp:docs:file:///srv/handbook/loans.md", 20, "mcp:docs:f…/loans.md"},
		{"硬性规则硬性规则", 9, "硬性…规则"}, // 2+2 + 1 + 2+2 columns
		{"硬性规则硬性规则", 8, "硬性…则"},  // a wide rune that does not fit is left out
		{"abcdef", 1, "…"},
		{"abcdef", 0, ""},
	}
	for _, tt := range tests {
		got := ellipsis(tt.s, tt.w)
		if got != tt.want {
			t.Errorf("ellipsis(%q, %d) = %q, want %q", tt.s, tt.w, got, tt.want)
		}
		if textWidth(got) > tt.w {
			t.Errorf("ellipsis(%q, %d) = %q is %d columns", tt.s, tt.w, got, textWidth(got))
		}
	}
}

func TestCleanEscapesTerminalControls(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain-id", "plain-id"},
		{"red\x1b[31mtext", `red\x1b[31mtext`},
		{"tab\there", `tab\x09here`},
		{"rtl\u202eevil", `rtl\u202eevil`},
		{"joiner\u2060kept", "joiner\u2060kept"},
		{"bad\xffbyte", `bad\xffbyte`},
		{"文件", "文件"},
	}
	for _, tt := range tests {
		if got := clean(tt.in); got != tt.want {
			t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWrap(t *testing.T) {
	got := wrap("removed to fit the budget (lowest-priority section, lowest rank first)", 30, 40)
	want := []string{"removed to fit the budget", "(lowest-priority section, lowest rank", "first)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrap = %q, want %q", got, want)
	}
	for _, l := range wrap(strings.Repeat("x", 100)+" y", 10, 10) {
		if textWidth(l) > 10 {
			t.Errorf("wrap line %q wider than 10", l)
		}
	}
}
