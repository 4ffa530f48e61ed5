package contextasm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/contextasm/contextasm/fingerprint"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// Aliases for a fallback chain's outcome (package outcome).
type (
	// TemplateChoice says which template of a fallback chain was used and
	// why the earlier ones were not.
	TemplateChoice = outcome.TemplateChoice
	// TemplateSkip is one template of a chain that was not used.
	TemplateSkip = outcome.TemplateSkip
	// SkipReason says why a template of a chain was not used.
	SkipReason = outcome.SkipReason
)

// ErrNoTemplate means no template of a request's fallback chain is
// accepted and fits. The error is a *FallbackError; it also wraps
// ErrBudgetTooSmall when a template did not fit, and
// fingerprint.ErrProtocolMismatch when one was not accepted.
var ErrNoTemplate = errors.New("no template of the chain is accepted and fits")

// FallbackError lists every template of a chain and why it was not used.
type FallbackError struct {
	// Skipped are the templates, in chain order.
	Skipped []TemplateSkip
	// budget is the last ErrBudgetTooSmall met, for errors.As.
	budget error
}

// Error names each template and its reason, one a line.
func (e *FallbackError) Error() string {
	var b strings.Builder
	b.WriteString("contextasm: ")
	b.WriteString(ErrNoTemplate.Error())
	for i, s := range e.Skipped {
		fmt.Fprintf(&b, "\ntemplate %d (%s, v%s): %s", i, s.Fingerprint, s.ProtocolVersion, s.Reason)
		if s.Detail != "" {
			b.WriteString(": ")
			b.WriteString(strings.ReplaceAll(s.Detail, "\n", "; "))
		}
	}
	return b.String()
}

// Unwrap returns ErrNoTemplate, the last ErrBudgetTooSmall error met and
// fingerprint.ErrProtocolMismatch when a template was not accepted.
func (e *FallbackError) Unwrap() []error {
	errs := []error{ErrNoTemplate}
	if e.budget != nil {
		errs = append(errs, e.budget)
	}
	if slices.ContainsFunc(e.Skipped, func(s TemplateSkip) bool { return s.Reason == outcome.SkipNotAccepted }) {
		errs = append(errs, fingerprint.ErrProtocolMismatch)
	}
	return errs
}

// assembleChain tries Request.Template and then each of Request.Fallback,
// in order: a template not accepted is skipped without assembling, one
// whose required blocks do not fit is skipped after trying; the first
// that assembles is the result. Any other error ends the chain. Each
// attempt is an ordinary assembly, cached per template.
func (e *Engine) assembleChain(ctx context.Context, req Request) (*Result, error) {
	accept, err := parseAccept(req.Accept)
	if err != nil {
		return nil, err
	}
	chain := make([]*template.Template, 0, 1+len(req.Fallback))
	chain = append(chain, req.Template)
	chain = append(chain, req.Fallback...)
	for i, tpl := range chain {
		if tpl == nil {
			if i == 0 {
				return nil, fmt.Errorf("%w: Request.Template is nil", ErrInvalid)
			}
			return nil, fmt.Errorf("%w: Request.Fallback[%d] is nil", ErrInvalid, i-1)
		}
	}
	fail := &FallbackError{}
	for i, tpl := range chain {
		skip := TemplateSkip{Fingerprint: tpl.Fingerprint(), ProtocolVersion: fingerprint.ProtocolVersion}
		if !accept.accepts(tpl) {
			skip.Reason = outcome.SkipNotAccepted
			fail.Skipped = append(fail.Skipped, skip)
			continue
		}
		one := req
		one.Template, one.Fallback, one.Accept = tpl, nil, nil
		choice := &TemplateChoice{Used: i, Fingerprint: tpl.Fingerprint(), Skipped: slices.Clip(fail.Skipped)}
		res, err := e.assembleOne(ctx, one, choice)
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, ErrBudgetTooSmall) {
			return nil, err
		}
		skip.Reason, skip.Detail = outcome.SkipBudgetTooSmall, strings.TrimPrefix(err.Error(), "contextasm: ")
		fail.Skipped, fail.budget = append(fail.Skipped, skip), err
	}
	return nil, fail
}

// acceptSet is a parsed Request.Accept: the protocol versions and the
// fingerprints the model side accepts; an empty list accepts any.
type acceptSet struct{ versions, fingerprints []string }

func (a acceptSet) accepts(tpl *template.Template) bool {
	return (len(a.versions) == 0 || slices.Contains(a.versions, fingerprint.ProtocolVersion)) &&
		(len(a.fingerprints) == 0 || slices.Contains(a.fingerprints, tpl.Fingerprint()))
}

// parseAccept reads Request.Accept: "v" and a version ("v1.2"), or "fp:"
// and a fingerprint as a header writes it ("fp:sha256:" and 16 lowercase
// hex digits).
func parseAccept(list []string) (acceptSet, error) {
	var a acceptSet
	for i, s := range list {
		if fp, ok := strings.CutPrefix(s, "fp:"); ok {
			if !wellFormedFingerprint(fp) {
				return a, fmt.Errorf("%w: Request.Accept[%d] %q: want fp:%s and 16 lowercase hex digits", ErrInvalid, i, s, fingerprint.Prefix)
			}
			a.fingerprints = append(a.fingerprints, fp)
			continue
		}
		v, ok := strings.CutPrefix(s, "v")
		if !ok || !validVersion(v) {
			return a, fmt.Errorf("%w: Request.Accept[%d] %q: want a protocol version such as v%s, or a fingerprint such as fp:%s0123456789abcdef",
				ErrInvalid, i, s, fingerprint.ProtocolVersion, fingerprint.Prefix)
		}
		a.versions = append(a.versions, v)
	}
	return a, nil
}

// validVersion reports whether v is digits separated by single dots.
func validVersion(v string) bool {
	if v == "" || len(v) > 16 {
		return false
	}
	for part := range strings.SplitSeq(v, ".") {
		if part == "" || strings.Trim(part, "0123456789") != "" {
			return false
		}
	}
	return true
}

// wellFormedFingerprint reports whether fp is "sha256:" and 16 lowercase
// hex digits.
func wellFormedFingerprint(fp string) bool {
	h, ok := strings.CutPrefix(fp, fingerprint.Prefix)
	return ok && len(h) == 16 && strings.Trim(h, "0123456789abcdef") == ""
}
