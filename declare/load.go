package declare

import (
	"bufio"
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
)

// LoadFile reads a JSONL file of declarations with the default limits. It
// returns every declaration, or a *ValidationError listing every problem of
// the file and no declarations at all.
func LoadFile(name string) ([]Declaration, error) { return Config{}.LoadFile(name) }

// LoadFile reads a JSONL file of declarations under c's limits.
func (c Config) LoadFile(name string) ([]Declaration, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("declare: %w", err)
	}
	defer f.Close()
	return c.Load(f, name)
}

// Load reads JSONL declarations from r; name is used in problems.
func Load(r io.Reader, name string) ([]Declaration, error) { return Config{}.Load(r, name) }

// Load reads JSONL declarations from r under c's limits; name is used in
// problems. It loads everything or nothing.
func (c Config) Load(r io.Reader, name string) ([]Declaration, error) {
	var (
		decls    []Declaration
		probs    []Problem
		firstSaw = make(map[string]int)
		// A line holds at most the content limit, JSON-escaped (\uXXXX is
		// six bytes a byte at worst), plus the other fields.
		maxLine = 6*c.maxContent() + 64<<10
	)
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, err := readLine(br, maxLine)
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, errLineTooLong) {
				probs = append(probs, Problem{File: name, Line: lineNo, Message: fmt.Sprintf("line is longer than %d bytes", maxLine)})
				if err = skipLine(br); err == nil {
					continue
				}
			}
			if !errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("declare: reading %s: %w", name, err)
			}
		}
		eof := errors.Is(err, io.EOF)
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) > 0 && trimmed[0] != '#' {
			start := len(probs)
			var d Declaration
			probs = c.parseLine(trimmed, &d, probs)
			if len(probs) == start {
				if first, dup := firstSaw[d.RequestID]; dup {
					probs = append(probs, Problem{RequestID: d.RequestID, Field: "request_id",
						Message: fmt.Sprintf("duplicate request_id (first declared on line %d)", first)})
				} else {
					firstSaw[d.RequestID] = lineNo
					decls = append(decls, d)
				}
			}
			for i := start; i < len(probs); i++ {
				probs[i].File, probs[i].Line = name, lineNo
			}
		}
		if eof {
			break
		}
	}
	if len(probs) > 0 {
		return nil, &ValidationError{Problems: probs}
	}
	return decls, nil
}

// parseLine decodes and validates one non-blank line into d, appending its
// problems to dst.
func (c Config) parseLine(line []byte, d *Declaration, dst []Problem) []Problem {
	// encoding/json silently replaces invalid UTF-8 with U+FFFD; a block
	// must arrive as written, so check before decoding.
	if !utf8.Valid(line) {
		return append(dst, Problem{RequestID: sniffRequestID(line), Message: "line is not valid UTF-8"})
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(d); err != nil || dec.More() {
		// The fast path stops at the first error; find them all.
		return c.diagnose(line, dst)
	}
	return c.problems(d, dst)
}

// jsonFields is the set of field names a declaration has.
var jsonFields = func() map[string]bool {
	t := reflect.TypeFor[Declaration]()
	m := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = true
	}
	return m
}()

// diagnose decodes a line field by field so that one bad field does not
// hide the problems of the others, and returns all of them.
func (c Config) diagnose(line []byte, dst []Problem) []Problem {
	id := sniffRequestID(line)
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&raw); err != nil {
		msg := err.Error()
		var syntaxErr *json.SyntaxError
		if errors.As(err, &syntaxErr) {
			msg = fmt.Sprintf("invalid JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
		} else if errors.Is(err, io.ErrUnexpectedEOF) {
			msg = "invalid JSON: the object is not closed"
		}
		return append(dst, Problem{RequestID: id, Message: strings.TrimPrefix(msg, "json: ")})
	}
	if dec.More() {
		return append(dst, Problem{RequestID: id, Message: "more than one JSON value on the line"})
	}
	bad := make(map[string]bool)
	good := make(map[string]json.RawMessage, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !jsonFields[k] {
			dst = append(dst, Problem{RequestID: id, Field: k, Message: "unknown field"})
			bad[k] = true
			continue
		}
		one, _ := json.Marshal(map[string]json.RawMessage{k: raw[k]})
		var probe Declaration
		if err := json.Unmarshal(one, &probe); err != nil {
			dst = append(dst, Problem{RequestID: id, Field: k, Message: decodeMessage(err)})
			bad[k] = true
			continue
		}
		good[k] = raw[k]
	}
	var d Declaration
	all, _ := json.Marshal(good)
	if err := json.Unmarshal(all, &d); err != nil {
		return append(dst, Problem{RequestID: id, Message: decodeMessage(err)})
	}
	for _, p := range c.problems(&d, nil) {
		top, _, _ := strings.Cut(p.Field, "[")
		top, _, _ = strings.Cut(top, ".")
		if !bad[top] {
			dst = append(dst, p)
		}
	}
	return dst
}

func decodeMessage(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return fmt.Sprintf("wrong type: want %s, got JSON %s", jsonKind(typeErr.Type), typeErr.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Float64, reflect.Float32, reflect.Int, reflect.Int64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Slice:
		return "array"
	case reflect.Struct:
		return "object"
	}
	return t.String()
}

// sniffRequestID pulls the request_id out of a line that did not decode,
// so the problem can still name it.
func sniffRequestID(line []byte) string {
	var probe struct {
		RequestID string `json:"request_id"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	// Token-level scan: stop at the first request_id string.
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return ""
		}
		if key == "request_id" {
			if err := dec.Decode(&probe.RequestID); err != nil || !validRequestID(probe.RequestID) {
				return ""
			}
			return probe.RequestID
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return ""
		}
	}
	return ""
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its end-of-line bytes. It returns
// io.EOF with the last line when the input ends.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > max {
			return nil, errLineTooLong
		}
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		return buf, err
	}
}

func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			return err
		}
	}
}
