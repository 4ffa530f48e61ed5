package server

// The OpenAPI document (docs/openapi.json) is the source of truth for the
// clients. These tests hold the server to it: every response any test of
// this package receives is validated against the schema the document gives
// its path, method and status (checked, wrapped around every test
// server's handler), and the document's schemas name exactly the JSON
// fields of the Go types the server encodes.
//
// The validator covers the subset of JSON Schema the document uses: $ref,
// type (a name or a list), properties, required, additionalProperties
// (false or a schema), items, enum, oneOf, minimum, maximum and format
// date-time. A keyword it does not know fails the test, so the document
// cannot grow past what is checked.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/outcome"
)

const openapiPath = "../../docs/openapi.json"

type openapiDoc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]map[string]any `json:"schemas"`
	} `json:"components"`
	routes []docRoute
}

type docRoute struct {
	template string
	re       *regexp.Regexp
}

var (
	specOnce sync.Once
	spec     *openapiDoc
	specErr  error
)

// loadSpec reads the document once.
func loadSpec(t testing.TB) *openapiDoc {
	t.Helper()
	specOnce.Do(func() {
		b, err := os.ReadFile(openapiPath)
		if err != nil {
			specErr = err
			return
		}
		var d openapiDoc
		if err := json.Unmarshal(b, &d); err != nil {
			specErr = fmt.Errorf("%s: %v", openapiPath, err)
			return
		}
		for p := range d.Paths {
			re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[a-z_]+\\\}`).ReplaceAllString(regexp.QuoteMeta(p), `[^?]+`) + "$")
			d.routes = append(d.routes, docRoute{template: p, re: re})
		}
		sort.Slice(d.routes, func(i, j int) bool { return len(d.routes[i].template) > len(d.routes[j].template) })
		spec = &d
	})
	if specErr != nil {
		t.Fatal(specErr)
	}
	return spec
}

// operation is the part of an operation the checks read.
type operation struct {
	Responses map[string]struct {
		Content map[string]struct {
			Schema map[string]any `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

// checkResponse validates one response against the document. path is the
// request's escaped path.
func (d *openapiDoc) checkResponse(method, path string, status int, contentType string, body []byte) error {
	var op *operation
	for _, r := range d.routes {
		if !r.re.MatchString(path) {
			continue
		}
		raw, ok := d.Paths[r.template][strings.ToLower(method)]
		if !ok {
			break // a method the path does not take: the generic error below
		}
		op = new(operation)
		if err := json.Unmarshal(raw, op); err != nil {
			return err
		}
		break
	}
	var schema map[string]any
	if op == nil {
		// An unknown route or method: the JSON error body.
		if status < 400 {
			return fmt.Errorf("%s %s answered %d but the document has no such operation", method, path, status)
		}
		schema = map[string]any{"$ref": "#/components/schemas/Error"}
	} else {
		resp, ok := op.Responses[strconv.Itoa(status)]
		if !ok {
			if resp, ok = op.Responses["default"]; !ok || status < 400 {
				return fmt.Errorf("%s %s answered %d, which the document does not list", method, path, status)
			}
		}
		mt := strings.TrimSpace(strings.Split(contentType, ";")[0])
		c, ok := resp.Content[mt]
		if !ok {
			return fmt.Errorf("%s %s answered %d as %q, which the document does not list", method, path, status, mt)
		}
		if mt != "application/json" {
			return nil
		}
		schema = c.Schema
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("%s %s answered %d with invalid JSON: %v\n%s", method, path, status, err, body)
	}
	if probs := d.validate(schema, v, "$"); len(probs) > 0 {
		return fmt.Errorf("%s %s answered %d with a body the document does not allow:\n  %s\n%s", method, path, status, strings.Join(probs, "\n  "), body)
	}
	return nil
}

// validate returns every way v breaks schema.
func (d *openapiDoc) validate(schema map[string]any, v any, at string) []string {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, at+": "+fmt.Sprintf(format, args...)) }
	for k, rule := range schema {
		switch k {
		case "$ref":
			name := strings.TrimPrefix(rule.(string), "#/components/schemas/")
			s, ok := d.Components.Schemas[name]
			if !ok {
				bad("unknown schema %q", name)
				continue
			}
			probs = append(probs, d.validate(s, v, at)...)
		case "type":
			var types []string
			switch r := rule.(type) {
			case string:
				types = []string{r}
			case []any:
				for _, t := range r {
					types = append(types, t.(string))
				}
			}
			if !slices.Contains(types, jsonType(v)) && !(jsonType(v) == "integer" && slices.Contains(types, "number")) {
				bad("want %s, got %s", strings.Join(types, " or "), jsonType(v))
			}
		case "properties":
			obj, ok := v.(map[string]any)
			if !ok {
				continue
			}
			props := rule.(map[string]any)
			for name, val := range obj {
				if p, ok := props[name]; ok {
					probs = append(probs, d.validate(p.(map[string]any), val, at+"."+name)...)
				}
			}
		case "required":
			obj, ok := v.(map[string]any)
			if !ok {
				continue
			}
			for _, name := range rule.([]any) {
				if _, ok := obj[name.(string)]; !ok {
					bad("missing the required field %q", name)
				}
			}
		case "additionalProperties":
			obj, ok := v.(map[string]any)
			if !ok {
				continue
			}
			props, _ := schema["properties"].(map[string]any)
			for name, val := range obj {
				if _, known := props[name]; known {
					continue
				}
				switch r := rule.(type) {
				case bool:
					if !r {
						bad("the field %q is not in the document", name)
					}
				case map[string]any:
					probs = append(probs, d.validate(r, val, at+"."+name)...)
				}
			}
		case "items":
			if arr, ok := v.([]any); ok {
				for i, e := range arr {
					probs = append(probs, d.validate(rule.(map[string]any), e, fmt.Sprintf("%s[%d]", at, i))...)
				}
			}
		case "enum":
			if !slices.ContainsFunc(rule.([]any), func(e any) bool { return reflect.DeepEqual(e, v) }) {
				bad("%v is not one of %v", v, rule)
			}
		case "oneOf":
			n := 0
			for _, alt := range rule.([]any) {
				if len(d.validate(alt.(map[string]any), v, at)) == 0 {
					n++
				}
			}
			if n != 1 {
				bad("matches %d of the oneOf alternatives, want 1", n)
			}
		case "minimum", "maximum":
			num, ok := v.(json.Number)
			if !ok {
				continue
			}
			x, _ := num.Float64()
			lim := rule.(float64)
			if k == "minimum" && x < lim || k == "maximum" && x > lim {
				bad("%v is outside its %s %v", x, k, lim)
			}
		case "format":
			if s, ok := v.(string); ok && rule == "date-time" {
				if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
					bad("%q is not a date-time", s)
				}
			}
		case "description", "default":
		default:
			bad("the validator does not know the keyword %q: teach it before the document uses it", k)
		}
	}
	return probs
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && !strings.ContainsAny(string(x), ".eE") {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// checked validates every response h sends against the document.
func checked(t testing.TB, h http.Handler) http.Handler {
	d := loadSpec(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		if strings.HasPrefix(r.URL.Path, "/mcp") {
			return // the Model Context Protocol's own, not this document's
		}
		if err := d.checkResponse(r.Method, r.URL.EscapedPath(), rec.status, rec.Header().Get("Content-Type"), rec.body.Bytes()); err != nil {
			t.Errorf("OpenAPI: %v", err)
		}
	})
}

// recorder passes a response on and keeps a copy.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }
func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestSchemasNameTheWireFields holds each schema of the document to the
// Go type the server encodes or decodes: the same JSON field names, no
// more, no fewer.
func TestSchemasNameTheWireFields(t *testing.T) {
	d := loadSpec(t)
	for name, typ := range map[string]reflect.Type{
		"AssembleRequest": reflect.TypeFor[assembleRequest](), "AssembleResponse": reflect.TypeFor[assembleResponse](),
		"KeptBlock": reflect.TypeFor[keptBlock](), "FeedbackRequest": reflect.TypeFor[feedbackRequest](),
		"Citation": reflect.TypeFor[citation](), "Usage": reflect.TypeFor[usageField](),
		"FeedbackResponse": reflect.TypeFor[feedbackResponse](), "CountRequest": reflect.TypeFor[countRequest](),
		"CountResponse": reflect.TypeFor[countResponse](), "DeclareResponse": reflect.TypeFor[declareResponse](),
		"ForgetResponse": reflect.TypeFor[forgetResponse](), "EndResponse": reflect.TypeFor[endResponse](),
		"AssemblyResponse": reflect.TypeFor[assemblyResponse](), "Status": reflect.TypeFor[statusResponse](),
		"ErrorBody": reflect.TypeFor[errorBody](), "Problem": reflect.TypeFor[problem](),
		"RequiredMiss": reflect.TypeFor[requiredMiss](), "Dump": reflect.TypeFor[contextasm.Dump](),
		"Query":         reflect.TypeFor[outcome.Query](),
		"SectionResult": reflect.TypeFor[outcome.SectionResult](), "BlockResult": reflect.TypeFor[outcome.BlockResult](),
		"Event": reflect.TypeFor[outcome.Event](), "Prefix": reflect.TypeFor[outcome.Prefix](),
		"Breakpoint": reflect.TypeFor[outcome.Breakpoint](), "SummarizeCandidate": reflect.TypeFor[outcome.SummarizeCandidate](),
		"Approximation": reflect.TypeFor[outcome.Approximation](), "Ref": reflect.TypeFor[feedback.Ref](),
		"TrustChange": reflect.TypeFor[feedback.TrustChange](), "Violation": reflect.TypeFor[feedback.Violation](),
		"Declaration": reflect.TypeFor[declare.Declaration](), "Provenance": reflect.TypeFor[declare.Provenance](),
		"ToolCall": reflect.TypeFor[chat.ToolCall](),
	} {
		s, ok := d.Components.Schemas[name]
		if !ok {
			t.Errorf("docs/openapi.json has no schema %s (for %v)", name, typ)
			continue
		}
		var doc []string
		for p := range s["properties"].(map[string]any) {
			doc = append(doc, p)
		}
		code := fieldNames(typ)
		slices.Sort(doc)
		slices.Sort(code)
		if !slices.Equal(doc, code) {
			t.Errorf("docs/openapi.json: schema %s has the fields %v; %v has %v: make them the same", name, doc, typ, code)
		}
	}
}

// fieldNames returns the JSON names of a struct's fields, embedded
// structs' included.
func fieldNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			out = append(out, fieldNames(ft)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// TestValidatorRefuses shows the validator is not a rubber stamp: each
// body breaks the document once, and is refused.
func TestValidatorRefuses(t *testing.T) {
	d := loadSpec(t)
	for _, c := range []struct {
		name, method, path string
		status             int
		body               string
	}{
		{"a missing required field", "POST", "/v1/count", 200, `{"encoding":"o200k_base"}`},
		{"an unknown field", "POST", "/v1/count", 200, `{"encoding":"o200k_base","tokens":1,"extra":true}`},
		{"a wrong type", "POST", "/v1/count", 200, `{"encoding":"o200k_base","tokens":"1"}`},
		{"a number where an integer goes", "POST", "/v1/count", 200, `{"encoding":"o200k_base","tokens":1.5}`},
		{"an undocumented status", "POST", "/v1/count", 201, `{"encoding":"o200k_base","tokens":1}`},
		{"an error code not in the enum", "POST", "/v1/count", 400, `{"error":{"code":"oops","message":"m"}}`},
		{"an error without its message", "DELETE", "/v1/declarations/a%2Fb", 404, `{"error":{"code":"not_found"}}`},
		{"a nested object's field", "GET", "/v1/assemblies/x", 200, `{"assembly_id":"x","created":"2026-11-30T09:00:00Z","fed_back":false,"dump":{}}`},
		{"a date that is not one", "GET", "/v1/assemblies/x", 404, `{"error":{"code":"not_found","message":"m","field":3}}`},
		{"a success where there is no operation", "PUT", "/v1/count", 200, `{}`},
	} {
		if err := d.checkResponse(c.method, c.path, c.status, "application/json", []byte(c.body)); err == nil {
			t.Errorf("%s: the validator accepted %s", c.name, c.body)
		}
	}
	if err := d.checkResponse("POST", "/v1/count", 200, "application/json", []byte(`{"encoding":"o200k_base","tokens":1,"counts":[1]}`)); err != nil {
		t.Errorf("the validator refused a valid body: %v", err)
	}
}
