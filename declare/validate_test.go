package declare_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/declare"
)

func ptr[T any](v T) *T { return &v }

// base returns a minimal valid declaration; each case changes one thing.
func base() declare.Declaration {
	return declare.Declaration{
		RequestID:  "policy-kyc",
		MemoryType: declare.Constraint,
		Scope:      declare.ScopeGlobal,
		Content:    "Do not discuss terms before identity verification.",
	}
}

var validUntil = &declare.Time{Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		cfg    declare.Config
		edit   func(*declare.Declaration)
		fields []string // the Field of every expected problem, in any order; none = valid
		msg    string   // when set, some problem's message contains it
	}{
		// Valid inputs.
		{name: "minimal global", edit: func(*declare.Declaration) {}},
		{name: "session scope with session_id", edit: func(d *declare.Declaration) {
			d.Scope, d.SessionID = declare.ScopeSession, "sess-4711"
		}},
		{name: "user scope with user_id", edit: func(d *declare.Declaration) {
			d.Scope, d.UserID = declare.ScopeUser, "u-ana"
		}},
		{name: "every memory type: history", edit: func(d *declare.Declaration) { d.MemoryType = declare.History }},
		{name: "every memory type: context", edit: func(d *declare.Declaration) { d.MemoryType = declare.Context }},
		{name: "every memory type: external", edit: func(d *declare.Declaration) { d.MemoryType = declare.External }},
		{name: "numbers at their lower bounds", edit: func(d *declare.Declaration) {
			d.SemanticWeight, d.TrustScore, d.Priority = ptr(0.0), ptr(0.0), ptr(0.0)
		}},
		{name: "numbers at their upper bounds", edit: func(d *declare.Declaration) {
			d.SemanticWeight, d.TrustScore, d.Priority = ptr(1.0), ptr(0.99), ptr(1.0)
		}},
		{name: "full audience", edit: func(d *declare.Declaration) { d.Audience = []string{"user", "assistant"} }},
		{name: "user-only audience is valid (just never rendered)", edit: func(d *declare.Declaration) { d.Audience = []string{"user"} }},
		{name: "roles printable ASCII incl. punctuation", edit: func(d *declare.Declaration) {
			d.Roles = []string{"loan-agent", "credit_officer", "admin@eu/1"}
		}},
		{name: "stale_after with valid_until", edit: func(d *declare.Declaration) {
			d.ValidUntil, d.StaleAfter = validUntil, ptr(declare.Duration(168*time.Hour))
		}},
		{name: "stale_after with last_modified", edit: func(d *declare.Declaration) {
			d.LastModified, d.StaleAfter = ptr(validUntil.Time), ptr(declare.Duration(time.Nanosecond))
		}},
		{name: "break_on_violation on a constraint with patterns", edit: func(d *declare.Declaration) {
			d.BreakOnViolation, d.ViolationPatterns = true, []string{`(?i)applicant'?s religion`, `\bSSN\b`}
		}},
		{name: "conflict_key on any memory type", edit: func(d *declare.Declaration) { d.MemoryType, d.ConflictKey = declare.Context, "max-rate:small-business" }},
		{name: "conflict_key of 512 characters", edit: func(d *declare.Declaration) { d.ConflictKey = strings.Repeat("k", 512) }},
		{name: "conflict_key with white space", edit: func(d *declare.Declaration) { d.ConflictKey = "max rate" },
			fields: []string{"conflict_key"}, msg: "without whitespace"},
		{name: "conflict_key too long", edit: func(d *declare.Declaration) { d.ConflictKey = strings.Repeat("k", 513) },
			fields: []string{"conflict_key"}},
		{name: "conflict_key with a control character", edit: func(d *declare.Declaration) { d.ConflictKey = "rate\x00" },
			fields: []string{"conflict_key"}},
		{name: "request_id of 512 ASCII characters", edit: func(d *declare.Declaration) { d.RequestID = strings.Repeat("a", 512) }},
		{name: "request_id of 512 three-byte characters (1536 bytes)", edit: func(d *declare.Declaration) {
			d.RequestID = strings.Repeat("界", 512)
		}},
		{name: "request_id that embeds an MCP URI", edit: func(d *declare.Declaration) {
			d.RequestID = "mcp:files:file:///srv/知识库/kyc.md?rev=3#L10"
		}},
		{name: "content of exactly 1 MiB by default", edit: func(d *declare.Declaration) {
			d.Content = strings.Repeat("x", 1<<20)
		}},
		{name: "content at a configured limit", cfg: declare.Config{MaxContentBytes: 10}, edit: func(d *declare.Declaration) {
			d.Content = "0123456789"
		}},
		{name: "configured limit above the default", cfg: declare.Config{MaxContentBytes: 2 << 20}, edit: func(d *declare.Declaration) {
			d.Content = strings.Repeat("x", 1<<20+1)
		}},
		{name: "multibyte content is counted in bytes: 3 chars = 9 bytes fits 9", cfg: declare.Config{MaxContentBytes: 9}, edit: func(d *declare.Declaration) {
			d.Content = "规则一"
		}},

		// request_id.
		{name: "request_id missing", edit: func(d *declare.Declaration) { d.RequestID = "" },
			fields: []string{"request_id"}, msg: "required"},
		{name: "request_id of 513 ASCII characters", edit: func(d *declare.Declaration) { d.RequestID = strings.Repeat("a", 513) },
			fields: []string{"request_id"}, msg: "512"},
		{name: "request_id of 513 multibyte characters", edit: func(d *declare.Declaration) { d.RequestID = strings.Repeat("界", 513) },
			fields: []string{"request_id"}},
		{name: "request_id with a space", edit: func(d *declare.Declaration) { d.RequestID = "policy kyc" },
			fields: []string{"request_id"}, msg: "whitespace"},
		{name: "request_id with a tab", edit: func(d *declare.Declaration) { d.RequestID = "policy\tkyc" },
			fields: []string{"request_id"}},
		{name: "request_id with a trailing newline", edit: func(d *declare.Declaration) { d.RequestID = "policy-kyc\n" },
			fields: []string{"request_id"}},
		{name: "request_id with a no-break space", edit: func(d *declare.Declaration) { d.RequestID = "policy\u00a0kyc" },
			fields: []string{"request_id"}},
		{name: "request_id with an ideographic space", edit: func(d *declare.Declaration) { d.RequestID = "规则\u3000一" },
			fields: []string{"request_id"}},
		{name: "request_id with a NUL", edit: func(d *declare.Declaration) { d.RequestID = "policy\x00kyc" },
			fields: []string{"request_id"}},
		{name: "request_id with DEL", edit: func(d *declare.Declaration) { d.RequestID = "policy\x7f" },
			fields: []string{"request_id"}},
		{name: "request_id with a zero-width space", edit: func(d *declare.Declaration) { d.RequestID = "policy\u200bkyc" },
			fields: []string{"request_id"}},
		{name: "request_id with a right-to-left override", edit: func(d *declare.Declaration) { d.RequestID = "policy\u202ekyc" },
			fields: []string{"request_id"}},
		{name: "request_id not valid UTF-8", edit: func(d *declare.Declaration) { d.RequestID = "policy\xff" },
			fields: []string{"request_id"}},

		// memory_type and scope.
		{name: "memory_type missing", edit: func(d *declare.Declaration) { d.MemoryType = "" },
			fields: []string{"memory_type"}, msg: "required"},
		{name: "memory_type unknown", edit: func(d *declare.Declaration) { d.MemoryType = "rule" },
			fields: []string{"memory_type"}, msg: `"rule"`},
		{name: "memory_type is case-sensitive", edit: func(d *declare.Declaration) { d.MemoryType = "Constraint" },
			fields: []string{"memory_type"}},
		{name: "scope missing", edit: func(d *declare.Declaration) { d.Scope = "" },
			fields: []string{"scope"}},
		{name: "scope unknown", edit: func(d *declare.Declaration) { d.Scope = "team" },
			fields: []string{"scope"}, msg: "session, user, global"},
		{name: "session scope without session_id", edit: func(d *declare.Declaration) { d.Scope = declare.ScopeSession },
			fields: []string{"session_id"}, msg: "scope is session"},
		{name: "user scope without user_id (session_id does not help)", edit: func(d *declare.Declaration) {
			d.Scope, d.SessionID = declare.ScopeUser, "sess-4711"
		}, fields: []string{"user_id"}, msg: "scope is user"},
		{name: "session scope with only user_id", edit: func(d *declare.Declaration) {
			d.Scope, d.UserID = declare.ScopeSession, "u-ana"
		}, fields: []string{"session_id"}},

		// content.
		{name: "content missing", edit: func(d *declare.Declaration) { d.Content = "" },
			fields: []string{"content"}, msg: "required"},
		{name: "content not valid UTF-8", edit: func(d *declare.Declaration) { d.Content = "caf\xe9" },
			fields: []string{"content"}, msg: "UTF-8"},
		{name: "content one byte over 1 MiB", edit: func(d *declare.Declaration) { d.Content = strings.Repeat("x", 1<<20+1) },
			fields: []string{"content"}, msg: "1048576"},
		{name: "content one byte over a configured limit", cfg: declare.Config{MaxContentBytes: 10}, edit: func(d *declare.Declaration) {
			d.Content = "0123456789A"
		}, fields: []string{"content"}, msg: "limit of 10"},
		{name: "multibyte content over a limit in bytes, not characters", cfg: declare.Config{MaxContentBytes: 8}, edit: func(d *declare.Declaration) {
			d.Content = "规则一"
		}, fields: []string{"content"}},

		// Numbers.
		{name: "semantic_weight below 0", edit: func(d *declare.Declaration) { d.SemanticWeight = ptr(-0.01) },
			fields: []string{"semantic_weight"}, msg: "between 0 and 1"},
		{name: "semantic_weight above 1", edit: func(d *declare.Declaration) { d.SemanticWeight = ptr(1.01) },
			fields: []string{"semantic_weight"}},
		{name: "semantic_weight NaN", edit: func(d *declare.Declaration) { d.SemanticWeight = ptr(math.NaN()) },
			fields: []string{"semantic_weight"}},
		{name: "trust_score 1 (never fully trusted)", edit: func(d *declare.Declaration) { d.TrustScore = ptr(1.0) },
			fields: []string{"trust_score"}, msg: "between 0 and 0.99"},
		{name: "trust_score just above 0.99", edit: func(d *declare.Declaration) { d.TrustScore = ptr(0.991) },
			fields: []string{"trust_score"}},
		{name: "trust_score below 0", edit: func(d *declare.Declaration) { d.TrustScore = ptr(-0.5) },
			fields: []string{"trust_score"}},
		{name: "priority above 1", edit: func(d *declare.Declaration) { d.Priority = ptr(1.5) },
			fields: []string{"priority"}},
		{name: "priority below 0", edit: func(d *declare.Declaration) { d.Priority = ptr(-1.0) },
			fields: []string{"priority"}},
		{name: "priority +Inf", edit: func(d *declare.Declaration) { d.Priority = ptr(math.Inf(1)) },
			fields: []string{"priority"}},

		// audience and roles: the element is named.
		{name: "audience with an unknown second entry", edit: func(d *declare.Declaration) { d.Audience = []string{"assistant", "model"} },
			fields: []string{"audience[1]"}, msg: `"model"`},
		{name: "audience is case-sensitive", edit: func(d *declare.Declaration) { d.Audience = []string{"Assistant"} },
			fields: []string{"audience[0]"}},
		{name: "audience with an empty entry", edit: func(d *declare.Declaration) { d.Audience = []string{"user", ""} },
			fields: []string{"audience[1]"}},
		{name: "roles with an empty entry", edit: func(d *declare.Declaration) { d.Roles = []string{""} },
			fields: []string{"roles[0]"}},
		{name: "roles with non-ASCII", edit: func(d *declare.Declaration) { d.Roles = []string{"analyst", "análise"} },
			fields: []string{"roles[1]"}, msg: "ASCII"},
		{name: "roles with a control character", edit: func(d *declare.Declaration) { d.Roles = []string{"ops\t"} },
			fields: []string{"roles[0]"}},

		// stale_after.
		{name: "stale_after zero", edit: func(d *declare.Declaration) {
			d.ValidUntil, d.StaleAfter = validUntil, ptr(declare.Duration(0))
		}, fields: []string{"stale_after"}, msg: "positive"},
		{name: "stale_after negative", edit: func(d *declare.Declaration) {
			d.ValidUntil, d.StaleAfter = validUntil, ptr(declare.Duration(-time.Hour))
		}, fields: []string{"stale_after"}, msg: "positive"},
		{name: "stale_after with nothing to count from", edit: func(d *declare.Declaration) {
			d.StaleAfter = ptr(declare.Duration(time.Hour))
		}, fields: []string{"stale_after"}, msg: "valid_until or last_modified"},
		{name: "stale_after zero with nothing to count from: both problems", edit: func(d *declare.Declaration) {
			d.StaleAfter = ptr(declare.Duration(0))
		}, fields: []string{"stale_after", "stale_after"}},

		// Violations.
		{name: "break_on_violation on a context block", edit: func(d *declare.Declaration) {
			d.MemoryType, d.BreakOnViolation, d.ViolationPatterns = declare.Context, true, []string{"x"}
		}, fields: []string{"break_on_violation"}, msg: "constraint"},
		{name: "break_on_violation without patterns", edit: func(d *declare.Declaration) { d.BreakOnViolation = true },
			fields: []string{"violation_patterns"}, msg: "at least one pattern"},
		{name: "break_on_violation on history without patterns", edit: func(d *declare.Declaration) {
			d.MemoryType, d.BreakOnViolation = declare.History, true
		}, fields: []string{"break_on_violation", "violation_patterns"}},
		{name: "pattern that does not compile", edit: func(d *declare.Declaration) {
			d.BreakOnViolation, d.ViolationPatterns = true, []string{"(unclosed"}
		}, fields: []string{"violation_patterns[0]"}, msg: "RE2"},
		{name: "Perl lookahead is not RE2", edit: func(d *declare.Declaration) {
			d.BreakOnViolation, d.ViolationPatterns = true, []string{`ok`, `a(?=b)`}
		}, fields: []string{"violation_patterns[1]"}},
		{name: "backreference is not RE2", edit: func(d *declare.Declaration) {
			d.BreakOnViolation, d.ViolationPatterns = true, []string{`(a)\1`}
		}, fields: []string{"violation_patterns[0]"}},
		{name: "patterns are checked even without break_on_violation", edit: func(d *declare.Declaration) {
			d.ViolationPatterns = []string{"[z-a]"}
		}, fields: []string{"violation_patterns[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := base()
			tt.edit(&d)
			err := tt.cfg.Validate(&d)
			if len(tt.fields) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				return
			}
			probs := problemsOf(t, err)
			if got, want := sortedFields(probs), slices.Sorted(slices.Values(tt.fields)); !slices.Equal(got, want) {
				t.Errorf("fields = %q, want %q\n%v", got, want, err)
			}
			if tt.msg != "" && !slices.ContainsFunc(probs, func(p declare.Problem) bool { return strings.Contains(p.Message, tt.msg) }) {
				t.Errorf("no message contains %q:\n%v", tt.msg, err)
			}
			// A problem names the declaration when its id is usable, and
			// never repeats a broken id; Validate knows no file.
			wantID := d.RequestID
			if slices.Contains(tt.fields, "request_id") {
				wantID = ""
			}
			for _, p := range probs {
				if p.RequestID != wantID || p.File != "" || p.Line != 0 || p.Message == "" {
					t.Errorf("problem %+v: want RequestID %q, no file or line, a message", p, wantID)
				}
			}
		})
	}
}

// The package-level Validate applies the default limits, exactly like the
// zero Config.
func TestValidateUsesDefaultLimits(t *testing.T) {
	d := base()
	d.Content = strings.Repeat("x", declare.DefaultMaxContentBytes+1)
	if declare.Validate(&d) == nil || (declare.Config{}).Validate(&d) == nil {
		t.Fatal("content over DefaultMaxContentBytes passed")
	}
	d.Content = d.Content[1:]
	if err := declare.Validate(&d); err != nil {
		t.Fatalf("content of DefaultMaxContentBytes: %v", err)
	}
	if err := (declare.Config{MaxContentBytes: -1}).Validate(&d); err != nil {
		t.Fatalf("negative MaxContentBytes should mean the default: %v", err)
	}
}

// One declaration with a problem in every field reports every one of them.
func TestValidateReportsAllProblems(t *testing.T) {
	d := declare.Declaration{
		RequestID:         "has space",
		MemoryType:        "rule",
		Scope:             "team",
		Content:           "caf\xe9",
		SemanticWeight:    ptr(2.0),
		TrustScore:        ptr(1.0),
		Priority:          ptr(-1.0),
		Audience:          []string{"model"},
		Roles:             []string{"ok", ""},
		StaleAfter:        ptr(declare.Duration(-time.Hour)),
		BreakOnViolation:  true,
		ViolationPatterns: []string{"ok", "(bad"},
	}
	probs := problemsOf(t, declare.Validate(&d))
	want := []string{
		"audience[0]", "break_on_violation", "content", "memory_type", "priority",
		"request_id", "roles[1]", "scope", "semantic_weight", "stale_after", "stale_after",
		"trust_score", "violation_patterns[1]",
	}
	if got := sortedFields(probs); !slices.Equal(got, want) {
		t.Errorf("fields = %q\nwant     %q", got, want)
	}

	// Scope problems are independent of the field rules: an empty session
	// scope block lacks session_id as well as everything else.
	probs = problemsOf(t, declare.Validate(&declare.Declaration{Scope: declare.ScopeSession}))
	want = []string{"content", "memory_type", "request_id", "session_id"}
	if got := sortedFields(probs); !slices.Equal(got, want) {
		t.Errorf("empty session declaration: fields = %q, want %q", got, want)
	}
}

func TestValidationErrorIsAndAs(t *testing.T) {
	d := base()
	d.MemoryType = "rule"
	err := declare.Validate(&d)
	if !errors.Is(err, declare.ErrInvalid) {
		t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
	}
	var ve *declare.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Field != "memory_type" {
		t.Fatalf("errors.As: %#v", err)
	}
	wrapped := errors.Join(errors.New("engine: declare"), err)
	if !errors.Is(wrapped, declare.ErrInvalid) || !errors.As(wrapped, &ve) {
		t.Error("ErrInvalid / *ValidationError lost through wrapping")
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    declare.Problem
		want string
	}{
		{declare.Problem{File: "m.jsonl", Line: 7, RequestID: "kyc", Field: "scope", Message: "is required"},
			`m.jsonl:7: request_id "kyc": scope: is required`},
		{declare.Problem{File: "m.jsonl", Line: 3, Message: "line is not valid UTF-8"},
			`m.jsonl:3: line is not valid UTF-8`},
		{declare.Problem{File: "m.jsonl", Field: "content", Message: "is required"},
			`m.jsonl: content: is required`},
		{declare.Problem{RequestID: "a\"b", Field: "audience[1]", Message: "bad"},
			`request_id "a\"b": audience[1]: bad`},
		{declare.Problem{Message: "bare"}, `bare`},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.p, got, tt.want)
		}
	}
	err := &declare.ValidationError{Problems: []declare.Problem{tests[0].p, tests[1].p}}
	want := "declare: " + tests[0].want + "\ndeclare: " + tests[1].want
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestMemoryTypeValid(t *testing.T) {
	for _, mt := range declare.MemoryTypes() {
		if !mt.Valid() {
			t.Errorf("%q.Valid() = false", mt)
		}
		// The struct tag's oneof and MemoryType.Valid must agree.
		d := base()
		d.MemoryType = mt
		if err := declare.Validate(&d); err != nil {
			t.Errorf("memory_type %q: %v", mt, err)
		}
	}
	for _, mt := range []declare.MemoryType{"", "Constraint", "rule", "context "} {
		if mt.Valid() {
			t.Errorf("%q.Valid() = true", mt)
		}
	}
}

func problemsOf(t *testing.T, err error) []declare.Problem {
	t.Helper()
	var ve *declare.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v (%T), want *declare.ValidationError", err, err)
	}
	if !errors.Is(err, declare.ErrInvalid) {
		t.Fatalf("err does not wrap ErrInvalid")
	}
	if len(ve.Problems) == 0 {
		t.Fatal("ValidationError with no problems")
	}
	return ve.Problems
}

func sortedFields(probs []declare.Problem) []string {
	fields := make([]string, len(probs))
	for i, p := range probs {
		fields[i] = p.Field
	}
	slices.Sort(fields)
	return fields
}
