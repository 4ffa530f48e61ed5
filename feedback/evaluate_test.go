package feedback

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestPolicyApply(t *testing.T) {
	tests := []struct {
		name  string
		p     Policy
		trust float64
		pos   Position
		want  float64
	}{
		{"default start gains 0.05", Policy{}, 0.5, Start, 0.55},
		{"default middle unchanged", Policy{}, 0.5, Middle, 0.5},
		{"default end unchanged", Policy{}, 0.5, End, 0.5},
		{"ceiling 0.99", Policy{}, 0.97, Start, 0.99},
		{"custom gains and floor", Policy{StartGain: 0.1, EndGain: -0.2, Floor: 0.1}, 0.2, End, 0.1},
		{"custom with zero ceiling means 0.99", Policy{StartGain: 0.5}, 0.9, Start, 0.99},
		{"repeated gains stay exact", Policy{}, 0.6000000000000001, Start, 0.65},
		{"partial policy keeps the default start gain", Policy{EndGain: -0.1}, 0.5, Start, 0.55},
		{"partial policy applies its own field", Policy{EndGain: -0.1}, 0.5, End, 0.4},
		{"partial policy keeps the default ceiling", Policy{MiddleGain: 0.3}, 0.9, Middle, 0.99},
	}
	for _, tt := range tests {
		if got := tt.p.Apply(tt.trust, tt.pos); got != tt.want {
			t.Errorf("%s: Apply(%v, %s) = %v, want %v", tt.name, tt.trust, tt.pos, got, tt.want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	blocks := []Block{
		{RequestID: "rule", Trust: 0.5, Patterns: []*regexp.Regexp{regexp.MustCompile(`(?i)because she is married`)}},
		{RequestID: "ctx", Trust: 0.97},
		{RequestID: "hist", Trust: 0.4},
	}
	resp := `<memory_ref id="ctx" type="context"/> The loan was declined because she is married. ` +
		strings.Repeat("filler ", 20) + `<memory_ref id="hist"/> <memory_ref id="ghost"/> <memory_ref id="ctx"/> <memory_ref id="ghost"/>`
	res, err := Evaluate(blocks, resp, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	wantRefs := []Ref{{RequestID: "ctx", Type: "context", Position: Start}, {RequestID: "hist", Position: End}}
	if !slices.Equal(res.Refs, wantRefs) {
		t.Errorf("refs = %+v, want %+v", res.Refs, wantRefs)
	}
	if !slices.Equal(res.UnknownRefs, []string{"ghost"}) {
		t.Errorf("unknown = %v", res.UnknownRefs)
	}
	if want := []TrustChange{{RequestID: "ctx", From: 0.97, To: 0.99}}; !slices.Equal(res.TrustChanges, want) {
		t.Errorf("trust changes = %+v, want %+v", res.TrustChanges, want)
	}
	if want := []Violation{{RequestID: "rule", Pattern: `(?i)because she is married`}}; !slices.Equal(res.Violations, want) {
		t.Errorf("violations = %+v", res.Violations)
	}
	err = res.Err()
	var ve *ViolationError
	if !errors.Is(err, ErrConstraintViolation) || !errors.As(err, &ve) || !strings.Contains(err.Error(), `CONSTRAINT_VIOLATION: block "rule"`) {
		t.Errorf("Err() = %v", err)
	}
	if res.ModelResponseHash != HashResponse(resp) || !strings.HasPrefix(res.ModelResponseHash, "sha256:") || len(res.ModelResponseHash) != 7+64 {
		t.Errorf("hash = %q", res.ModelResponseHash)
	}
	clean, err := Evaluate(blocks, "nothing to see", Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if clean.Err() != nil || len(clean.Refs) != 0 || clean.Refs == nil || clean.UnknownRefs == nil {
		t.Errorf("clean response: %+v", clean)
	}
}

// TestDefaultPolicyFresh: DefaultPolicy returns a copy nobody can change
// for others.
func TestDefaultPolicyFresh(t *testing.T) {
	p := DefaultPolicy()
	p.StartGain = 9
	if DefaultPolicy().StartGain != 0.05 {
		t.Error("changing a DefaultPolicy() result changed the default")
	}
	if got := (Policy{}).WithDefaults(); got != DefaultPolicy() {
		t.Errorf("zero Policy with defaults = %+v, want %+v", got, DefaultPolicy())
	}
}
