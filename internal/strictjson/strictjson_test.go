package strictjson_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/internal/strictjson"
)

type inner struct {
	SourceID string `json:"source_id,omitempty"`
	URI      string `json:"uri,omitempty"`
}

type stamp struct{ time.Time }

func (s *stamp) UnmarshalJSON(b []byte) error { return nil }

type Embedded struct {
	Flat string `json:"flat"`
}

type doc struct {
	Embedded
	RequestID      string            `json:"request_id"`
	Scope          string            `json:"scope"`
	SemanticWeight *float64          `json:"semantic_weight,omitempty"`
	Provenance     inner             `json:"provenance,omitzero"`
	Sections       []inner           `json:"sections"`
	Labels         map[string]string `json:"labels"`
	Meta           map[string]inner  `json:"meta"`
	Any            any               `json:"any"`
	At             *stamp            `json:"at"`
	Ignored        string            `json:"-"`
	NoTag          string
	private        string // must not be a field
}

var _ = doc{private: "unexported fields are no JSON fields"}

var schema = strictjson.For(reflect.TypeFor[doc]())

type want struct {
	kind    strictjson.Kind
	path    string
	suggest string
}

func TestCheck(t *testing.T) {
	dup, cas, unk := strictjson.KindDuplicate, strictjson.KindCase, strictjson.KindUnknown
	tests := []struct {
		name string
		in   string
		want []want
	}{
		{"clean", `{"request_id":"a","scope":"global","provenance":{"source_id":"x"},"sections":[{"uri":"u"}]}`, nil},
		{"clean with white space", " {\n \"scope\" : \"g\" ,\r\n\t\"labels\" : { } , \"sections\" : [ ] }\n", nil},
		{"not an object", `[1,2,"x"]`, nil},
		{"scalar", `"x"`, nil},
		{"null", `null`, nil},
		{"the issue's variant key", `{"scope":"session","SCOPE":"global"}`, []want{{cas, "SCOPE", "scope"}}},
		{"exact duplicate", `{"scope":"session","request_id":"a","scope":"global"}`, []want{{dup, "scope", ""}}},
		{"duplicate through an escape", `{"scope":"session","\u0073cope":"global"}`, []want{{dup, "scope", ""}}},
		{"escaped key that is clean", `{"\u0073cope":"global"}`, nil},
		{"Unicode folding encoding/json accepts", `{"ſcope":"global"}`, []want{{cas, "ſcope", "scope"}}},
		{"Kelvin sign", "{\"K\u212a\":1}", []want{{unk, "K\u212a", ""}}},
		{"misspelt", `{"sematic_weight":0.3}`, []want{{unk, "sematic_weight", "semantic_weight"}}},
		{"camel case", `{"semanticWeight":0.3}`, []want{{unk, "semanticWeight", "semantic_weight"}}},
		{"nested field at the top", `{"source_id":"crm"}`, []want{{unk, "source_id", "provenance.source_id"}}},
		{"nested field misspelt at the top", `{"sourceid":"crm"}`, []want{{unk, "sourceid", "provenance.source_id"}}},
		{"unknown inside a struct", `{"provenance":{"sourceid":"crm"}}`, []want{{unk, "provenance.sourceid", "source_id"}}},
		{"nothing near", `{"colour":"red"}`, []want{{unk, "colour", ""}}},
		{"short keys are not near everything", `{"a":1}`, []want{{unk, "a", ""}}},
		{"unknown in a list element", `{"sections":[{"uri":"a"},{"URI":"b","url":"c"}]}`,
			[]want{{cas, "sections[1].URI", "uri"}, {unk, "sections[1].url", "uri"}}},
		{"duplicate in a list element", `{"sections":[{},{"uri":"a","uri":"b"}]}`, []want{{dup, "sections[1].uri", ""}}},
		{"map keys are free but not repeated", `{"labels":{"A":"1","a":"2","A":"3"}}`, []want{{dup, "labels.A", ""}}},
		{"map of structs", `{"meta":{"k":{"Uri":"x"}}}`, []want{{cas, "meta.k.Uri", "uri"}}},
		{"any: keys free, duplicates refused", `{"any":{"Q":{"x":1,"x":2},"q":[{"y":1,"y":1}]}}`,
			[]want{{dup, "any.Q.x", ""}, {dup, "any.q[0].y", ""}}},
		{"a custom decoder's keys are its own", `{"at":{"Whatever":1}}`, nil},
		{"embedded fields are flat", `{"flat":"x","Embedded":{}}`, []want{{unk, "Embedded", ""}}},
		{"a field without a tag keeps its Go name", `{"NoTag":"x","notag":"y"}`, []want{{cas, "notag", "NoTag"}}},
		{"json:\"-\" is no field", `{"Ignored":"x"}`, []want{{unk, "Ignored", ""}}},
		{"the value of a refused key is not checked again", `{"SCOPE":{"a":1,"a":2},"bogus":{"b":1,"b":1}}`,
			[]want{{cas, "SCOPE", "scope"}, {unk, "bogus", ""}}},
		{"a repeated refused key", `{"bogus":1,"bogus":2}`, []want{{unk, "bogus", ""}, {dup, "bogus", ""}}},
		{"many keys", manyKeys(40, 7), []want{{dup, "labels.k7", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.in)) {
				t.Fatalf("premise: invalid JSON %s", tt.in)
			}
			got := schema.Check([]byte(tt.in))
			var gw []want
			for _, p := range got {
				gw = append(gw, want{p.Kind, p.Path, p.Suggest})
				if tt.in[p.Offset] != '"' {
					t.Errorf("%s: offset %d is not a key's quote", p.Path, p.Offset)
				}
			}
			if !slices.Equal(gw, tt.want) {
				t.Errorf("got  %v\nwant %v", gw, tt.want)
			}
		})
	}
}

// manyKeys is an object of n distinct map keys with key dup repeated at the
// end, past the point where duplicates are tracked in a map.
func manyKeys(n, dup int) string {
	var b strings.Builder
	b.WriteString(`{"labels":{`)
	for i := range n {
		fmt.Fprintf(&b, `"k%d":"v",`, i)
	}
	fmt.Fprintf(&b, `"k%d":"again"}}`, dup)
	return b.String()
}

func TestMessage(t *testing.T) {
	for _, tt := range []struct {
		p    strictjson.Problem
		want string
	}{
		{strictjson.Problem{Kind: strictjson.KindDuplicate}, "given twice in one object; each field may appear once"},
		{strictjson.Problem{Kind: strictjson.KindCase, Suggest: "scope"}, `unknown field: field names are case-sensitive (did you mean "scope"?)`},
		{strictjson.Problem{Kind: strictjson.KindUnknown, Suggest: "provenance.source_id"}, `unknown field (did you mean "provenance.source_id"?)`},
		{strictjson.Problem{Kind: strictjson.KindUnknown}, "unknown field"},
	} {
		if got := tt.p.Message(); got != tt.want {
			t.Errorf("Message() = %q, want %q", got, tt.want)
		}
	}
}

func TestOffsets(t *testing.T) {
	in := "{\n  \"budget\": 5,\n  \"sections\": [\n    {\"name\": \"a\"},\n    {\"name\": \"b\", \"max_tokens\": -1, \"max_tokens\": 2}\n  ]\n}"
	offs := strictjson.Offsets([]byte(in))
	for _, tt := range []struct {
		path string
		want string // the text at the offset
		ok   bool
	}{
		{"", "{", true},
		{"budget", "5,", true},
		{"sections", "[", true},
		{"sections[1]", `{"name": "b"`, true},
		{"sections[1].max_tokens", "-1,", true}, // the first of a repeated key
		{"sections[2]", "", false},
		{"encoding", "", false},
	} {
		off, ok := offs[tt.path]
		if ok != tt.ok || ok && !strings.HasPrefix(in[off:], tt.want) {
			t.Errorf("Offsets()[%q] = %d, %v (%q)", tt.path, off, ok, in[max(off, 0):])
		}
	}
}

// A clean document costs no allocations.
func TestCheckAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	in := []byte(`{"request_id":"a","scope":"global","semantic_weight":0.5,"provenance":{"source_id":"x","uri":"u"},"sections":[{"uri":"a"},{"uri":"b"}],"labels":{"a":"b"}}`)
	if n := testing.AllocsPerRun(100, func() { _ = schema.Check(in) }); n != 0 {
		t.Errorf("Check allocates %v times for a clean document", n)
	}
}

func BenchmarkCheck(b *testing.B) {
	in := []byte(`{"request_id":"reg-ecoa","scope":"global","semantic_weight":1,"provenance":{"source_id":"reg-library"},"labels":{"a":"b"}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		_ = schema.Check(in)
	}
}
