package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/contextasm/contextasm/internal/strictjson"
)

// Schemas of the request bodies, for the keys encoding/json lets through
// (a key twice, in another case, or unknown): built once.
var (
	assembleSchema = strictjson.For(reflect.TypeFor[assembleRequest]())
	feedbackSchema = strictjson.For(reflect.TypeFor[feedbackRequest]())
	countSchema    = strictjson.For(reflect.TypeFor[countRequest]())
)

// readBody reads a request's body, at most limit bytes: past it the
// request is refused whole (413), never read on.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, newError(http.StatusRequestEntityTooLarge, codeTooLarge, "", "the body is larger than %d bytes, the limit (--max-body)", limit)
		}
		return nil, badRequest(codeMalformedJSON, "", "reading the body: %v", err)
	}
	return body, nil
}

// decodeBody reads a call's body and decodes it strictly into v.
func (s *Server) decodeBody(c *call, schema *strictjson.Schema, v any) *apiError {
	body, aerr := readBody(c.w, c.r, s.cfg.MaxBodyBytes)
	if aerr != nil {
		return aerr
	}
	return decodeStrict(body, schema, v)
}

// decodeStrict decodes one JSON object into v: valid UTF-8, exact keys
// (schema), the right types, nothing after it. The error names the
// field.
func decodeStrict(body []byte, schema *strictjson.Schema, v any) *apiError {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(body) {
		return badRequest(codeMalformedJSON, "", "the body is not valid UTF-8")
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return badRequest(codeMalformedJSON, "", "the body is empty: want a JSON object")
	}
	if trimmed[0] != '{' {
		return badRequest(codeWrongType, "", "the body must be a JSON object")
	}
	if err := syntaxCheck(trimmed); err != nil {
		return err
	}
	if probs := schema.Check(trimmed); len(probs) > 0 {
		p := probs[0]
		return badRequest(codeUnknownField, p.Path, "%s: %s", p.Path, p.Message())
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			return badRequest(codeWrongType, field, "%s: %s", field, strictjson.DecodeMessage(err))
		}
		return badRequest(codeMalformedJSON, "", "%s", strictjson.DecodeMessage(err))
	}
	return nil
}

// syntaxCheck refuses text that is not one JSON value, saying where.
func syntaxCheck(data []byte) *apiError {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return badRequest(codeMalformedJSON, "", "invalid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(err.Error(), "json: "))
		}
		return badRequest(codeMalformedJSON, "", "invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return badRequest(codeMalformedJSON, "", "invalid JSON: text after the object at byte %d", dec.InputOffset())
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest(codeMalformedJSON, "", "invalid JSON: text after the object at byte %d", dec.InputOffset())
	}
	return nil
}
