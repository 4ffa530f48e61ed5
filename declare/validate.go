package declare

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"

	"github.com/contextasm/contextasm/internal/pattern"
)

// ErrInvalid is wrapped by every validation or load error of this package.
var ErrInvalid = errors.New("declare: invalid declaration")

// Problem is one thing wrong with one declaration.
type Problem struct {
	File      string // "" when the declaration did not come from a file
	Line      int    // 1-based; 0 when not from a file
	RequestID string // "" when the line has none (or is not JSON)
	Field     string // JSON field name, e.g. "semantic_weight" or "audience[1]"
	Message   string // what is wrong, e.g. "is required when scope is session"
}

// String formats the problem as "file:line: request_id "x": field: message".
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.RequestID != "" {
		fmt.Fprintf(&b, "request_id %q: ", p.RequestID)
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// ValidationError lists every problem found. It wraps [ErrInvalid].
type ValidationError struct {
	// Problems are every problem found, in the order found.
	Problems []Problem
}

// Error returns one problem a line.
func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = "declare: " + p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns [ErrInvalid].
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// Config sets the limits of validation and loading. Its zero value means the
// documented defaults.
type Config struct {
	// MaxContentBytes is the largest content accepted, in bytes.
	// Zero means DefaultMaxContentBytes (1 MiB).
	MaxContentBytes int
	// MaxBlocks is the most declarations one Load or LoadFiles reads; at
	// the next one it stops reading and fails, so that a huge file cannot
	// exhaust memory before the engine's own bound applies. Zero means
	// DefaultMaxBlocks (1,000,000, the engine's default store bound).
	MaxBlocks int
}

// DefaultMaxBlocks is the loader's bound when Config.MaxBlocks is zero.
const DefaultMaxBlocks = 1_000_000

// MaxContent returns the most bytes a block's content may have under c:
// MaxContentBytes, or DefaultMaxContentBytes when it is zero.
func (c Config) MaxContent() int { return c.maxContent() }

func (c Config) maxContent() int {
	if c.MaxContentBytes <= 0 {
		return DefaultMaxContentBytes
	}
	return c.MaxContentBytes
}

func (c Config) maxBlocks() int {
	if c.MaxBlocks <= 0 {
		return DefaultMaxBlocks
	}
	return c.MaxBlocks
}

// maxLine is the longest declaration line read: the content limit,
// JSON-escaped (\uXXXX is six bytes a byte at worst), plus the other
// fields.
func (c Config) maxLine() int { return 6*c.maxContent() + 64<<10 }

// The validator caches struct metadata and is safe for concurrent use, so
// one is built for the life of the process rather than per call.
var fieldRules = newValidator()

func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		return name
	})
	if err := v.RegisterValidation("request_id", func(fl validator.FieldLevel) bool {
		return validRequestID(fl.Field().String())
	}); err != nil {
		panic(err) // programming error: the tag name is fixed
	}
	return v
}

// MaxRequestIDLen is the longest request_id, in characters.
const MaxRequestIDLen = 512

func validRequestID(s string) bool {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxRequestIDLen {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// Validate checks one declaration and returns a *ValidationError listing
// every problem, or nil.
func Validate(d *Declaration) error { return Config{}.Validate(d) }

// Validate checks one declaration against c's limits.
func (c Config) Validate(d *Declaration) error {
	probs := c.problems(d, nil)
	if len(probs) == 0 {
		return nil
	}
	return &ValidationError{Problems: probs}
}

// problems appends every problem of d to dst. File and line are left for the
// caller to fill in.
func (c Config) problems(d *Declaration, dst []Problem) []Problem {
	start := len(dst)
	add := func(field, format string, args ...any) {
		dst = append(dst, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if err := fieldRules.Struct(d); err != nil {
		var fes validator.ValidationErrors
		if !errors.As(err, &fes) {
			add("", "%v", err)
		}
		for _, fe := range fes {
			add(fieldPath(fe), "%s", ruleMessage(fe))
		}
	}
	if !utf8.ValidString(d.Content) {
		add("content", "is not valid UTF-8")
	}
	if n := len(d.Content); n > c.maxContent() {
		add("content", "is %d bytes, more than the limit of %d", n, c.maxContent())
	}
	if d.StaleAfter != nil {
		if *d.StaleAfter <= 0 {
			add("stale_after", "must be positive")
		}
		if d.ValidUntil == nil && d.LastModified == nil {
			add("stale_after", "needs valid_until or last_modified to count from")
		}
	}
	if d.IdleTTL != nil {
		if *d.IdleTTL <= 0 {
			add("idle_ttl", "must be positive")
		}
		if d.Scope != ScopeSession {
			add("idle_ttl", "applies to session-scoped blocks only (scope is %q)", d.Scope)
		}
	}
	if d.BreakOnViolation && d.MemoryType != Constraint {
		add("break_on_violation", "applies to constraint blocks only (memory_type is %q)", d.MemoryType)
	}
	if d.BreakOnViolation && len(d.ViolationPatterns) == 0 {
		add("violation_patterns", "break_on_violation needs at least one pattern")
	}
	dst = patternProblems(d.ViolationPatterns, dst)
	dst = chatProblems(d, dst)
	dst = c.degradeProblems(d, dst)
	for i := start; i < len(dst); i++ {
		if validRequestID(d.RequestID) {
			dst[i].RequestID = d.RequestID
		}
	}
	return dst
}

// Bounds of violation_patterns. Matching a pattern costs at most one step
// per instruction of its compiled program per byte of response, so its
// count and compiled size are bounded here, and package feedback bounds
// the response they are matched against (docs/limits.md).
const (
	// MaxViolationPatterns is the most patterns one declaration may have.
	MaxViolationPatterns = 16
	// MaxPatternBytes is the longest pattern, in bytes.
	MaxPatternBytes = 1024
	// MaxPatternSize is the most instructions a pattern may compile to: a
	// counted repetition multiplies what it repeats ("[a-z]{1000}" is over
	// 1,000).
	MaxPatternSize = 1000
)

// patternProblems appends the problems of a declaration's patterns.
func patternProblems(patterns []string, dst []Problem) []Problem {
	if n := len(patterns); n > MaxViolationPatterns {
		dst = append(dst, Problem{Field: "violation_patterns",
			Message: fmt.Sprintf("has %d patterns, more than the limit of %d", n, MaxViolationPatterns)})
	}
	for i, p := range patterns {
		field := fmt.Sprintf("violation_patterns[%d]", i)
		if len(p) > MaxPatternBytes {
			dst = append(dst, Problem{Field: field, Message: fmt.Sprintf("is %d bytes, more than the limit of %d", len(p), MaxPatternBytes)})
			continue
		}
		if _, err := regexp.Compile(p); err != nil {
			dst = append(dst, Problem{Field: field, Message: fmt.Sprintf("invalid RE2 expression: %v", err)})
			continue
		}
		if size, err := pattern.Size(p); err == nil && size > MaxPatternSize {
			dst = append(dst, Problem{Field: field, Message: fmt.Sprintf(
				"compiles to %d instructions, more than the limit of %d (matching costs a step per instruction per byte of response; a counted repetition such as {1000} multiplies what it repeats)",
				size, MaxPatternSize)})
		}
	}
	return dst
}

// fieldPath turns the validator's "Declaration.provenance.uri" into the JSON
// path "provenance.uri".
func fieldPath(fe validator.FieldError) string {
	ns := fe.Namespace()
	if _, rest, ok := strings.Cut(ns, "."); ok {
		return rest
	}
	return ns
}

func ruleMessage(fe validator.FieldError) string {
	switch fe.Tag() {
	case "required":
		return "is required"
	case "required_unless": // content, unless an assistant turn (chatProblems)
		return "is required"
	case "required_if":
		return "is required when " + strings.Replace(fe.Param(), "Scope", "scope is", 1)
	case "oneof":
		return fmt.Sprintf("must be one of %s (got %q)", strings.ReplaceAll(fe.Param(), " ", ", "), fmt.Sprint(fe.Value()))
	case "gte", "lte":
		lo, hi := "0", "1"
		if fe.Field() == "trust_score" {
			hi = "0.99"
		}
		return fmt.Sprintf("must be between %s and %s (got %v)", lo, hi, deref(fe.Value()))
	case "request_id":
		return fmt.Sprintf("must be 1 to %d printable characters without whitespace", MaxRequestIDLen)
	case "printascii":
		return "must be printable ASCII"
	}
	return fmt.Sprintf("fails rule %q", fe.Tag())
}

func deref(v any) any {
	if p, ok := v.(*float64); ok && p != nil {
		return *p
	}
	return v
}
