package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/contextasm/contextasm/feedback"
)

func TestAssembleFeedbackRoundTrip(t *testing.T) {
	ts := start(t, Config{})
	ts.declareFile(keyAcmeSupport)
	r := ts.must(http.StatusOK, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(map[string]any{"session": "s1", "user": "u-1", "blocks": true}))
	ids := r.ids()
	for _, want := range []string{"rule-tone", "rule-refunds", "cust-42", "doc-policy", "s1-t1-user", "s1-t1-agent", "s1-t1-tool"} {
		if !slices.Contains(ids, want) {
			t.Errorf("the context lacks %s: %v", want, ids)
		}
	}
	for _, hidden := range []string{"rule-audit", "s2-t1-user"} {
		if slices.Contains(ids, hidden) || strings.Contains(string(r.raw), hidden) {
			t.Errorf("the response names %s, which the request may not see", hidden)
		}
	}
	if got := r.body["roles"]; !slices.Equal(anyStrings(got), []string{"support"}) {
		t.Errorf("roles = %v, want the key's [support]", got)
	}
	text := r.body["text"].(string)
	if !strings.HasPrefix(text, "[MODEL_CONTEXT_PROTOCOL v1.2 | fp:") || !strings.Contains(text, "Refund policy") {
		t.Errorf("text:\n%s", text)
	}
	id := r.body["assembly_id"].(string)
	if !strings.HasPrefix(id, "asm_") || len(id) != 36 {
		t.Errorf("assembly_id %q: want asm_ and 32 hex digits", id)
	}

	// Feedback: a citation moves trust, once.
	fb := ts.must(http.StatusOK, "POST", "/v1/feedback", keyAcmeSupport, map[string]any{"assembly_id": id,
		"response": `<memory_ref id="doc-policy"/> You get a full refund within 30 days.`})
	changes := fb.body["trust_changes"].([]any)
	if len(changes) != 1 || changes[0].(map[string]any)["request_id"] != "doc-policy" {
		t.Errorf("trust_changes = %v, want doc-policy's", changes)
	}
	if fb.body["stored"] != false {
		t.Errorf("stored = %v without a store, want false", fb.body["stored"])
	}
	again := ts.must(http.StatusConflict, "POST", "/v1/feedback", keyAcmeSupport, map[string]any{"assembly_id": id, "response": `<memory_ref id="doc-policy"/>`})
	if code, field, _ := again.err(); code != codeFedBack || field != "assembly_id" {
		t.Errorf("a second feedback: %s %s, want %s assembly_id", code, field, codeFedBack)
	}
	eng, _ := ts.Engine("acme")
	ch := changes[0].(map[string]any)
	if got, want := eng.State().Trust["doc-policy"], ch["to"].(float64); got != want || want != ch["from"].(float64)+feedback.DefaultPolicy().StartGain {
		t.Errorf("doc-policy's trust is %v after one citation; the change said %v", got, ch)
	}

	// The dump of the assembly, fed back.
	d := ts.must(http.StatusOK, "GET", "/v1/assemblies/"+id, keyAcmeSupport, nil)
	if d.body["fed_back"] != true || d.body["session"] != "s1" {
		t.Errorf("GET the assembly: %s", d.raw)
	}
	dump := d.body["dump"].(map[string]any)
	if dump["text"] != text {
		t.Errorf("the dump's text differs from the assembly's")
	}
}

func TestChatFormats(t *testing.T) {
	ts := start(t, Config{})
	ts.declareFile(keyAcmeSupport)
	o := ts.must(http.StatusOK, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(map[string]any{"session": "s1", "format": "openai"}))
	body := o.body["body"].(map[string]any)
	msgs := body["messages"].([]any)
	if msgs[0].(map[string]any)["role"] != "system" {
		t.Errorf("openai: the first message is %v, want the system prompt", msgs[0])
	}
	var calls int
	for _, m := range msgs {
		if tc, ok := m.(map[string]any)["tool_calls"]; ok {
			calls += len(tc.([]any))
		}
	}
	if calls != 1 || o.body["format"] != "openai" {
		t.Errorf("openai: %d tool calls, format %v; want 1, openai\n%s", calls, o.body["format"], o.raw)
	}
	a := ts.must(http.StatusOK, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(map[string]any{"session": "s1", "format": "anthropic"}))
	ab := a.body["body"].(map[string]any)
	if _, ok := ab["system"]; !ok || ab["messages"].([]any)[0].(map[string]any)["role"] != "user" {
		t.Errorf("anthropic: %s", a.raw)
	}
	r := ts.must(http.StatusOK, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(map[string]any{"session": "s1", "format": "responses"}))
	rb := r.body["body"].(map[string]any)
	var kinds []string
	for _, it := range rb["input"].([]any) {
		kinds = append(kinds, it.(map[string]any)["type"].(string))
	}
	if _, ok := rb["instructions"].(string); !ok || !slices.Contains(kinds, "function_call") || !slices.Contains(kinds, "function_call_output") || r.body["format"] != "responses" {
		t.Errorf("responses: items %v\n%s", kinds, r.raw)
	}
	// The render hash is the SHA-256 of the body, as the library's.
	var compact map[string]any
	if err := json.Unmarshal(a.raw, &compact); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.body["render_hash"].(string), "sha256:") {
		t.Errorf("render_hash %v", a.body["render_hash"])
	}
}

func TestRolesNarrowNeverWiden(t *testing.T) {
	ts := start(t, Config{})
	ts.declareFile(keyAcmeAll)
	cases := []struct {
		key     string
		roles   any // nil: absent
		status  int
		has     []string
		hasNot  []string
		errPath string
	}{
		{keyAcmeSupport, nil, 200, []string{"rule-refunds"}, []string{"rule-audit"}, ""},
		{keyAcmeSupport, []string{}, 200, nil, []string{"rule-refunds", "rule-audit"}, ""},
		{keyAcmeSupport, []string{"support"}, 200, []string{"rule-refunds"}, []string{"rule-audit"}, ""},
		{keyAcmeSupport, []string{"support", "auditor"}, 403, nil, nil, "roles[1]"},
		{keyAcmeAuditor, []string{"support"}, 403, nil, nil, "roles[0]"},
		{keyAcmeAll, []string{"auditor", "support"}, 200, []string{"rule-refunds", "rule-audit"}, nil, ""},
		{keyAcmeAll, nil, 200, nil, []string{"rule-refunds", "rule-audit"}, ""}, // "*" holds no role by itself
		{keyAcmeAll, []string{"*"}, 400, nil, nil, "roles[0]"},
	}
	for _, c := range cases {
		extra := map[string]any{"blocks": true}
		if c.roles != nil {
			extra["roles"] = c.roles
		}
		r := ts.do("POST", "/v1/assemble", c.key, assembleBody(extra))
		if r.status != c.status {
			t.Errorf("%s roles %v: status %d, want %d\n%s", c.key, c.roles, r.status, c.status, r.raw)
			continue
		}
		if c.errPath != "" {
			if _, field, _ := r.err(); field != c.errPath {
				t.Errorf("%s roles %v: field %q, want %q", c.key, c.roles, field, c.errPath)
			}
			continue
		}
		ids := r.ids()
		for _, id := range c.has {
			if !slices.Contains(ids, id) {
				t.Errorf("%s roles %v: %s missing from %v", c.key, c.roles, id, ids)
			}
		}
		for _, id := range c.hasNot {
			if slices.Contains(ids, id) {
				t.Errorf("%s roles %v: %s in the context", c.key, c.roles, id)
			}
		}
	}
}

func TestDeclarationsAllOrNothing(t *testing.T) {
	ts := start(t, Config{})
	eng, _ := ts.Engine("acme")
	good := `{"request_id":"a","memory_type":"context","scope":"global","content":"A"}`
	arr := `[` + good + `,
	  {"request_id":"b","memory_type":"context","scope":"session","content":"B"},
	  {"request_id":"c","memory_type":"nope","scope":"global","content":"C"},
	  {"request_id":"d","memory_type":"context","scope":"global","content":"D","sematic_weight":0.5}]`
	r := ts.must(http.StatusBadRequest, "POST", "/v1/declarations", keyAcmeSupport, arr)
	code, field, _ := r.err()
	if code != codeInvalidDecl || field != "declarations[1].session_id" {
		t.Errorf("code %s field %s, want %s declarations[1].session_id\n%s", code, field, codeInvalidDecl, r.raw)
	}
	probs := r.body["error"].(map[string]any)["problems"].([]any)
	var at []string
	for _, p := range probs {
		m := p.(map[string]any)
		at = append(at, m["field"].(string))
		if int(m["index"].(float64)) < 1 {
			t.Errorf("a problem of declaration 0, which is valid: %v", m)
		}
	}
	for _, want := range []string{"declarations[1].session_id", "declarations[2].memory_type", "declarations[3].sematic_weight"} {
		if !slices.Contains(at, want) {
			t.Errorf("no problem at %s: %v", want, at)
		}
	}
	if eng.Len() != 0 {
		t.Errorf("%d blocks declared from a batch with problems, want none", eng.Len())
	}

	// JSONL: the index counts declarations, not lines.
	jsonl := "# a comment\n\n" + good + "\n" + `{"request_id":"b","memory_type":"context","scope":"global","content":"B","trust_score":2}` + "\n"
	r = ts.must(http.StatusBadRequest, "POST", "/v1/declarations", keyAcmeSupport, jsonl)
	p := r.body["error"].(map[string]any)["problems"].([]any)[0].(map[string]any)
	if p["index"].(float64) != 1 || p["line"].(float64) != 4 || p["field"] != "declarations[1].trust_score" {
		t.Errorf("JSONL problem %v: want index 1, line 4, declarations[1].trust_score", p)
	}

	// The store's own check: a tool result without its call.
	orphan := `{"request_id":"r","memory_type":"history","role":"tool","tool_call_id":"call_9","scope":"session","session_id":"s","content":"x"}`
	r = ts.must(http.StatusBadRequest, "POST", "/v1/declarations", keyAcmeSupport, "["+orphan+"]")
	if _, field, _ := r.err(); !strings.HasPrefix(field, "declarations[0]") {
		t.Errorf("an orphan tool result: field %q, want declarations[0]...\n%s", field, r.raw)
	}

	ok := ts.must(http.StatusOK, "POST", "/v1/declarations", keyAcmeSupport, "["+good+"]")
	if ok.body["declared"].(float64) != 1 || ok.body["blocks"].(float64) != 1 {
		t.Errorf("%s", ok.raw)
	}
}

func TestReplaceAndForget(t *testing.T) {
	ts := start(t, Config{})
	eng, _ := ts.Engine("acme")
	decl := func(id string) string {
		return `{"request_id":"` + id + `","memory_type":"context","scope":"global","content":"` + id + `"}`
	}
	ts.must(200, "POST", "/v1/declarations", keyAcmeSupport, "["+decl("conv/1")+","+decl("conv/2")+","+decl("conv/3")+","+decl("other")+"]")
	ts.must(200, "POST", "/v1/declarations?replace_prefix=conv/", keyAcmeSupport, "["+decl("conv/2")+","+decl("conv/4")+"]")
	if eng.Len() != 3 {
		t.Errorf("after replace_prefix: %d blocks, want conv/2, conv/4, other", eng.Len())
	}
	r := ts.must(400, "POST", "/v1/declarations?replace_prefix=conv/", keyAcmeSupport, "["+decl("elsewhere")+"]")
	if _, field, _ := r.err(); field != "declarations[0].request_id" {
		t.Errorf("a declaration outside the prefix: field %q", field)
	}
	r = ts.must(200, "DELETE", "/v1/declarations/conv%2F4", keyAcmeSupport, nil)
	if r.body["forgotten"].(float64) != 1 {
		t.Errorf("%s", r.raw)
	}
	ts.must(404, "DELETE", "/v1/declarations/conv%2F4", keyAcmeSupport, nil)
	r = ts.must(200, "DELETE", "/v1/declarations?prefix=conv/", keyAcmeSupport, nil)
	if r.body["forgotten"].(float64) != 1 || r.body["blocks"].(float64) != 1 {
		t.Errorf("prefix delete: %s", r.raw)
	}
	ts.must(400, "DELETE", "/v1/declarations", keyAcmeSupport, nil)
}

func TestInlineTemplateAndBudget(t *testing.T) {
	ts := start(t, Config{})
	ts.declareFile(keyAcmeSupport)
	inline := map[string]any{"budget": 400, "sections": []any{
		map[string]any{"name": "RULES", "priority": 1, "memory_types": []string{"constraint"}, "max_tokens": 200, "render": "{content}"}}}
	r := ts.must(200, "POST", "/v1/assemble", keyAcmeSupport, map[string]any{"template": inline, "now": testNow, "blocks": true})
	if r.body["budget"].(float64) != 400 || !slices.Contains(r.ids(), "rule-tone") {
		t.Errorf("%s", r.raw)
	}
	r = ts.must(200, "POST", "/v1/assemble", keyAcmeSupport, map[string]any{"template": "chat", "now": testNow, "budget": 900})
	if r.body["budget"].(float64) != 900 {
		t.Errorf("budget %v, want 900", r.body["budget"])
	}
	for _, enc := range []string{"/etc/passwd", "../testdata/tokenizer.json"} {
		for _, key := range []string{"encoding", "Encoding"} {
			bad := map[string]any{"budget": 400, key: enc, "sections": inline["sections"]}
			r := ts.must(400, "POST", "/v1/assemble", keyAcmeSupport, map[string]any{"template": bad, "now": testNow})
			if code, field, _ := r.err(); code != codeInvalidTpl || field != "template.encoding" {
				t.Errorf("an inline template naming the file %s as %q: %s %s", enc, key, code, field)
			}
		}
	}
	r = ts.must(400, "POST", "/v1/assemble", keyAcmeSupport, map[string]any{"template": map[string]any{"budget": 0, "sections": []any{}}, "now": testNow})
	if code, field, _ := r.err(); code != codeInvalidTpl || !strings.HasPrefix(field, "template.") {
		t.Errorf("an invalid inline template: %s %s\n%s", code, field, r.raw)
	}
	r = ts.must(400, "POST", "/v1/assemble", keyAcmeSupport, map[string]any{"template": "nope", "now": testNow})
	if code, _, _ := r.err(); code != codeUnknownTpl {
		t.Errorf("an unknown template: %s", code)
	}
}

func TestBudgetTooSmall(t *testing.T) {
	ts := start(t, Config{})
	ts.declareFile(keyAcmeSupport)
	r := ts.must(http.StatusUnprocessableEntity, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(map[string]any{"budget": 20}))
	req := r.body["error"].(map[string]any)["required"].([]any)
	if code, _, _ := r.err(); code != codeBudget || req[0].(map[string]any)["request_id"] != "rule-tone" {
		t.Errorf("%s", r.raw)
	}
}

// TestRequiredConflict: two required blocks stating the same rule (one
// conflict_key) are the host's contradiction: 422 required_conflict,
// naming both.
func TestRequiredConflict(t *testing.T) {
	ts := start(t, Config{})
	ts.must(200, "POST", "/v1/declarations", keyAcmeSupport, `[
	  {"request_id":"cap-15","memory_type":"constraint","scope":"global","content":"Rates may not exceed 15%.","required":true,"conflict_key":"rate-cap"},
	  {"request_id":"cap-18","memory_type":"constraint","scope":"global","content":"Small businesses may go up to 18%.","required":true,"conflict_key":"rate-cap"}]`)
	r := ts.must(http.StatusUnprocessableEntity, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(nil))
	if code, _, msg := r.err(); code != codeConflict || !strings.Contains(msg, "cap-15") || !strings.Contains(msg, "cap-18") {
		t.Errorf("%s", r.raw)
	}
}

func TestCount(t *testing.T) {
	ts := start(t, Config{})
	r := ts.must(200, "POST", "/v1/count", keyAcmeSupport, map[string]any{"text": "hello world"})
	if r.body["tokens"].(float64) != 2 || r.body["encoding"] != "o200k_base" {
		t.Errorf("%s", r.raw)
	}
	r = ts.must(200, "POST", "/v1/count", keyAcmeSupport, map[string]any{"encoding": "cl100k_base", "texts": []string{"hello world", "", "a b c"}})
	if got := anyInts(r.body["counts"]); !slices.Equal(got, []int{2, 0, 3}) || r.body["tokens"].(float64) != 5 {
		t.Errorf("%s", r.raw)
	}
	r = ts.must(200, "POST", "/v1/count", keyAcmeSupport, map[string]any{"encoding": "approx:claude", "text": "hello world"})
	if r.body["approximate"] == nil {
		t.Errorf("an approximate count says nothing of its basis: %s", r.raw)
	}
	r = ts.must(400, "POST", "/v1/count", keyAcmeSupport, map[string]any{"encoding": "/etc/hosts", "text": "x"})
	if _, field, _ := r.err(); field != "encoding" {
		t.Errorf("a file as the encoding: %s", r.raw)
	}
}

func TestEndSession(t *testing.T) {
	ts := start(t, Config{})
	ts.declareFile(keyAcmeSupport)
	a := ts.must(200, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(map[string]any{"session": "s1"}))
	id := a.body["assembly_id"].(string)
	r := ts.must(200, "POST", "/v1/sessions/s1/end", keyAcmeSupport, nil)
	if r.body["blocks"].(float64) != 3 || r.body["decisions"].(float64) != 1 || r.body["assemblies"].(float64) != 1 {
		t.Errorf("%s", r.raw)
	}
	ts.must(404, "GET", "/v1/assemblies/"+id, keyAcmeSupport, nil)
	ts.must(404, "POST", "/v1/sessions/s1/end", keyAcmeSupport, nil)
}

// anyStrings converts a decoded JSON array of strings.
func anyStrings(v any) []string {
	arr, _ := v.([]any)
	out := []string{}
	for _, e := range arr {
		out = append(out, e.(string))
	}
	return out
}

// anyInts converts a decoded JSON array of numbers.
func anyInts(v any) []int {
	arr, _ := v.([]any)
	out := []int{}
	for _, e := range arr {
		out = append(out, int(e.(float64)))
	}
	return out
}

// TestMetrics: /metrics in Prometheus's text format counts what the
// server did, with no tenant named.
func TestMetrics(t *testing.T) {
	ts := start(t, Config{})
	ts.declareFile(keyAcmeSupport)
	a := ts.must(200, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(map[string]any{"session": "s1", "format": "anthropic"}))
	ts.must(200, "POST", "/v1/feedback", keyAcmeSupport, map[string]any{"assembly_id": a.body["assembly_id"], "response": "ok"})
	ts.must(200, "POST", "/v1/assemble", keyBeta, assembleBody(nil))
	ts.must(422, "POST", "/v1/assemble", keyAcmeSupport, assembleBody(map[string]any{"budget": 20}))
	ts.must(401, "POST", "/v1/assemble", "", assembleBody(nil))
	m := ts.must(200, "GET", "/metrics", "", nil)
	text := string(m.raw)
	for _, want := range []string{
		`contextasm_assemblies_total{format="anthropic",outcome="ok"} 1`,
		`contextasm_assemblies_total{format="text",outcome="ok"} 1`,
		`contextasm_assemblies_total{format="text",outcome="budget_too_small"} 1`,
		`contextasm_feedback_total{outcome="ok"} 1`,
		`contextasm_http_requests_total{code="401",route="/v1/assemble"} 1`,
		`contextasm_http_requests_total{code="422",route="/v1/assemble"} 1`,
		`contextasm_excluded_blocks_total{reason="out_of_scope"}`,
		`contextasm_assembly_duration_seconds_bucket{format="anthropic"`,
		`contextasm_state_stores{status="ok"} 0`,
		"process_resident_memory_bytes",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, tenant := range []string{"acme", "beta"} {
		if strings.Contains(text, tenant) {
			t.Errorf("/metrics names the tenant %s", tenant)
		}
	}
}
