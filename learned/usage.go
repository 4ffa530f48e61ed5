package learned

import (
	"fmt"
	"math"
	"slices"
)

// UsageWindow is how many reported usages a UsageLog keeps per model
// family: the margin is the worst of these, so an old outlier ages out
// after this many reports.
const UsageWindow = 64

// UsageLog is what approximate encodings ("approx:claude") learn their
// safety margins from: per model family, the usage providers reported. It
// is a plain value a host keeps where it likes (the CLI keeps it in a JSON
// file, --usage); it is not part of State, whose store moves only trust,
// heat and sessions.
type UsageLog map[string]Usage

// Usage is one model family's reported usage: for each report, the ratio
// of the input tokens the provider counted to the o200k_base tokens of the
// text sent, most recent last.
type Usage struct {
	// Ratios are the reported-to-o200k_base ratios, at most UsageWindow of
	// them, oldest first.
	Ratios []float64 `json:"ratios"`
}

// Observe records one provider-reported usage for a model family: counted
// is the o200k_base count of the text sent, reported the provider's input
// tokens for the call. l must not be nil.
func (l UsageLog) Observe(family string, counted, reported int) error {
	if counted <= 0 || reported <= 0 {
		return fmt.Errorf("learned: usage of %s: want positive counts (o200k_base %d, reported %d)", family, counted, reported)
	}
	ratios := append(slices.Clone(l[family].Ratios), float64(reported)/float64(counted))
	if len(ratios) > UsageWindow {
		ratios = ratios[len(ratios)-UsageWindow:]
	}
	l[family] = Usage{Ratios: ratios}
	return nil
}

// Ratio returns what an approximate counter of the family multiplies
// o200k_base counts by — the largest of the recent reports — and how many
// reports it rests on; 0 and 0 when none was reported.
func (l UsageLog) Ratio(family string) (float64, int) {
	u := l[family]
	r := 0.0
	for _, x := range u.Ratios {
		if !math.IsNaN(x) && !math.IsInf(x, 0) && x > r {
			r = x
		}
	}
	if r == 0 {
		return 0, 0
	}
	return r, len(u.Ratios)
}

// Clone returns a deep copy of l; never nil.
func (l UsageLog) Clone() UsageLog {
	c := make(UsageLog, len(l))
	for k, v := range l {
		c[k] = Usage{Ratios: slices.Clone(v.Ratios)}
	}
	return c
}
