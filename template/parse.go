package template

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/contextasm/contextasm/internal/strictjson"
)

// MaxFileBytes is the largest template file LoadFile reads: a template is
// a few sections, and a larger file is a mistake, not a template.
const MaxFileBytes = 1 << 20

// readFile reads a template file of at most MaxFileBytes, without reading
// more of a larger one.
func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	if len(data) > MaxFileBytes {
		return nil, &ValidationError{Problems: []Problem{{File: name,
			Message: fmt.Sprintf("the file is larger than %d bytes, the most a template may be (template.MaxFileBytes)", MaxFileBytes)}}}
	}
	return data, nil
}

// tplSchema is the shape of a template's JSON, for strict key checks.
var tplSchema = strictjson.For(reflect.TypeFor[Definition]())

// parse reads a template's JSON and reports every problem at once, as the
// declaration loader does: keys given twice, in another case or unknown;
// values of the wrong type; and every rule compile checks for the fields
// that did decode. Each problem names the field's path and, where the field
// is in the file, its line.
func parse(data []byte, name string, confined bool) (*Template, error) {
	fail := func(p Problem) (*Template, error) {
		p.File = name
		return nil, &ValidationError{Problems: []Problem{p}}
	}
	skip, foreign := strictjson.Text(data)
	if foreign != "" {
		return fail(Problem{Line: 1, Message: "the file is " + foreign + "; templates must be UTF-8 (with or without a byte-order mark)"})
	}
	data = data[skip:] // a UTF-8 byte-order mark: its removal moves no line
	if !utf8.Valid(data) {
		// encoding/json would replace the bad bytes and carry on.
		bad := 0
		for bad < len(data) {
			r, size := utf8.DecodeRune(data[bad:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			bad += size
		}
		return fail(Problem{Line: lineOf(data, int64(bad)), Message: fmt.Sprintf("invalid UTF-8 at byte %d", bad+skip)})
	}
	var raw json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return fail(syntaxProblem(err, data))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail(Problem{Message: "unexpected data after the template object"})
	}

	var probs []Problem
	bad := make(map[string]bool) // paths not to report again
	// Made at the first problem placed: a file with many problems is
	// scanned once, not once a problem.
	var (
		offsets map[string]int
		lines   []int // offsets of the newlines
	)
	lineAt := func(off int) int {
		if lines == nil {
			lines = []int{}
			for i, c := range data {
				if c == '\n' {
					lines = append(lines, i)
				}
			}
		}
		n, _ := slices.BinarySearch(lines, off)
		return n + 1
	}
	at := func(path string) int {
		if offsets == nil {
			offsets = strictjson.Offsets(data)
		}
		// A field absent from the file is placed at its nearest parent.
		for {
			if off, ok := offsets[path]; ok || path == "" {
				return lineAt(off)
			}
			path = path[:max(strings.LastIndexAny(path, ".["), 0)]
		}
	}
	add := func(path, msg string) {
		probs = append(probs, Problem{File: name, Line: at(path), Field: path, Message: msg})
		bad[path] = true
	}
	for _, p := range tplSchema.Check(data) {
		probs = append(probs, Problem{File: name, Line: lineAt(p.Offset), Field: p.Path, Message: p.Message()})
		bad[p.Path] = true
		if p.Suggest != "" {
			// "budget is missing" would only repeat "Budget: did you
			// mean budget?".
			parent := strings.TrimSuffix(p.Path[:len(p.Path)-len(p.Key)], ".")
			bad[strings.TrimPrefix(parent+"."+p.Suggest, ".")] = true
		}
	}
	def, ok := decodeDefinition(data, bad, add)
	if !ok {
		return nil, &ValidationError{Problems: probs}
	}
	t, err := compile(def, name, confined)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		if len(probs) > 0 {
			return nil, &ValidationError{Problems: probs}
		}
		return t, err
	}
	for _, p := range ve.Problems {
		if under(bad, p.Field) {
			continue // a consequence of a field already reported
		}
		p.Line = at(p.Field)
		probs = append(probs, p)
	}
	return nil, &ValidationError{Problems: probs}
}

// under reports whether path, or one of its parents, is in bad.
func under(bad map[string]bool, path string) bool {
	for {
		if bad[path] {
			return true
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return false
		}
		path = path[:i]
	}
}

// decodeDefinition decodes a template field by field, so that one field of
// the wrong type hides no other problem, skipping the paths in bad and
// reporting each field that does not decode through add. ok is false when
// the document is not an object at all.
func decodeDefinition(data []byte, bad map[string]bool, add func(path, msg string)) (def Definition, ok bool) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		add("", strictjson.DecodeMessage(err))
		return def, false
	}
	decodeFields(top, "", bad, add, &def)
	if s, ok := top["sections"]; ok && !bad["sections"] {
		var list []json.RawMessage
		if err := json.Unmarshal(s, &list); err != nil {
			add("sections", strictjson.DecodeMessage(err))
			return def, true
		}
		def.Sections = make([]SectionDefinition, len(list))
		for i, raw := range list {
			path := fmt.Sprintf("sections[%d]", i)
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(raw, &fields); err != nil {
				add(path, strictjson.DecodeMessage(err))
				continue
			}
			decodeFields(fields, path+".", bad, add, &def.Sections[i])
		}
	}
	return def, true
}

// decodeFields decodes each of fields (but "sections") into dst on its own,
// reporting those that do not decode.
func decodeFields[T any](fields map[string]json.RawMessage, prefix string, bad map[string]bool, add func(path, msg string), dst *T) {
	good := make(map[string]json.RawMessage, len(fields))
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if bad[prefix+k] || (prefix == "" && k == "sections") {
			continue
		}
		one, _ := json.Marshal(map[string]json.RawMessage{k: fields[k]})
		var probe T
		if err := json.Unmarshal(one, &probe); err != nil {
			add(prefix+k, strictjson.DecodeMessage(err))
			continue
		}
		good[k] = fields[k]
	}
	all, _ := json.Marshal(good)
	_ = json.Unmarshal(all, dst) // each field decoded alone above
}

// syntaxProblem describes a document encoding/json cannot read.
func syntaxProblem(err error, data []byte) Problem {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return Problem{Line: lineOf(data, syn.Offset), Message: "invalid JSON: " + syn.Error()}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return Problem{Message: "invalid JSON: the template is incomplete"}
	}
	return Problem{Message: "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
}

func lineOf(data []byte, offset int64) int {
	offset = min(max(offset, 0), int64(len(data)))
	return 1 + bytes.Count(data[:offset], []byte("\n"))
}
