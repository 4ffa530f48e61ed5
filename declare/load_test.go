package declare_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/declare"
)

var update = flag.Bool("update", false, "rewrite golden files")

// line returns a valid declaration line: a global context block with the
// given leading fields (which must include request_id).
func line(fields string) string {
	return `{` + fields + `,"memory_type":"context","scope":"global","content":"Plain text."}`
}

func mustLoad(t *testing.T, s string) []declare.Declaration {
	t.Helper()
	decls, err := declare.Load(strings.NewReader(s), "test.jsonl")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return decls
}

func ids(decls []declare.Declaration) []string {
	out := make([]string, len(decls))
	for i, d := range decls {
		out[i] = d.RequestID
	}
	return out
}

func TestLoadValidFixture(t *testing.T) {
	decls, err := declare.LoadFile(filepath.Join("testdata", "valid.jsonl"))
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	wantIDs := []string{
		"reg-ecoa", "promo-2026", "app-4711-summary", "user-u-ana-lang", "portal-note",
		"rate-sheet", "mcp:files:file:///srv/policies/知识库/kyc.md", "hist-turn-12",
	}
	if got := ids(decls); !slices.Equal(got, wantIDs) {
		t.Fatalf("ids = %q\nwant  %q", got, wantIDs)
	}
	for i := range decls {
		if err := declare.Validate(&decls[i]); err != nil {
			t.Errorf("loaded declaration fails Validate: %v", err)
		}
	}
	by := make(map[string]*declare.Declaration)
	for i := range decls {
		by[decls[i].RequestID] = &decls[i]
	}
	utc := func(y int, m time.Month, d, h, min, s, ns int) time.Time {
		return time.Date(y, m, d, h, min, s, ns, time.UTC)
	}

	ecoa := by["reg-ecoa"]
	if !ecoa.IsRequired() || ecoa.Weight() != 1 || ecoa.Trust() != 0.95 || !ecoa.BreakOnViolation ||
		len(ecoa.ViolationPatterns) != 2 || ecoa.MemoryType != declare.Constraint {
		t.Errorf("reg-ecoa = %+v", *ecoa)
	}
	if want := (declare.Provenance{SourceID: "reg-library", SourceFormat: "text/plain", SourceLocation: "12 CFR 1002"}); ecoa.Provenance != want {
		t.Errorf("reg-ecoa provenance = %+v, want %+v", ecoa.Provenance, want)
	}

	// valid_until as an RFC 3339 string, stale_after as a duration string.
	promo := by["promo-2026"]
	if !promo.IsRequired() || promo.Required {
		t.Errorf("promo-2026: priority 1 should imply required (IsRequired %v, Required %v)", promo.IsRequired(), promo.Required)
	}
	if promo.ValidUntil == nil || !promo.ValidUntil.Equal(utc(2026, 12, 31, 23, 59, 59, 0)) {
		t.Errorf("promo-2026 valid_until = %v", promo.ValidUntil)
	}
	if promo.StaleAfter == nil || time.Duration(*promo.StaleAfter) != 168*time.Hour {
		t.Errorf("promo-2026 stale_after = %v", promo.StaleAfter)
	}
	if from, ok := promo.StaleFrom(); !ok || !from.Equal(utc(2026, 12, 24, 23, 59, 59, 0)) {
		t.Errorf("promo-2026 StaleFrom = %v, %v", from, ok)
	}

	app := by["app-4711-summary"]
	if app.Weight() != 0 || app.Trust() != 0.5 || app.Scope != declare.ScopeSession || app.SessionID != "sess-4711" ||
		!slices.Equal(app.Roles, []string{"loan-agent", "credit-officer"}) {
		t.Errorf("app-4711-summary = %+v", *app)
	}
	if lang := by["user-u-ana-lang"]; lang.Trust() != 0 || !lang.ForAssistant() || lang.UserID != "u-ana" {
		t.Errorf("user-u-ana-lang = %+v", *lang)
	}
	if portal := by["portal-note"]; portal.ForAssistant() {
		t.Error("portal-note: audience [user] must not reach the assistant")
	}

	// valid_until as fractional Unix seconds, stale_after as seconds.
	rates := by["rate-sheet"]
	if rates.ValidUntil == nil || !rates.ValidUntil.Equal(utc(2027, 1, 1, 0, 0, 0, 5e8)) {
		t.Errorf("rate-sheet valid_until = %v, want 2027-01-01T00:00:00.5Z", rates.ValidUntil)
	}
	if rates.StaleAfter == nil || time.Duration(*rates.StaleAfter) != 24*time.Hour {
		t.Errorf("rate-sheet stale_after = %v, want 24h", rates.StaleAfter)
	}
	if rates.Provenance.URI != "https://rates.example.com/sheet?week=48" {
		t.Errorf("rate-sheet provenance = %+v", rates.Provenance)
	}

	// last_modified with an offset; stale_after counts from it.
	kyc := by["mcp:files:file:///srv/policies/知识库/kyc.md"]
	if kyc.LastModified == nil || !kyc.LastModified.Equal(utc(2026, 11, 28, 13, 30, 0, 0)) {
		t.Errorf("kyc last_modified = %v", kyc.LastModified)
	}
	if from, ok := kyc.StaleFrom(); !ok || !from.Equal(utc(2026, 12, 28, 13, 30, 0, 0)) {
		t.Errorf("kyc StaleFrom = %v, %v", from, ok)
	}
	if kyc.Content != "了解你的客户：身份验证通过之前不得讨论条款。" {
		t.Errorf("kyc content = %q", kyc.Content)
	}
	if hist := by["hist-turn-12"]; !strings.Contains(hist.Content, "week?\nAssistant:") {
		t.Errorf("hist-turn-12: the JSON \\n escape should be a newline: %q", hist.Content)
	}
}

func TestLoadLineHandling(t *testing.T) {
	a, b := line(`"request_id":"a"`), line(`"request_id":"b"`)
	tests := []struct {
		name    string
		in      string
		ids     []string
		badLine int // when set, the input is invalid and the only problem is on this line
	}{
		{name: "empty input", in: ""},
		{name: "only comments and blanks", in: "# one\n\n   \n\t# two\n"},
		{name: "LF with final newline", in: a + "\n" + b + "\n", ids: []string{"a", "b"}},
		{name: "no final newline", in: a + "\n" + b, ids: []string{"a", "b"}},
		{name: "CRLF", in: "# c\r\n" + a + "\r\n\r\n" + b + "\r\n", ids: []string{"a", "b"}},
		{name: "CRLF without final newline", in: a + "\r\n" + b, ids: []string{"a", "b"}},
		{name: "blank lines of spaces and tabs", in: "  \n\t\n" + a + "\n \t \n" + b, ids: []string{"a", "b"}},
		{name: "indented comments", in: "  # spaces\n\t# tab\n" + a, ids: []string{"a"}},
		{name: "a commented-out declaration is a comment", in: "#" + a + "\n  # " + b + "\n" + a, ids: []string{"a"}},
		{name: "indented JSON", in: "   " + a + "\t\n", ids: []string{"a"}},
		{name: "'#' inside a JSON string", in: line(`"request_id":"#tag"`), ids: []string{"#tag"}},
		{name: "ids differing in case are distinct", in: line(`"request_id":"A"`) + "\n" + a, ids: []string{"A", "a"}},
		{name: "line numbers count comments and blanks", in: "# c\n\n" + a + "\n  # c\n{bad}\n" + b, badLine: 5},
		{name: "line numbers with CRLF", in: "# c\r\n\r\n" + a + "\r\n{bad}\r\n", badLine: 4},
		{name: "bad last line without newline", in: a + "\n\n{bad}", badLine: 3},
		{name: "bad line after a final blank", in: a + "\n\n\n{", badLine: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			decls, err := declare.Load(strings.NewReader(tt.in), "m.jsonl")
			if tt.badLine != 0 {
				probs := problemsOf(t, err)
				if len(probs) != 1 || probs[0].Line != tt.badLine || probs[0].File != "m.jsonl" {
					t.Errorf("problems = %+v, want one on m.jsonl:%d", probs, tt.badLine)
				}
				if decls != nil {
					t.Errorf("got %d declarations with an error", len(decls))
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := ids(decls); !slices.Equal(got, tt.ids) {
				t.Errorf("ids = %q, want %q", got, tt.ids)
			}
		})
	}
}

// Both spellings of every time field decode to the same instants and spans.
func TestLoadTimeFormats(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	in := strings.Join([]string{
		line(`"request_id":"rfc","valid_until":"2026-11-30T10:00:00+01:00","stale_after":"168h"`),
		line(fmt.Sprintf(`"request_id":"unix","valid_until":%d,"stale_after":604800`, at.Unix())),
		line(fmt.Sprintf(`"request_id":"frac","valid_until":%d.25,"stale_after":0.5`, at.Unix())),
		line(`"request_id":"lm","last_modified":"2026-11-30T09:00:00.75Z","stale_after":"1h30m"`),
	}, "\n")
	decls := mustLoad(t, in)
	check := func(i int, until time.Time, stale time.Duration) {
		t.Helper()
		d := decls[i]
		if !until.IsZero() && (d.ValidUntil == nil || !d.ValidUntil.Equal(until)) {
			t.Errorf("%s: valid_until = %v, want %v", d.RequestID, d.ValidUntil, until)
		}
		if d.StaleAfter == nil || time.Duration(*d.StaleAfter) != stale {
			t.Errorf("%s: stale_after = %v, want %v", d.RequestID, d.StaleAfter, stale)
		}
	}
	check(0, at, 168*time.Hour)
	check(1, at, 168*time.Hour)
	check(2, at.Add(250*time.Millisecond), 500*time.Millisecond)
	check(3, time.Time{}, 90*time.Minute)
	if lm := decls[3].LastModified; lm == nil || !lm.Equal(at.Add(750*time.Millisecond)) {
		t.Errorf("last_modified = %v", lm)
	}
}

type wantProblem struct {
	line      int
	requestID string
	field     string
	msg       string // substring of the message
}

func TestLoadProblems(t *testing.T) {
	ok := `"memory_type":"context","scope":"global","content":"Plain text."`
	tests := []struct {
		name string
		in   string
		want []wantProblem
	}{
		{"unknown field", `{"request_id":"a","wieght":0.4,` + ok + `}`,
			[]wantProblem{{1, "a", "wieght", "unknown field"}}},
		{"unknown field inside provenance", `{"request_id":"a","provenance":{"sourceid":"crm"},` + ok + `}`,
			[]wantProblem{{1, "a", "provenance.sourceid", `unknown field (did you mean "source_id"?)`}}},
		{"a misspelt field suggests the right one", `{"request_id":"a","sematic_weight":0.4,` + ok + `}`,
			[]wantProblem{{1, "a", "sematic_weight", `unknown field (did you mean "semantic_weight"?)`}}},
		{"a word of a field's name", `{"request_id":"a","trust":0.4,` + ok + `}`,
			[]wantProblem{{1, "a", "trust", `unknown field (did you mean "trust_score"?)`}}},
		{"a nested field at the top suggests its place", `{"request_id":"a","source_id":"crm",` + ok + `}`,
			[]wantProblem{{1, "a", "source_id", `unknown field (did you mean "provenance.source_id"?)`}}},
		{"a transposition is near", `{"request_id":"a","wieght":0.4,` + ok + `}`,
			[]wantProblem{{1, "a", "wieght", `unknown field (did you mean "semantic_weight"?)`}}},
		// encoding/json matches keys without regard to case and keeps the
		// last of a repeated key, so each of these would have loaded with
		// scope global.
		{"a case variant cannot override a field", `{"request_id":"a","scope":"session","session_id":"s","memory_type":"context","content":"x","SCOPE":"global"}`,
			[]wantProblem{{1, "a", "SCOPE", `case-sensitive (did you mean "scope"?)`}}},
		{"a case variant alone is refused", `{"request_id":"a","memory_type":"context","SCOPE":"global","content":"x"}`,
			[]wantProblem{{1, "a", "SCOPE", `did you mean "scope"`}}},
		{"a folded variant is refused", `{"request_id":"a","memory_type":"context","ſcope":"global","scope":"session","session_id":"s","content":"x"}`,
			[]wantProblem{{1, "a", "ſcope", `did you mean "scope"`}}},
		{"a repeated key is refused", `{"request_id":"a","scope":"session","session_id":"s","memory_type":"context","content":"x","scope":"global"}`,
			[]wantProblem{{1, "a", "scope", "given twice"}}},
		{"a repeated key through an escape is refused", `{"request_id":"a","scope":"session","session_id":"s","memory_type":"context","content":"x","\u0073cope":"global"}`,
			[]wantProblem{{1, "a", "scope", "given twice"}}},
		{"a repeated key inside provenance", `{"request_id":"a","provenance":{"uri":"x","uri":"y"},` + ok + `}`,
			[]wantProblem{{1, "a", "provenance.uri", "given twice"}}},
		{"a repeated request_id key names the first", `{"request_id":"a","request_id":"b",` + ok + `}`,
			[]wantProblem{{1, "a", "request_id", "given twice"}}},
		{"a conflict_key with white space", "{\"request_id\":\"a\"," + ok + "}\n" + `{"request_id":"b","conflict_key":"max rate",` + ok + `}`,
			[]wantProblem{{2, "b", "conflict_key", "without whitespace"}}},
		{"a conflict_key that is not a string", `{"request_id":"a","conflict_key":15,` + ok + `}`,
			[]wantProblem{{1, "a", "conflict_key", "want string"}}},
		{"string for a number", `{"request_id":"a","semantic_weight":"high",` + ok + `}`,
			[]wantProblem{{1, "a", "semantic_weight", "want number, got JSON string"}}},
		{"string for a boolean", `{"request_id":"a","required":"yes",` + ok + `}`,
			[]wantProblem{{1, "a", "required", "want boolean"}}},
		{"string for an array", `{"request_id":"a","audience":"assistant",` + ok + `}`,
			[]wantProblem{{1, "a", "audience", "want array"}}},
		{"number in a string array", `{"request_id":"a","roles":["ops",7],` + ok + `}`,
			[]wantProblem{{1, "a", "roles", "want string"}}},
		{"number for an object", `{"request_id":"a","provenance":5,` + ok + `}`,
			[]wantProblem{{1, "a", "provenance", "want object"}}},
		{"wrong type of a required field is one problem, not also 'required'",
			`{"request_id":"a","memory_type":"context","scope":"global","content":5}`,
			[]wantProblem{{1, "a", "content", "want string"}}},
		{"number for request_id", `{"request_id":7,` + ok + `}`,
			[]wantProblem{{1, "", "request_id", "want string"}}},
		{"bad valid_until string", `{"request_id":"a","valid_until":"next week",` + ok + `}`,
			[]wantProblem{{1, "a", "valid_until", "RFC 3339"}}},
		{"valid_until out of range", `{"request_id":"a","valid_until":1e15,` + ok + `}`,
			[]wantProblem{{1, "a", "valid_until", "Unix seconds"}}},
		{"bad stale_after string", `{"request_id":"a","stale_after":"a week","valid_until":1,` + ok + `}`,
			[]wantProblem{{1, "a", "stale_after", "168h"}}},
		{"negative stale_after seconds", `{"request_id":"a","stale_after":-5,"valid_until":1,` + ok + `}`,
			[]wantProblem{{1, "a", "stale_after", "168h"}}},
		{"stale_after too large for a duration", `{"request_id":"a","stale_after":1e10,"valid_until":1,` + ok + `}`,
			[]wantProblem{{1, "a", "stale_after", "168h"}}},
		{"zero stale_after", `{"request_id":"a","stale_after":"0s","valid_until":1,` + ok + `}`,
			[]wantProblem{{1, "a", "stale_after", "positive"}}},
		{"last_modified is RFC 3339 only", `{"request_id":"a","last_modified":1796029200,` + ok + `}`,
			[]wantProblem{{1, "a", "last_modified", ""}}},
		{"decode and validation problems of one line are all reported",
			`{"request_id":"a","bogus":1,"semantic_weight":"x","trust_score":2,"audience":["model"],` + ok + `}`,
			[]wantProblem{
				{1, "a", "bogus", "unknown field"},
				{1, "a", "semantic_weight", "want number"},
				{1, "a", "trust_score", "0.99"},
				{1, "a", "audience[0]", "user, assistant"},
			}},
		{"invalid JSON syntax", `{"request_id":"a" "memory_type":"context"}`,
			[]wantProblem{{1, "a", "", "invalid JSON"}}},
		{"unclosed object", `{"request_id":"a","memory_type":"context"`,
			[]wantProblem{{1, "a", "", "not closed"}}},
		{"unclosed string", `{"request_id":"a","content":"cut off`,
			[]wantProblem{{1, "a", "", "not closed"}}},
		{"stray closing brace", `{"request_id":"a",` + ok + `}}`,
			[]wantProblem{{1, "a", "", "after the JSON object"}}},
		{"stray closing bracket", `{"request_id":"a",` + ok + `}]`,
			[]wantProblem{{1, "a", "", "after the JSON object"}}},
		{"two objects on a line", `{"request_id":"a",` + ok + `} {"request_id":"b",` + ok + `}`,
			[]wantProblem{{1, "a", "", "after the JSON object"}}},
		{"an array is not a declaration", `[{"request_id":"a",` + ok + `}]`,
			[]wantProblem{{1, "", "", ""}}},
		{"a string is not a declaration", `"hello"`, []wantProblem{{1, "", "", ""}}},
		{"a number is not a declaration", `42`, []wantProblem{{1, "", "", ""}}},
		{"null has none of the required fields", `null`, []wantProblem{
			{1, "", "request_id", "required"}, {1, "", "memory_type", "required"},
			{1, "", "scope", "required"}, {1, "", "content", "required"},
		}},
		{"invalid UTF-8 in content", "{\"request_id\":\"a\",\"content\":\"caf\xe9\",\"memory_type\":\"context\",\"scope\":\"global\"}",
			[]wantProblem{{1, "a", "", "UTF-8"}}},
		{"invalid UTF-8 in request_id: the mangled id is not named",
			"{\"request_id\":\"a\xff\",\"content\":\"x\",\"memory_type\":\"context\",\"scope\":\"global\"}",
			[]wantProblem{{1, "", "", "UTF-8"}}},
		{"a repeated key with a bad first value is not half-loaded",
			`{"request_id":"a","valid_until":"soon","valid_until":1,` + ok + `}`,
			[]wantProblem{{1, "a", "valid_until", "given twice"}}},
		{"duplicate request_id names the first line", line(`"request_id":"a"`) + "\n# comment\n" + line(`"request_id":"a"`),
			[]wantProblem{{3, "a", "request_id", "first declared on line 1"}}},
		{"every later copy is reported", line(`"request_id":"a"`) + "\n" + line(`"request_id":"a"`) + "\n" + line(`"request_id":"a"`),
			[]wantProblem{{2, "a", "request_id", "line 1"}, {3, "a", "request_id", "line 1"}}},
		{"duplicate of a broken first copy is still reported",
			`{"request_id":"a","memory_type":"context","scope":"global"}` + "\n" + line(`"request_id":"a"`),
			[]wantProblem{{1, "a", "content", "required"}, {2, "a", "request_id", "line 1"}}},
		{"a broken second copy reports its problem and the duplicate",
			line(`"request_id":"a"`) + "\n" + `{"request_id":"a","scope":"team","memory_type":"context","content":"x"}`,
			[]wantProblem{{2, "a", "scope", "team"}, {2, "a", "request_id", "line 1"}}},
		{"bad lines among good ones", strings.Join([]string{
			line(`"request_id":"ok-1"`),
			`{"request_id":"bad-1","memory_type":"rule","scope":"global","content":"x"}`,
			line(`"request_id":"ok-2"`),
			`{"request_id":"bad-2","memory_type":"context","scope":"user","content":"x"}`,
			line(`"request_id":"ok-3"`),
		}, "\n"), []wantProblem{{2, "bad-1", "memory_type", "rule"}, {4, "bad-2", "user_id", "required"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			decls, err := declare.Load(strings.NewReader(tt.in), "m.jsonl")
			if decls != nil {
				t.Errorf("got %d declarations along with an error: a file loads whole or not at all", len(decls))
			}
			checkProblems(t, problemsOf(t, err), "m.jsonl", tt.want)
		})
	}
}

func checkProblems(t *testing.T, got []declare.Problem, file string, want []wantProblem) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		g, w := got[i], want[i]
		ok = g.File == file && g.Line == w.line && g.RequestID == w.requestID &&
			g.Field == w.field && strings.Contains(g.Message, w.msg) && g.Message != ""
	}
	if !ok {
		var b strings.Builder
		for _, p := range got {
			fmt.Fprintf(&b, "\n\t%s:%d id=%q field=%q: %s", p.File, p.Line, p.RequestID, p.Field, p.Message)
		}
		b.WriteString("\nwant:")
		for _, w := range want {
			fmt.Fprintf(&b, "\n\t%s:%d id=%q field=%q: …%s…", file, w.line, w.requestID, w.field, w.msg)
		}
		t.Errorf("problems:%s", b.String())
	}
}

// encoding/json would load a line with invalid UTF-8, replacing the bad
// bytes; the loader must refuse it so a block arrives exactly as written.
func TestLoadRefusesWhatEncodingJSONWouldMangle(t *testing.T) {
	in := "{\"request_id\":\"a\",\"memory_type\":\"context\",\"scope\":\"global\",\"content\":\"caf\xe9\"}"
	var d declare.Declaration
	if err := json.Unmarshal([]byte(in), &d); err != nil || d.Content != "caf\uFFFD" {
		t.Fatalf("premise: encoding/json gave %q, %v", d.Content, err)
	}
	if err := declare.Validate(&d); err != nil {
		t.Fatalf("premise: the mangled declaration validates: %v", err)
	}
	if decls, err := declare.Load(strings.NewReader(in), "m.jsonl"); err == nil {
		t.Fatalf("Load accepted invalid UTF-8: %q", decls[0].Content)
	}
}

func TestLoadInvalidFixture(t *testing.T) {
	name := filepath.Join("testdata", "invalid.jsonl")
	decls, err := declare.LoadFile(name)
	if decls != nil {
		t.Errorf("got %d declarations: nothing may load from a file with problems", len(decls))
	}
	checkProblems(t, problemsOf(t, err), name, []wantProblem{
		{5, "sess-note", "session_id", "scope is session"},
		{7, "pref-lang", "wieght", "unknown field"},
		{7, "pref-lang", "trust_score", "between 0 and 0.99"},
		{8, "rate-sheet", "audience", "want array"},
		{8, "rate-sheet", "valid_until", "next week"},
		{9, "offer-draft", "", "invalid JSON"},
		{10, "kyc-rule", "request_id", "first declared on line 3"},
		{11, "tone", "break_on_violation", "constraint"},
		{11, "tone", "violation_patterns[0]", "RE2"},
		{11, "tone", "violation_patterns[1]", "RE2"},
		{12, "", "request_id", "whitespace"},
		{12, "", "memory_type", `"rules"`},
		{12, "", "scope", `"team"`},
		{13, "refresh-me", "semantic_weight", "between 0 and 1"},
		{13, "refresh-me", "priority", "between 0 and 1"},
		{13, "refresh-me", "stale_after", "valid_until or last_modified"},
		{14, "roles-audience", "audience[1]", `"model"`},
		{14, "roles-audience", "roles[1]", ""},
		{15, "scope-override", "SCOPE", "case-sensitive"},
		{16, "twice", "scope", "given twice"},
		{17, "misplaced", "source_id", `did you mean "provenance.source_id"`},
		{17, "misplaced", "sematic_weight", `did you mean "semantic_weight"`},
		{18, "trunc-1", "", "not closed"},
	})
}

// The formatted error is what a user reads: one problem a line, each with
// file, line, request_id and field.
func TestLoadInvalidGolden(t *testing.T) {
	_, err := declare.LoadFile(filepath.Join("testdata", "invalid.jsonl"))
	if err == nil {
		t.Fatal("no error")
	}
	got := []byte(err.Error() + "\n")
	golden := filepath.Join("testdata", "invalid.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("error text differs from %s (go test -update rewrites it):\n got:\n%s\nwant:\n%s", golden, got, want)
	}
}

// longLimit asks the loader for its line limit under c, from the problem it
// reports for a line that is certainly too long.
func longLimit(t *testing.T, c declare.Config) int {
	t.Helper()
	huge := strings.Repeat("x", 8*max(c.MaxContentBytes, declare.DefaultMaxContentBytes)+1<<20)
	_, err := c.Load(strings.NewReader(huge), "m.jsonl")
	probs := problemsOf(t, err)
	var n int
	if len(probs) != 1 {
		t.Fatalf("one over-long line gave %d problems: %v", len(probs), err)
	}
	var size int
	if _, err := fmt.Sscanf(probs[0].Message, "line is %d bytes, more than a declaration can take (%d)", &size, &n); err != nil {
		t.Fatalf("unexpected message %q", probs[0].Message)
	}
	return n
}

func TestLoadLongLines(t *testing.T) {
	c := declare.Config{MaxContentBytes: 1}
	limit := longLimit(t, c)
	x := func(n int) string { return strings.Repeat("x", n) }
	in := strings.Join([]string{
		x(limit),        // 1: exactly the limit: bad JSON, but not too long
		x(limit + 1),    // 2: too long by one byte
		`{"bad"}`,       // 3: must still be read and reported as line 3
		x(limit) + "\r", // 4: the "\r" of CRLF is not counted
		x(3*limit + 7),  // 5: several buffers long: still one problem
		`{"request_id":"ok","memory_type":"context","scope":"global","content":"x"}`, // 6: valid
		x(limit + 100), // 7: the last line, without newline
	}, "\n")
	_, err := c.Load(strings.NewReader(in), "m.jsonl")
	probs := problemsOf(t, err)
	var long []int
	for _, p := range probs {
		if strings.Contains(p.Message, "more than a declaration can take") {
			long = append(long, p.Line)
		}
	}
	if want := []int{2, 5, 7}; !slices.Equal(long, want) {
		t.Errorf("over-long lines reported on %v, want %v:\n%v", long, want, err)
	}
	var lines []int
	for _, p := range probs {
		lines = append(lines, p.Line)
	}
	if want := []int{1, 2, 3, 4, 5, 7}; !slices.Equal(lines, want) {
		t.Errorf("problems on lines %v, want %v:\n%v", lines, want, err)
	}
}

// The limit admits the largest content the Config accepts, even written
// with the longest JSON escapes (six bytes for a control byte).
func TestLoadLineLimitFitsEscapedContent(t *testing.T) {
	c := declare.Config{MaxContentBytes: 64 << 10}
	d := base()
	d.Content = strings.Repeat("\x01", c.MaxContentBytes)
	b, err := json.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 6*c.MaxContentBytes {
		t.Fatalf("premise: line is only %d bytes", len(b))
	}
	decls, err := c.Load(bytes.NewReader(b), "m.jsonl")
	if err != nil {
		t.Fatalf("a %d-byte line with content at the limit: %v", len(b), err)
	}
	if decls[0].Content != d.Content {
		t.Error("content changed")
	}
}

// endless yields n bytes of 'x', then tail.
type endless struct {
	n    int
	tail *strings.Reader
}

func (r *endless) Read(p []byte) (int, error) {
	if r.n == 0 {
		return r.tail.Read(p)
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// An over-long line is skipped, not buffered: with a 64 KiB line limit,
// loading a 64 MiB line allocates about what the limit needs, and the line
// after it is still read.
func TestLoadLongLineIsNotBuffered(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MiB")
	}
	const size = 64 << 20
	c := declare.Config{MaxContentBytes: 1}
	r := &endless{n: size, tail: strings.NewReader("\n" + `{"request_id":"after"}`)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Load(r, "m.jsonl")
	runtime.ReadMemStats(&after)
	probs := problemsOf(t, err)
	if len(probs) < 2 || !strings.Contains(probs[0].Message, "more than a declaration can take") || probs[0].Line != 1 ||
		slices.ContainsFunc(probs[1:], func(p declare.Problem) bool { return p.Line != 2 }) {
		t.Errorf("want one over-long problem on line 1, then line 2's problems:\n%v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("allocated %d KiB to skip a %d MiB line", alloc>>10, size>>20)
	}
}

type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

func TestLoadReadError(t *testing.T) {
	broken := errors.New("disk on fire")
	r := &failingReader{r: strings.NewReader(line(`"request_id":"a"`) + "\n" + line(`"request_id":"b"`)), err: broken}
	decls, err := declare.Load(r, "m.jsonl")
	if decls != nil || !errors.Is(err, broken) {
		t.Fatalf("Load = %d decls, %v; want the read error", len(decls), err)
	}
	if errors.Is(err, declare.ErrInvalid) {
		t.Errorf("a read error is not invalid input: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "declare: ") || !strings.Contains(err.Error(), "m.jsonl") {
		t.Errorf("error %q should name the package and the file", err)
	}
}

func TestLoadFile(t *testing.T) {
	_, err := declare.LoadFile(filepath.Join(t.TempDir(), "missing.jsonl"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
	if errors.Is(err, declare.ErrInvalid) {
		t.Errorf("a missing file is not invalid input: %v", err)
	}

	// Config.LoadFile applies the Config's limits; LoadFile the defaults.
	name := filepath.Join(t.TempDir(), "m.jsonl")
	content := strings.Repeat("x", 17)
	if err := os.WriteFile(name, []byte(line(`"request_id":"big","semantic_weight":0.5`)+"\n"+
		`{"request_id":"c","memory_type":"context","scope":"global","content":"`+content+`"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if decls, err := declare.LoadFile(name); err != nil || len(decls) != 2 {
		t.Fatalf("LoadFile = %d, %v", len(decls), err)
	}
	_, err = declare.Config{MaxContentBytes: 16}.LoadFile(name)
	checkProblems(t, problemsOf(t, err), name, []wantProblem{{2, "c", "content", "limit of 16"}})
	if decls, err := (declare.Config{MaxContentBytes: 17}).LoadFile(name); err != nil || len(decls) != 2 {
		t.Errorf("content at the configured limit: %d, %v", len(decls), err)
	}
}

// What the loader returns, written back as JSON, loads to the same thing:
// Time and Duration write what they read.
func TestLoadMarshalRoundTrip(t *testing.T) {
	decls, err := declare.LoadFile(filepath.Join("testdata", "valid.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	first := marshalLines(t, decls)
	again, err := declare.Load(bytes.NewReader(first), "roundtrip.jsonl")
	if err != nil {
		t.Fatalf("reloading %s: %v", first, err)
	}
	if second := marshalLines(t, again); !bytes.Equal(first, second) {
		t.Errorf("round trip changed the declarations:\n%s\n%s", first, second)
	}
	for i := range decls {
		a, b := decls[i], again[i]
		if (a.ValidUntil == nil) != (b.ValidUntil == nil) || a.ValidUntil != nil && !a.ValidUntil.Equal(b.ValidUntil.Time) {
			t.Errorf("%s: valid_until %v became %v", a.RequestID, a.ValidUntil, b.ValidUntil)
		}
		sa, oka := a.StaleFrom()
		sb, okb := b.StaleFrom()
		if oka != okb || !sa.Equal(sb) || a.Weight() != b.Weight() || a.Trust() != b.Trust() || a.IsRequired() != b.IsRequired() {
			t.Errorf("%s: meaning changed in the round trip", a.RequestID)
		}
	}
}

func marshalLines(t *testing.T, decls []declare.Declaration) []byte {
	t.Helper()
	var b bytes.Buffer
	for i := range decls {
		line, err := json.Marshal(&decls[i])
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestLoadConflictKey(t *testing.T) {
	decls := mustLoad(t, line(`"request_id":"rate-cap","conflict_key":"max-rate"`)+"\n"+line(`"request_id":"other"`))
	if decls[0].ConflictKey != "max-rate" || decls[1].ConflictKey != "" {
		t.Fatalf("conflict keys = %q, %q; want \"max-rate\", \"\"", decls[0].ConflictKey, decls[1].ConflictKey)
	}
	out, err := json.Marshal(decls[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"conflict_key":"max-rate"`)) {
		t.Fatalf("marshalled %s lacks conflict_key", out)
	}
}
