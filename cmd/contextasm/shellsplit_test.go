package main

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"npx -y @modelcontextprotocol/server-everything", []string{"npx", "-y", "@modelcontextprotocol/server-everything"}},
		{"  a\t b \n c  ", []string{"a", "b", "c"}},
		{`server --root '/my docs' --name "A \"B\" C"`, []string{"server", "--root", "/my docs", "--name", `A "B" C`}},
		{`a 'it''s' x`, []string{"a", "its", "x"}},
		{`a '' ""`, []string{"a", "", ""}},
		{`a\ b c\\d`, []string{"a b", `c\d`}},
		{`"a\nb" '\n'`, []string{`a\nb`, `\n`}},
		{"a \\\nb", []string{"a", "b"}},
		{`"x\$y" '$HOME' \$z`, []string{"x$y", "$HOME", "$z"}},
		{`sh -c 'cat | grep x'`, []string{"sh", "-c", "cat | grep x"}},
		{`über "straße"`, []string{"über", "straße"}},
		{`pre"mid"'post'`, []string{"premidpost"}},
	}
	for _, tt := range tests {
		got, err := splitCommand(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for in, want := range map[string]string{
		"":          "empty",
		"   ":       "empty",
		`a 'b`:      "unterminated single",
		`a "b`:      "unterminated double",
		`a \`:       "lone backslash",
		`a | b`:     "unquoted |",
		`a; b`:      "unquoted ;",
		`a $HOME`:   "unquoted $",
		`a "$HOME"`: "inside double quotes",
		"a `date`":  "unquoted `",
		`a > out`:   "unquoted >",
		`a && b`:    "unquoted &",
	} {
		if _, err := splitCommand(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("splitCommand(%q) error = %v, want one saying %q", in, err, want)
		}
	}
}
