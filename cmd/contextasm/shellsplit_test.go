package main

import (
	"slices"
	"strconv"
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

// quoteWords quotes each word in single quotes (a quote in it closes them,
// is escaped and opens them again) and joins
// them with spaces: a line splitCommand must split back into the words.
func quoteWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// FuzzSplitCommand holds the --mcp command lexer to its contract on any
// line: it never panics; it gives words or an error naming the line (or
// the empty command); and the words it gives, quoted again, split back
// into the same words.
func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{
		"npx -y @modelcontextprotocol/server-everything", `python3 "my server.py" --flag='a b'`, `a\ b c\\d`, "x \\\ny",
		`"a\"b" 'c'"d"`, `echo $HOME`, `a | b`, `"unterminated`, `'unterminated`, `trailing\`, "", "   ", `"$x"`, "tab\tsep\nline",
		`'it'\''s'`, `"\$\` + "`" + `"`, "ünï cödé 中文",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := splitCommand(line)
		if err != nil {
			if msg := err.Error(); msg != "empty command" && !strings.HasPrefix(msg, strconv.Quote(line)+": ") {
				t.Fatalf("error %q does not name the line", msg)
			}
			return
		}
		if len(words) == 0 {
			t.Fatal("no words and no error")
		}
		again, err := splitCommand(quoteWords(words))
		if err != nil || !slices.Equal(again, words) {
			t.Fatalf("%q: words %q quoted split as %q, %v", line, words, again, err)
		}
	})
}
