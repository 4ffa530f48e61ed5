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
// problems. It loads everything or nothing. The file is taken as a whole
// set: a tool result must answer a call declared in it (use LoadFiles for
// calls and results spread over several files).
func (c Config) Load(r io.Reader, name string) ([]Declaration, error) {
	decls, lines, probs, err := c.load(r, name)
	if err != nil {
		return nil, err
	}
	probs = checkCalls(probs, decls, repeat(name, len(decls)), lines)
	if len(probs) > 0 {
		return nil, &ValidationError{Problems: probs}
	}
	return decls, nil
}

// load reads JSONL declarations from r, returning those without problems,
// the line of each, and every problem.
func (c Config) load(r io.Reader, name string) (decls []Declaration, lines []int, probs []Problem, err error) {
	var (
		firstSaw = make(map[string]int)
		// A line holds at most the content limit, JSON-escaped (\uXXXX is
		// six bytes a byte at worst), plus the other fields.
		maxLine = 6*c.maxContent() + 64<<10
	)
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, tooLong, err := readLine(br, maxLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, nil, fmt.Errorf("declare: reading %s: %w", name, err)
		}
		if tooLong {
			probs = append(probs, Problem{File: name, Line: lineNo, Message: fmt.Sprintf("line is longer than %d bytes", maxLine)})
		}
		eof := errors.Is(err, io.EOF)
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) > 0 && trimmed[0] != '#' {
			start := len(probs)
			var d Declaration
			probs = c.parseLine(trimmed, &d, probs)
			// A line with problems still claims its request_id (when it has
			// a valid one), so a duplicate is reported whichever copy is
			// also broken, not only after the other problems are fixed.
			id, ok := d.RequestID, len(probs) == start
			if !ok {
				id = probs[start].RequestID
			}
			if first, dup := firstSaw[id]; dup {
				probs = append(probs, Problem{RequestID: id, Field: "request_id",
					Message: fmt.Sprintf("duplicate request_id (first declared on line %d)", first)})
			} else if id != "" {
				firstSaw[id] = lineNo
			}
			if ok && len(probs) == start {
				decls, lines = append(decls, d), append(lines, lineNo)
			}
			for i := start; i < len(probs); i++ {
				probs[i].File, probs[i].Line = name, lineNo
			}
		}
		if eof {
			break
		}
	}
	return decls, lines, probs, nil
}

// parseLine decodes and validates one non-blank line into d, appending its
// problems to dst.
func (c Config) parseLine(line []byte, d *Declaration, dst []Problem) []Problem {
	// encoding/json silently replaces invalid UTF-8 with U+FFFD; a block
	// must arrive as written, so check before decoding.
	if !utf8.Valid(line) {
		id := sniffRequestID(line)
		if strings.ContainsRune(id, utf8.RuneError) && !bytes.Contains(line, []byte(id)) {
			id = "" // decoding replaced a bad byte of the id: not the id as written
		}
		return append(dst, Problem{RequestID: id, Message: "line is not valid UTF-8"})
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	err := dec.Decode(d)
	if err == nil && trailing(dec, line) {
		err = errors.New("unexpected text after the JSON object")
	}
	if err != nil {
		// The fast path stops at the first error; find them all.
		start := len(dst)
		dst = c.diagnose(line, dst)
		if len(dst) == start {
			// diagnose decodes field by field with "last key wins", so
			// it can miss what the strict decode saw (a repeated key whose
			// first value is bad). d is then half decoded: never accept it.
			dst = append(dst, Problem{RequestID: sniffRequestID(line), Message: decodeMessage(err)})
		}
		return dst
	}
	return c.problems(d, dst)
}

// trailing reports whether anything but white space follows the value dec
// has just decoded from line. (Decoder.More is not enough: it reports
// false for a stray '}' or ']'.)
func trailing(dec *json.Decoder, line []byte) bool {
	return len(bytes.TrimSpace(line[dec.InputOffset():])) > 0
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
	if trailing(dec, line) {
		return append(dst, Problem{RequestID: id, Message: "unexpected text after the JSON object"})
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
		// Strict like the fast path, so an unknown key inside provenance
		// is reported too.
		pdec := json.NewDecoder(bytes.NewReader(one))
		pdec.DisallowUnknownFields()
		if err := pdec.Decode(&probe); err != nil {
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

// readLine returns the next line without its end-of-line bytes, and
// io.EOF with the last line when the input ends. A line longer than max
// bytes (end-of-line not counted) is read to its end but not kept: it
// returns tooLong and no line, so the next call starts on the next line.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, rerr := br.ReadSlice('\n')
		// Keep at most max bytes plus a "\r\n"; past that, only consume.
		if !tooLong && len(line)+len(chunk) > max+2 {
			tooLong, line = true, nil
		}
		if !tooLong {
			line = append(line, chunk...)
		}
		if rerr == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if tooLong || len(line) > max {
			return nil, true, rerr
		}
		return line, false, rerr
	}
}
