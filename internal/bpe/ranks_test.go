package bpe

import (
	"encoding/base64"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// formatRanks writes ranks in the rank file format, by rank.
func formatRanks(ranks map[string]int) []byte {
	toks := make([]string, 0, len(ranks))
	for tok := range ranks {
		toks = append(toks, tok)
	}
	slices.SortFunc(toks, func(a, b string) int { return ranks[a] - ranks[b] })
	var b strings.Builder
	for _, tok := range toks {
		b.WriteString(base64.StdEncoding.EncodeToString([]byte(tok)) + " " + strconv.Itoa(ranks[tok]) + "\n")
	}
	return []byte(b.String())
}

// FuzzParseRanks holds ParseRanks to its format on any input: it never
// panics; an error names the file and, for a line's problem, the line;
// and what it reads, written back, reads the same.
func FuzzParseRanks(f *testing.F) {
	for _, s := range []string{
		"", "YQ== 0\n", "YQ== 0\nYg== 1\nYWI= 2\n", "YQ== 0\r\nYg== 1\r\n", "YQ==  0\n", "YQ== -1\n",
		"YQ== 0\nYQ== 1\n", "!!! 3\n", "YQ==\n", "YQ== 99999999999\n", "\n\nYQ== 7", "IA== 220\nCg== 198\n",
	} {
		f.Add([]byte(s))
	}
	where := regexp.MustCompile(`^bpe: ranks\.txt:\d+: `)
	f.Fuzz(func(t *testing.T, data []byte) {
		ranks, err := ParseRanks(data, "ranks.txt")
		if err != nil {
			if !where.MatchString(err.Error()) || !errors.Is(err, ErrInvalidRanks) {
				t.Fatalf("error %q does not name the file and line", err)
			}
			return
		}
		again, err := ParseRanks(formatRanks(ranks), "again.txt")
		if err != nil {
			t.Fatalf("ranks written back do not read: %v", err)
		}
		if len(again) != len(ranks) {
			t.Fatalf("%d ranks read back as %d", len(ranks), len(again))
		}
		for tok, r := range ranks {
			if again[tok] != r {
				t.Fatalf("token %q: rank %d read back as %d", tok, r, again[tok])
			}
		}
	})
}
