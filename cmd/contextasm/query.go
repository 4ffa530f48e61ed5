package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"unicode/utf8"

	"github.com/contextasm/contextasm/contextasm"
)

// queryFlags say what a request is about (docs/relevance.md): --query,
// --query-file, --no-query, --relevance.
type queryFlags struct {
	query     string
	queryFile string
	noQuery   bool
	relevance string
}

func (f *queryFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.query, "query", "", "what the call is about: blocks relevant to it rank higher (default with --session: the session's newest user turn)")
	fs.StringVar(&f.queryFile, "query-file", "", "read --query from this file (UTF-8)")
	fs.BoolVar(&f.noQuery, "no-query", false, "rank without relevance, whatever the session holds")
	fs.StringVar(&f.relevance, "relevance", "", "a JSON file {\"request_id\": score, ...} of a retriever's scores from 0 to 1, in place of the built-in relevance (a block it leaves out scores 0)")
}

// apply sets req's query from the flags; cmd prefixes the errors.
func (f *queryFlags) apply(req *contextasm.Request, cmd string) error {
	set := 0
	for _, on := range []bool{f.query != "", f.queryFile != "", f.noQuery} {
		if on {
			set++
		}
	}
	if set > 1 {
		return usagef("%s: give one of --query, --query-file and --no-query", cmd)
	}
	req.Query, req.NoQuery = f.query, f.noQuery
	if f.queryFile != "" {
		data, err := os.ReadFile(f.queryFile)
		if err != nil {
			return usagef("%s: --query-file: %v", cmd, err)
		}
		if !utf8.Valid(data) {
			return usagef("%s: --query-file %s: not valid UTF-8", cmd, f.queryFile)
		}
		req.Query = string(data)
	}
	if f.relevance != "" {
		m, err := readRelevance(f.relevance)
		if err != nil {
			return usagef("%s: --relevance %v", cmd, err)
		}
		req.Relevance = m
	}
	return nil
}

// readRelevance reads a JSON object of request_id → score from 0 to 1,
// refusing anything else with the file and the field.
func readRelevance(name string) (map[string]float64, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return parseRelevance(data, name)
}

// parseRelevance parses what readRelevance reads; name names the input in
// errors.
func parseRelevance(data []byte, name string) (map[string]float64, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("%s: want a JSON object of request_id: score (got %s)", name, what(t, err))
	}
	m := map[string]float64{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		id := t.(string) // object keys are strings
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: field %q: %v", name, id, err)
		}
		if _, dup := m[id]; dup {
			return nil, fmt.Errorf("%s: field %q: given twice", name, id)
		}
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%s: field %q: want a number from 0 to 1, got %s", name, id, kindOf(v))
		}
		f, err := n.Float64()
		if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
			return nil, fmt.Errorf("%s: field %q: want a number from 0 to 1, got %s", name, id, n)
		}
		m[id] = f
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: text after the object", name)
	}
	return m, nil
}

// what describes a JSON token for an error.
func what(t json.Token, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case t == nil:
		return "null"
	}
	return fmt.Sprintf("%v", t)
}

// kindOf names a decoded JSON value's kind.
func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%v", v)
}
