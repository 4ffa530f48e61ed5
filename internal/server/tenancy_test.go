package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestTenantsNeverMeet: one tenant's blocks, sessions and assemblies are
// unreachable with another's key, however it asks: by id, by prefix, by
// assembly id, in dumps. What exists elsewhere answers as what does not
// exist at all.
func TestTenantsNeverMeet(t *testing.T) {
	ts := start(t, Config{})
	ts.declareFile(keyAcmeAll)
	acme, _ := ts.Engine("acme")
	beta, _ := ts.Engine("beta")
	ts.must(200, "POST", "/v1/declarations", keyBeta, `{"request_id":"beta-only","memory_type":"context","scope":"session","session_id":"s1","content":"Beta's own note."}`)
	acmeBlocks := acme.Len()

	// Acme's assembly of its session s1, with its dump.
	a := ts.must(200, "POST", "/v1/assemble", keyAcmeAll, assembleBody(map[string]any{"session": "s1", "user": "u-1", "roles": []string{"support"}, "dump": true}))
	acmeID := a.body["assembly_id"].(string)
	if strings.Contains(string(a.raw), "beta-only") || strings.Contains(string(a.raw), "Beta's own") {
		t.Errorf("acme's assembly shows beta's block:\n%s", a.raw)
	}

	// Beta assembles the same session id and user: none of acme's blocks,
	// not even counted among the hidden ones.
	b := ts.must(200, "POST", "/v1/assemble", keyBeta, assembleBody(map[string]any{"session": "s1", "user": "u-1", "dump": true}))
	for _, id := range []string{"rule-tone", "rule-refunds", "cust-42", "doc-policy", "s1-t1-user", "Refund policy", "Customer 42"} {
		if strings.Contains(string(b.raw), id) {
			t.Errorf("beta's assembly shows acme's %q:\n%s", id, b.raw)
		}
	}
	if ex, ok := b.body["excluded_counts"]; ok {
		t.Errorf("beta's assembly counts hidden blocks %v: beta has none hidden", ex)
	}

	// Acme's assembly id, with beta's key: 404, as an id that never was.
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/assemblies/" + acmeID, ""},
		{"POST", "/v1/feedback", `{"assembly_id":"` + acmeID + `","response":"<memory_ref id=\"doc-policy\"/>"}`},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		got := ts.must(http.StatusNotFound, c.method, c.path, keyBeta, body)
		never := "asm_00000000000000000000000000000000"
		var nbody any
		if c.body != "" {
			nbody = strings.ReplaceAll(c.body, acmeID, never)
		}
		want := ts.must(http.StatusNotFound, c.method, strings.ReplaceAll(c.path, acmeID, never), keyBeta, nbody)
		if strings.ReplaceAll(string(got.raw), acmeID, never) != string(want.raw) {
			t.Errorf("%s %s with beta's key answers otherwise for acme's id than for one that never was:\n%s\n%s", c.method, c.path, got.raw, want.raw)
		}
	}
	if _, learned := acme.State().Trust["doc-policy"]; learned || ts.must(200, "GET", "/v1/assemblies/"+acmeID, keyAcmeAll, nil).body["fed_back"] != false {
		t.Errorf("beta's feedback reached acme's assembly")
	}

	// Acme's blocks by id, and by prefix, with beta's key.
	ts.must(http.StatusNotFound, "DELETE", "/v1/declarations/doc-policy", keyBeta, nil)
	r := ts.must(200, "DELETE", "/v1/declarations?prefix=rule-", keyBeta, nil)
	if r.body["forgotten"].(float64) != 0 {
		t.Errorf("beta's prefix delete forgot %v blocks", r.body["forgotten"])
	}
	r = ts.must(200, "DELETE", "/v1/declarations?prefix=s", keyBeta, nil) // beta's own "beta-only" does not match; nothing of acme's either
	if r.body["forgotten"].(float64) != 0 {
		t.Errorf("beta's prefix delete forgot %v blocks", r.body["forgotten"])
	}
	if acme.Len() != acmeBlocks {
		t.Errorf("acme holds %d blocks after beta's deletes, want %d", acme.Len(), acmeBlocks)
	}

	// Acme's session, ended with beta's key: beta's own s1 ends, acme's
	// stays.
	r = ts.must(200, "POST", "/v1/sessions/s1/end", keyBeta, nil)
	if r.body["blocks"].(float64) != 1 {
		t.Errorf("beta's end of s1 released %v blocks, want its own 1", r.body["blocks"])
	}
	if acme.Len() != acmeBlocks || beta.Len() != 0 {
		t.Errorf("after beta ended s1: acme %d blocks (want %d), beta %d (want 0)", acme.Len(), acmeBlocks, beta.Len())
	}
	ts.must(http.StatusNotFound, "POST", "/v1/sessions/s1/end", keyBeta, nil)
	ts.must(200, "GET", "/v1/assemblies/"+acmeID, keyAcmeAll, nil)

	// Keys.
	for _, key := range []string{"", "acme-support-key-0001x", "not-a-key"} {
		r := ts.must(http.StatusUnauthorized, "POST", "/v1/assemble", key, assembleBody(nil))
		if code, _, _ := r.err(); code != codeUnauthorized || r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("key %q: %s", key, r.raw)
		}
	}
}

// TestParseKeys: every problem of a keys file, each named.
func TestParseKeys(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"keys":[]}`, "no key"},
		{`{"keys":[{"key":"short","tenant":"a","roles":[]}]}`, "keys[0].key: is 5 bytes"},
		{`{"keys":[{"key_sha256":"abc","tenant":"a"}]}`, "keys[0].key_sha256: must be 64 hex digits"},
		{`{"keys":[{"key":"0123456789abcdef","tenant":"A b"}]}`, "keys[0].tenant"},
		{`{"keys":[{"key":"0123456789abcdef","tenant":"a","roles":["has space"]}]}`, "keys[0].roles[0]"},
		{`{"keys":[{"key":"0123456789abcdef","tenant":"a"},{"key":"0123456789abcdef","tenant":"b"}]}`, "keys[1].key: the same key is listed twice"},
		{`{"keys":[{"key":"0123456789abcdef","key_sha256":"00","tenant":"a"}]}`, "not both"},
		{`{"keys":[{"kee":"0123456789abcdef","tenant":"a"}]}`, "unknown field"},
		{`{"keys":[{"tenant":"a"}]}`, "keys[0].key: missing"},
	} {
		_, err := ParseKeys([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.doc, err, c.want)
		}
	}
	k, err := ParseKeys([]byte(`{"keys":[{"key_sha256":"` + strings.Repeat("ab", 32) + `","tenant":"t1","roles":["r"]},{"key":"0123456789abcdef","tenant":"t0"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := k.Tenants(); len(got) != 2 || got[0] != "t0" || got[1] != "t1" {
		t.Errorf("Tenants() = %v", got)
	}
	if key, ok := k.lookup("0123456789abcdef"); !ok || key.Tenant != "t0" {
		t.Errorf("lookup of a plain key: %v %v", key, ok)
	}
}
