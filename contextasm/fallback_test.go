package contextasm_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/fingerprint"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// fallbackTemplates are three versions of one template: the richest has
// a cap too small for the required rule, the second fits, the third too.
func fallbackTemplates(t *testing.T) (small, mid, big *template.Template) {
	src := func(rulesCap int) string {
		return `{"budget": 400, "sections": [
	{"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": ` + strconv.Itoa(rulesCap) + `, "render": "{content}"},
	{"name": "FACTS", "priority": 2, "memory_types": ["context"], "max_tokens": 40, "render": "{content}"}]}`
	}
	return parseTemplate(t, src(5)), parseTemplate(t, src(60)), parseTemplate(t, src(200))
}

func fallbackEngine(t *testing.T) *contextasm.Engine {
	rule := global("rule-kyc", declare.Constraint, "Verify the applicant's identity before discussing any terms of the loan.")
	rule.Required = true
	return newEngine(t, contextasm.Config{}, rule, global("fact", declare.Context, "The applicant is a small business."))
}

func TestFallbackChain(t *testing.T) {
	small, mid, big := fallbackTemplates(t)
	eng := fallbackEngine(t)
	tests := []struct {
		name     string
		tpl      *template.Template
		fallback []*template.Template
		accept   []string
		used     int
		want     *template.Template
		skipped  []outcome.SkipReason
	}{
		{name: "the first fits", tpl: mid, fallback: []*template.Template{big}, used: 0, want: mid},
		{name: "the first is too small", tpl: small, fallback: []*template.Template{mid, big}, used: 1, want: mid,
			skipped: []outcome.SkipReason{outcome.SkipBudgetTooSmall}},
		{name: "the first is not accepted", tpl: mid, fallback: []*template.Template{big}, accept: []string{"fp:" + big.Fingerprint()}, used: 1, want: big,
			skipped: []outcome.SkipReason{outcome.SkipNotAccepted}},
		{name: "too small, then not accepted, then used", tpl: small, fallback: []*template.Template{mid, big},
			accept: []string{"v" + fingerprint.ProtocolVersion, "fp:" + big.Fingerprint(), "fp:" + small.Fingerprint()}, used: 2, want: big,
			skipped: []outcome.SkipReason{outcome.SkipBudgetTooSmall, outcome.SkipNotAccepted}},
		{name: "the version accepted: any fingerprint", tpl: small, fallback: []*template.Template{mid}, accept: []string{"v1.2"}, used: 1, want: mid,
			skipped: []outcome.SkipReason{outcome.SkipBudgetTooSmall}},
		{name: "accept alone, the template accepted", tpl: mid, accept: []string{"fp:" + mid.Fingerprint()}, used: 0, want: mid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := contextasm.Request{Template: tt.tpl, Fallback: tt.fallback, Accept: tt.accept, Now: demoNow}
			res := assemble(t, eng, req)
			c := res.Template
			if c == nil || c.Used != tt.used || c.Fingerprint != tt.want.Fingerprint() || res.Fingerprint != tt.want.Fingerprint() || len(c.Skipped) != len(tt.skipped) {
				t.Fatalf("choice %+v (result %s), want template %d %s after %v", c, res.Fingerprint, tt.used, tt.want.Fingerprint(), tt.skipped)
			}
			chain := append([]*template.Template{tt.tpl}, tt.fallback...)
			for i, s := range c.Skipped {
				if s.Reason != tt.skipped[i] || s.Fingerprint != chain[i].Fingerprint() || s.ProtocolVersion != fingerprint.ProtocolVersion {
					t.Errorf("skipped[%d] = %+v, want %s of %s", i, s, tt.skipped[i], chain[i].Fingerprint())
				}
				if (s.Reason == outcome.SkipBudgetTooSmall) != strings.Contains(s.Detail, `"rule-kyc"`) {
					t.Errorf("skipped[%d] detail %q", i, s.Detail)
				}
			}
			if err := fingerprint.Verify(res.Text, tt.want.Fingerprint()); err != nil {
				t.Errorf("the text's header: %v", err)
			}
			if d := res.Dump(); d.Template == nil || d.Template.Used != tt.used || res.Audit().Template != c {
				t.Errorf("dump %+v, audit %+v: want the choice", d.Template, res.Audit().Template)
			}
			// Deterministic, and the same as assembling the chosen
			// template alone.
			again := assemble(t, eng, req)
			alone := assemble(t, eng, contextasm.Request{Template: tt.want, Now: demoNow})
			if dumpJSON(t, again) != dumpJSON(t, res) || again.Text != alone.Text || alone.Template != nil {
				t.Errorf("again %q, alone %q", again.Text, alone.Text)
			}
		})
	}
}

func TestFallbackNoneFits(t *testing.T) {
	small, mid, _ := fallbackTemplates(t)
	eng := fallbackEngine(t)
	_, err := eng.Assemble(t.Context(), contextasm.Request{Template: small, Fallback: []*template.Template{mid}, Accept: []string{"fp:" + small.Fingerprint()}, Now: demoNow})
	var fe *contextasm.FallbackError
	var re *truncate.RequiredError
	if !errors.As(err, &fe) || !errors.Is(err, contextasm.ErrNoTemplate) || !errors.Is(err, contextasm.ErrBudgetTooSmall) || !errors.As(err, &re) ||
		!errors.Is(err, fingerprint.ErrProtocolMismatch) {
		t.Fatalf("error %v, want a FallbackError wrapping both reasons", err)
	}
	if len(fe.Skipped) != 2 || fe.Skipped[0].Reason != outcome.SkipBudgetTooSmall || fe.Skipped[1].Reason != outcome.SkipNotAccepted {
		t.Fatalf("skipped %+v", fe.Skipped)
	}
	_, err = eng.Assemble(t.Context(), contextasm.Request{Template: mid, Accept: []string{"v1.1"}, Now: demoNow})
	if !errors.Is(err, contextasm.ErrNoTemplate) || errors.Is(err, contextasm.ErrBudgetTooSmall) || !errors.Is(err, fingerprint.ErrProtocolMismatch) {
		t.Fatalf("v1.1 only: %v, want not accepted", err)
	}
}

func TestFallbackInvalid(t *testing.T) {
	_, mid, _ := fallbackTemplates(t)
	eng := fallbackEngine(t)
	for _, tt := range []struct {
		req  contextasm.Request
		want string
	}{
		{contextasm.Request{Template: mid, Fallback: []*template.Template{nil}}, "Request.Fallback[0] is nil"},
		{contextasm.Request{Fallback: []*template.Template{mid}}, "Request.Template is nil"},
		{contextasm.Request{Template: mid, Accept: []string{"1.2"}}, `Request.Accept[0] "1.2"`},
		{contextasm.Request{Template: mid, Accept: []string{"v1.2", "fp:sha256:XYZ"}}, `Request.Accept[1] "fp:sha256:XYZ"`},
		{contextasm.Request{Template: mid, Accept: []string{"v1..2"}}, `Request.Accept[0]`},
	} {
		tt.req.Now = demoNow
		_, err := eng.Assemble(t.Context(), tt.req)
		if !errors.Is(err, contextasm.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want ErrInvalid naming %s", tt.req.Accept, err, tt.want)
		}
	}
}
