package feedback

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/contextasm/contextasm/internal/pattern"
)

// ErrConstraintViolation means the model's response matched a violation
// pattern of a break_on_violation constraint that was in its context.
var ErrConstraintViolation = errors.New("CONSTRAINT_VIOLATION")

// ViolationError lists the violations. It wraps [ErrConstraintViolation].
type ViolationError struct {
	// Violations are the patterns the response matched, block by block.
	Violations []Violation
}

// Error names each violated block and pattern, one a line.
func (e *ViolationError) Error() string {
	var b strings.Builder
	for i, v := range e.Violations {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "CONSTRAINT_VIOLATION: block %q: the response matches %q", v.RequestID, v.Pattern)
	}
	return b.String()
}

// Unwrap returns [ErrConstraintViolation].
func (e *ViolationError) Unwrap() error { return ErrConstraintViolation }

// Policy moves trust by where a block is first cited. Trust stays within
// [Floor, Ceiling].
//
// Each field left zero takes its value from [DefaultPolicy], so
// Policy{EndGain: -0.1} keeps the default start gain and ceiling. A Ceiling
// below zero also means the default.
type Policy struct {
	StartGain  float64 // added when first cited in the first third
	MiddleGain float64 // … in the middle third
	EndGain    float64 // … in the last third
	Floor      float64 // the lowest trust a citation leaves (default 0)
	Ceiling    float64 // the highest (default 0.99; below zero also means it)
}

// DefaultPolicy returns the default policy: +0.05 for a first-third
// citation, nothing for later ones, trust within [0, 0.99].
func DefaultPolicy() Policy { return Policy{StartGain: 0.05, Ceiling: 0.99} }

// WithDefaults returns p with each zero field set to its default.
func (p Policy) WithDefaults() Policy {
	d := DefaultPolicy()
	if p.StartGain == 0 {
		p.StartGain = d.StartGain
	}
	if p.MiddleGain == 0 {
		p.MiddleGain = d.MiddleGain
	}
	if p.EndGain == 0 {
		p.EndGain = d.EndGain
	}
	if p.Floor == 0 {
		p.Floor = d.Floor
	}
	if p.Ceiling <= 0 {
		p.Ceiling = d.Ceiling
	}
	return p
}

// Apply returns the trust after a first citation at pos.
func (p Policy) Apply(trust float64, pos Position) float64 {
	p = p.WithDefaults()
	switch pos {
	case Start:
		trust += p.StartGain
	case Middle:
		trust += p.MiddleGain
	case End:
		trust += p.EndGain
	}
	// Round to 1e-9 so that repeated gains do not accumulate float noise
	// into the state file (0.55 rather than 0.5500000000000002).
	trust = float64(int64(trust*1e9+0.5)) / 1e9
	return min(max(trust, p.Floor), p.Ceiling)
}

// Gain returns the trust a first citation at pos adds, before clamping.
func (p Policy) Gain(pos Position) float64 {
	p = p.WithDefaults()
	switch pos {
	case Start:
		return p.StartGain
	case Middle:
		return p.MiddleGain
	case End:
		return p.EndGain
	}
	return 0
}

// Bounds returns the range the policy keeps trust in.
func (p Policy) Bounds() (floor, ceiling float64) {
	p = p.WithDefaults()
	return p.Floor, p.Ceiling
}

// Block is one block that was in the rendered context, as feedback needs it.
type Block struct {
	// RequestID is the block's request_id.
	RequestID string
	// Trust is the block's trust before the response (learned, or else
	// declared): where a citation moves it from.
	Trust float64
	// Patterns are the compiled violation_patterns of a break_on_violation
	// constraint; nil for every other block.
	Patterns []*regexp.Regexp
}

// Ref is a block's first citation in a response.
type Ref struct {
	// RequestID (request_id) is the cited block's id.
	RequestID string `json:"request_id"`
	// Type is the tag's type attribute, as the model wrote it; empty when the
	// tag has none.
	Type string `json:"type"`
	// Position is the third of the response the block was first cited in.
	Position Position `json:"position"`
}

// TrustChange is one block's trust moving.
type TrustChange struct {
	// RequestID (request_id) is the block whose trust moved.
	RequestID string `json:"request_id"`
	// From is the trust before the citation.
	From float64 `json:"from"`
	// To is the trust after it, within the policy's bounds.
	To float64 `json:"to"`
}

// Violation is one violation pattern a response matched.
type Violation struct {
	// RequestID (request_id) is the break_on_violation constraint's id.
	RequestID string `json:"request_id"`
	// Pattern is the violation pattern the response matched, as declared.
	Pattern string `json:"pattern"`
}

// Result is what feedback learned from one response.
type Result struct {
	// Refs are the cited blocks that were in the context, each once, in
	// order of first citation.
	Refs []Ref `json:"refs"`
	// UnknownRefs (unknown_refs) are the ids cited that were not in the
	// context, each once, in order.
	UnknownRefs []string `json:"unknown_refs"`
	// TrustChanges (trust_changes) are the trust the citations moved.
	TrustChanges []TrustChange `json:"trust_changes"`
	// Violations are the violation patterns the response matched.
	Violations []Violation `json:"violations"`
	// ModelResponseHash (model_response_hash) is "sha256:" and the hex
	// SHA-256 of the response.
	ModelResponseHash string `json:"model_response_hash"`
}

// Err returns a *ViolationError when the result holds violations, else nil.
func (r *Result) Err() error {
	if len(r.Violations) == 0 {
		return nil
	}
	return &ViolationError{Violations: r.Violations}
}

// HashResponse returns "sha256:" and the hex SHA-256 of a response.
func HashResponse(response string) string {
	sum := sha256.Sum256([]byte(response))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Bounds of checking violation patterns against a response (see
// [Limits]).
const (
	// DefaultMaxResponseBytes is the longest response checked against
	// violation patterns when Limits.MaxResponseBytes is zero.
	DefaultMaxResponseBytes = 1 << 20
	// DefaultMaxMatchWork bounds, when Limits.MaxMatchWork is zero, the
	// compiled size of all the patterns checked times the response's
	// length: at most that many matching steps, a few seconds at the very
	// worst (BenchmarkEvaluateWorstCase measures it).
	DefaultMaxMatchWork = 1 << 26
)

// ErrResponseTooLarge means a response is too long to check against the
// violation patterns of its context within [Limits]; nothing was
// evaluated or learned. It is wrapped with the figures.
var ErrResponseTooLarge = errors.New("feedback: response too large to check against the violation patterns")

// Limits bound the work of checking violation patterns. RE2 matching
// never backtracks, but costs up to one step per instruction of a
// pattern's compiled program per byte of response: five patterns of a
// thousand instructions take over a minute on a 1 MB response. So a
// response is checked only when it is at most MaxResponseBytes long and
// the patterns' total compiled size times its length is at most
// MaxMatchWork; otherwise Evaluate fails with ErrResponseTooLarge rather
// than skip a check. Responses of contexts without patterns are not
// bounded. Zero fields mean the defaults; negative ones are errors.
type Limits struct {
	MaxResponseBytes int   // DefaultMaxResponseBytes
	MaxMatchWork     int64 // DefaultMaxMatchWork
}

// Validate reports a negative field (zero ones mean the defaults).
func (l Limits) Validate() error {
	if l.MaxResponseBytes < 0 || l.MaxMatchWork < 0 {
		return fmt.Errorf("feedback: negative Limits (%+v)", l)
	}
	return nil
}

// check returns an error when blocks' patterns may not be matched against
// a response of n bytes.
func (l Limits) check(blocks []Block, n int) error {
	if err := l.Validate(); err != nil {
		return err
	}
	maxBytes, maxWork := cmp.Or(l.MaxResponseBytes, DefaultMaxResponseBytes), cmp.Or(l.MaxMatchWork, DefaultMaxMatchWork)
	var size int64
	count := 0
	for i := range blocks {
		for _, re := range blocks[i].Patterns {
			s, err := pattern.Size(re.String())
			if err != nil {
				return fmt.Errorf("feedback: block %q: pattern %q: %w", blocks[i].RequestID, re.String(), err)
			}
			size += int64(s)
			count++
		}
	}
	switch {
	case count == 0:
		return nil
	case n > maxBytes:
		return fmt.Errorf("%w: it is %d bytes, more than the %d checked (Limits.MaxResponseBytes)", ErrResponseTooLarge, n, maxBytes)
	case size*int64(n) > maxWork:
		return fmt.Errorf("%w: %d patterns of %d compiled instructions in all, over %d bytes, take up to %d matching steps, more than the limit of %d (Limits.MaxMatchWork)",
			ErrResponseTooLarge, count, size, n, size*int64(n), maxWork)
	}
	return nil
}

// Evaluate reads response against the blocks that were in its context,
// under the default [Limits]. Refs are one per cited block, in order of
// first citation; unknown refs are ids cited but not in the context, each
// once, in order.
func Evaluate(blocks []Block, response string, p Policy) (*Result, error) {
	return Limits{}.Evaluate(blocks, response, p)
}

// Evaluate is [Evaluate] under l.
func (l Limits) Evaluate(blocks []Block, response string, p Policy) (*Result, error) {
	return l.evaluate(blocks, response, ParseRefs(response), p)
}

// evaluate is Evaluate with the citations found in the response: tags, in
// order of offset.
func (l Limits) evaluate(blocks []Block, response string, tags []Tag, p Policy) (*Result, error) {
	if err := l.check(blocks, len(response)); err != nil {
		return nil, err
	}
	res := &Result{
		Refs:              []Ref{},
		UnknownRefs:       []string{},
		TrustChanges:      []TrustChange{},
		Violations:        []Violation{},
		ModelResponseHash: HashResponse(response),
	}
	index := make(map[string]int, len(blocks))
	for i := range blocks {
		index[blocks[i].RequestID] = i
	}
	seen := make(map[string]bool)
	for _, t := range tags {
		if seen[t.ID] {
			continue
		}
		seen[t.ID] = true
		i, ok := index[t.ID]
		if !ok {
			res.UnknownRefs = append(res.UnknownRefs, t.ID)
			continue
		}
		pos := PositionOf(response, t.Offset)
		res.Refs = append(res.Refs, Ref{RequestID: t.ID, Type: t.Type, Position: pos})
		from := blocks[i].Trust
		if to := p.Apply(from, pos); to != from {
			res.TrustChanges = append(res.TrustChanges, TrustChange{RequestID: t.ID, From: from, To: to})
		}
	}
	for i := range blocks {
		for _, re := range blocks[i].Patterns {
			if re.MatchString(response) {
				res.Violations = append(res.Violations, Violation{RequestID: blocks[i].RequestID, Pattern: re.String()})
			}
		}
	}
	return res, nil
}
