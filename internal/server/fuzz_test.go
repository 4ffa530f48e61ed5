package server

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/contextasm/contextasm/internal/strictjson"
)

// knownCodes are the codes decoding may answer with.
var knownCodes = []string{codeMalformedJSON, codeUnknownField, codeWrongType, codeInvalid, codeInvalidDecl, codeTooLarge}

// FuzzDecode: whatever a client sends, decoding a request body never
// panics, answers a 4xx with a known code, or decodes a value that
// encodes and decodes back to itself; a batch of declarations is all
// taken or all refused.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"template":"chat","session":"s1","user":"u","roles":["a"],"now":"2026-11-30T09:00:00Z","format":"openai","fresh":true,"budget":900,"dump":true,"blocks":true}`,
		`{"template":{"budget":400,"sections":[]}}`,
		`{"template":"chat","query":"refund \u00e9","no_query":false}`, `{"template":"chat","relevance":{"a":0.5,"b":1,"c":0}}`,
		`{"template":"chat","relevance":{"a":2}}`, `{"template":"chat","relevance":null,"no_query":true}`,
		`{"assembly_id":"asm_1","response":"<memory_ref id=\"a\"/>","cited":[{"id":"a","offset":0,"type":"web"}],"usage":{"input_tokens":9,"cached_tokens":2,"cache_write_tokens":1}}`,
		`{"encoding":"cl100k_base","texts":["a","b"]}`,
		`{"template":"chat","template":"x"}`, `{"Template":1}`, `{"roles":[1,2]}`, `{"a":{"b":[{"c":1}]}}`,
		`[{"request_id":"a","memory_type":"context","scope":"global","content":"A"}]`,
		"{\"request_id\":\"a\",\"memory_type\":\"context\",\"scope\":\"global\",\"content\":\"A\"}\n# c\n\n",
		`[1, {"request_id":"b"}]`, `[`, `{`, "\xef\xbb\xbf{}", "\xff", `null`, `{"template":"chat"} x`,
	} {
		f.Add([]byte(seed))
	}
	s := &Server{cfg: Config{}}
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(what string, err *apiError) {
			if err == nil {
				return
			}
			if err.status < 400 || err.status >= 500 || !slices.Contains(knownCodes, err.body.Code) || err.body.Message == "" {
				t.Fatalf("%s: %d %q %q for %q", what, err.status, err.body.Code, err.body.Message, body)
			}
		}
		var req assembleRequest
		if roundTrip(t, body, assembleSchema, &req, check) {
			check("query", s.checkQuery(&req))
		}
		roundTrip(t, body, feedbackSchema, &feedbackRequest{}, check)
		roundTrip(t, body, countSchema, &countRequest{}, check)
		decls, err := s.parseDeclarations(body)
		check("declarations", err)
		if err == nil && len(decls) == 0 && len(body) > 0 && body[0] == '[' {
			return // an empty array
		}
		if err != nil && decls != nil {
			t.Fatalf("declarations: %d declared and an error for %q", len(decls), body)
		}
		if err != nil && len(err.body.Problems) > 0 {
			for _, p := range err.body.Problems {
				if p.Field == "" || p.Message == "" {
					t.Fatalf("a problem without its field or message: %+v for %q", p, body)
				}
			}
		}
	})
}

// roundTrip decodes body into v and, when it decodes, checks that v
// encodes to JSON that decodes back to the same value; it says whether
// body decoded.
func roundTrip[T any](t *testing.T, body []byte, schema *strictjson.Schema, v *T, check func(string, *apiError)) bool {
	t.Helper()
	name := reflect.TypeFor[T]().Name()
	if err := decodeStrict(body, schema, v); err != nil {
		check(name, err)
		return false
	}
	enc, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	back := new(T)
	if aerr := decodeStrict(enc, schema, back); aerr != nil {
		t.Fatalf("%s: the re-encoded %s does not decode: %v", name, enc, aerr)
	}
	again, err := json.Marshal(back)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if string(enc) != string(again) { // compared as JSON: a RawMessage left nil comes back as null
		t.Fatalf("%s: %q decoded to %s, which decodes to %s", name, body, enc, again)
	}
	return true
}
