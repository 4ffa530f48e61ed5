package feedback

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// largePatterns are five patterns of about a thousand instructions each,
// all alive at once on lower-case text: before the bound, checking them
// against a 1 MB response took 75 s.
func largePatterns() []Block {
	var pats []*regexp.Regexp
	for _, c := range "vwxyz" {
		pats = append(pats, regexp.MustCompile(`[a-z ]{997}`+string(c)))
	}
	return []Block{{RequestID: "rule", Trust: 0.5, Patterns: pats}, {RequestID: "ctx", Trust: 0.5}}
}

func TestEvaluateBoundsPatternWork(t *testing.T) {
	mb := strings.Repeat("lorem ipsum dolor sit amet ", 1<<20/27)
	tests := []struct {
		name     string
		lim      Limits
		blocks   []Block
		response string
		want     string // "" for no error
	}{
		{"the issue's case is refused, not run", Limits{}, largePatterns(), mb,
			"5 patterns of 5000 compiled instructions in all, over 1048572 bytes"},
		{"a response over the byte bound", Limits{}, []Block{{RequestID: "r", Patterns: []*regexp.Regexp{regexp.MustCompile(`x`)}}},
			mb + strings.Repeat("y", 1<<20), "more than the 1048576 checked (Limits.MaxResponseBytes)"},
		{"within the bounds", Limits{}, largePatterns(), mb[:2000], ""},
		{"a raised bound", Limits{MaxMatchWork: 1 << 40, MaxResponseBytes: 1 << 21}, []Block{{RequestID: "r", Patterns: []*regexp.Regexp{regexp.MustCompile(`(?i)x+y`)}}},
			mb + mb, ""},
		{"no patterns, no bound", Limits{}, []Block{{RequestID: "ctx"}}, mb + mb + mb, ""},
		{"negative limits", Limits{MaxMatchWork: -1}, largePatterns(), "", "negative Limits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.lim.Evaluate(tt.blocks, tt.response, Policy{})
			if tt.want == "" {
				if err != nil || res == nil {
					t.Fatalf("Evaluate = %v, %v", res, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || res != nil {
				t.Fatalf("Evaluate = %v, %v; want an error containing %q", res, err, tt.want)
			}
			if tt.lim.MaxMatchWork >= 0 && !errors.Is(err, ErrResponseTooLarge) {
				t.Errorf("%v does not wrap ErrResponseTooLarge", err)
			}
		})
	}
}

// The worst case the default bounds allow, for the record: patterns at
// the work bound, all alive on every byte.
func BenchmarkEvaluateWorstCase(b *testing.B) {
	blocks := largePatterns()
	n := int(DefaultMaxMatchWork / 5000)
	response := strings.Repeat("lorem ipsum dolor sit amet ", n/27+1)[:n]
	b.ReportAllocs()
	b.SetBytes(int64(n))
	for b.Loop() {
		if _, err := Evaluate(blocks, response, Policy{}); err != nil {
			b.Fatal(err)
		}
	}
}
