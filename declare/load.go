package declare

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/contextasm/contextasm/internal/strictjson"
)

// LoadFile reads a JSONL file of declarations with the default limits. It
// returns every declaration, or a *ValidationError listing every problem of
// the file and no declarations at all.
func LoadFile(name string) ([]Declaration, error) { return Config{}.LoadFile(name) }

// LoadFile reads a JSONL file of declarations under c's limits.
func (c Config) LoadFile(name string) ([]Declaration, error) { return c.LoadFiles(name) }

// Load reads JSONL declarations from r; name is used in problems.
func Load(r io.Reader, name string) ([]Declaration, error) { return Config{}.Load(r, name) }

// Load reads JSONL declarations from r under c's limits; name is used in
// problems. It loads everything or nothing. The file is taken as a whole
// set: a tool result must answer a call declared in it (use LoadFiles for
// calls and results spread over several files). It reads r as a stream
// and stops at the first declaration past MaxBlocks, so memory stays
// bounded whatever r holds.
func (c Config) Load(r io.Reader, name string) ([]Declaration, error) {
	l := c.newLoader()
	if err := l.read(r, name); err != nil {
		return nil, err
	}
	return l.result()
}

// loader loads one set of declarations, from one or more files.
type loader struct {
	c       Config
	decls   []Declaration
	at      []place // where each of decls is
	probs   []Problem
	firstAt map[string]place // where each request_id was first declared
	files   []string         // the files read, for place.file
	count   int              // declaration lines read, valid or not
	full    bool             // more than MaxBlocks: reading stopped
	buf     []byte           // the current line, reused

	// emit, when set, is handed decls a batch at a time while no problem
	// has been found, and the loader keeps none of them (StreamFiles).
	emit       func([]Declaration) error
	batch      int
	batchBytes int   // content bytes of decls
	stop       error // ends reading: ErrReferences, or emit's error
}

// place is a line of one of the loader's files; small, since a loader
// holds one a declaration.
type place struct {
	file, line int32
}

func (c Config) newLoader() *loader {
	return &loader{c: c, firstAt: make(map[string]place)}
}

// result returns the declarations, or the problems, with those of the
// tool calls of the whole set.
func (l *loader) result() ([]Declaration, error) {
	files, lines := make([]string, len(l.at)), make([]int, len(l.at))
	for i, p := range l.at {
		files[i], lines[i] = l.files[p.file], int(p.line)
	}
	l.probs = checkCalls(l.probs, l.decls, files, lines)
	l.probs = checkLinks(l.probs, l.decls, files, lines)
	if len(l.probs) > 0 {
		return nil, &ValidationError{Problems: l.probs}
	}
	return l.decls, nil
}

// read loads the declarations of one file into l. Only an error reading r
// is returned; problems of the file go to l.probs.
func (l *loader) read(r io.Reader, name string) error {
	l.files = append(l.files, name)
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(4); len(head) > 0 {
		skip, foreign := strictjson.Text(head)
		if foreign != "" {
			l.probs = append(l.probs, Problem{File: name, Line: 1,
				Message: "the file is " + foreign + "; declarations must be UTF-8 (with or without a byte-order mark)"})
			return nil
		}
		_, _ = br.Discard(skip)
	}
	maxLine := l.c.maxLine()
	for lineNo := 1; ; lineNo++ {
		line, long, err := readLine(br, maxLine, l.buf[:0])
		l.buf = line[:0]
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("declare: reading %s: %w", name, err)
		}
		eof := errors.Is(err, io.EOF)
		if long != nil {
			l.probs = append(l.probs, Problem{File: name, Line: lineNo, RequestID: long.requestID(),
				Message: fmt.Sprintf("line is %d bytes, more than a declaration can take (%d): content is limited to %d bytes (Config.MaxContentBytes)",
					long.n, maxLine, l.c.maxContent())})
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) > 0 && trimmed[0] != '#' || long != nil {
			if l.count++; l.count > l.c.maxBlocks() {
				l.probs = append(l.probs, Problem{File: name, Line: lineNo,
					Message: fmt.Sprintf("more than %d declarations, the limit (Config.MaxBlocks); reading stops here", l.c.maxBlocks())})
				l.full = true
				return nil
			}
		}
		if len(trimmed) > 0 && trimmed[0] != '#' {
			l.parse(trimmed, name, lineNo)
		}
		if eof || l.stop != nil {
			return nil
		}
	}
}

// parse loads one declaration line.
func (l *loader) parse(line []byte, name string, lineNo int) {
	start := len(l.probs)
	var d Declaration
	l.probs = l.c.parseLine(line, &d, l.probs)
	// A line with problems still claims its request_id (when it has a
	// valid one), so a duplicate is reported whichever copy is also
	// broken, not only after the other problems are fixed.
	id, ok := d.RequestID, len(l.probs) == start
	if !ok {
		id = l.probs[start].RequestID
	}
	here := place{int32(len(l.files) - 1), int32(lineNo)}
	if first, dup := l.firstAt[id]; dup {
		msg := fmt.Sprintf("duplicate request_id (first declared on line %d)", first.line)
		if int(first.file) != len(l.files)-1 {
			msg = fmt.Sprintf("also declared in %s:%d", l.files[first.file], first.line)
		}
		l.probs = append(l.probs, Problem{RequestID: id, Field: "request_id", Message: msg})
	} else if id != "" {
		l.firstAt[id] = here
	}
	if ok && len(l.probs) == start {
		l.decls, l.at = append(l.decls, d), append(l.at, here)
		if l.emit != nil {
			l.emitted(&d)
		}
	}
	for i := start; i < len(l.probs); i++ {
		l.probs[i].File, l.probs[i].Line = name, lineNo
	}
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
	// encoding/json also matches keys without regard to case and keeps
	// the last of a repeated key, so the keys are checked strictly too:
	// "SCOPE" must not override "scope".
	if err := json.Unmarshal(line, d); err != nil || len(declSchema.Check(line)) > 0 {
		// The fast path stops at the first error; find them all.
		start := len(dst)
		dst = c.diagnose(line, dst)
		if len(dst) == start {
			// Cannot happen while diagnose sees what Unmarshal saw; but
			// d is then half decoded: never accept it.
			dst = append(dst, Problem{RequestID: sniffRequestID(line), Message: decodeMessage(err)})
		}
		return dst
	}
	// One copy of each memory type and scope for all the blocks, not one
	// a block: a million-block file keeps two strings fewer a block.
	d.MemoryType, d.Scope = MemoryType(intern(string(d.MemoryType))), Scope(intern(string(d.Scope)))
	return c.problems(d, dst)
}

// intern returns the constant equal to s, for the memory types and scopes.
func intern(s string) string {
	for _, c := range [...]string{string(Constraint), string(Context), string(History), string(External),
		string(ScopeSession), string(ScopeUser), string(ScopeGlobal)} {
		if c == s {
			return c
		}
	}
	return s
}

// trailing reports whether anything but white space follows the value dec
// has just decoded from line. (Decoder.More is not enough: it reports
// false for a stray '}' or ']'.)
func trailing(dec *json.Decoder, line []byte) bool {
	return len(bytes.TrimSpace(line[dec.InputOffset():])) > 0
}

// declSchema is the shape of a declaration's JSON, for strict key checks.
var declSchema = strictjson.For(reflect.TypeFor[Declaration]())

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
	// Keys first: repeated, case variants and unknown ones, each with its
	// path. A field with a bad key is not decoded again below.
	bad := make(map[string]bool)
	for _, p := range declSchema.Check(line) {
		dst = append(dst, Problem{RequestID: id, Field: p.Path, Message: p.Message()})
		bad[topField(p.Path)] = true
		if p.Suggest != "" && !strings.Contains(p.Path, ".") {
			// "scope is required" would only repeat "SCOPE: did you
			// mean scope?".
			bad[topField(p.Suggest)] = true
		}
	}
	good := make(map[string]json.RawMessage, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if bad[k] {
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
		if !bad[topField(p.Field)] {
			dst = append(dst, p)
		}
	}
	return dst
}

// topField returns the top-level field of a path: "provenance" of
// "provenance.uri", "audience" of "audience[1]".
func topField(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}

func decodeMessage(err error) string { return strictjson.DecodeMessage(err) }

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

// readLine returns the next line without its end-of-line bytes, appended
// to buf, and io.EOF with the last line when the input ends. A line longer
// than max bytes (end-of-line not counted) is read to its end but not kept:
// it returns a longLine with the line's length and its first and last
// bytes, and no line, so the next call starts on the next line.
func readLine(br *bufio.Reader, max int, buf []byte) (line []byte, long *longLine, err error) {
	line = buf
	for {
		chunk, rerr := br.ReadSlice('\n')
		// Keep at most max bytes plus a "\r\n"; past that, only consume.
		if long == nil && len(line)+len(chunk) > max+2 {
			long = &longLine{n: len(line)}
			long.add(line)
			line = buf[:0]
		}
		if long != nil {
			long.add(chunk)
			long.n += len(chunk)
		} else {
			line = append(line, chunk...)
		}
		if rerr == bufio.ErrBufferFull {
			continue
		}
		if long != nil {
			long.end()
			return line, long, rerr
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > max {
			long = &longLine{n: len(line)}
			long.add(line)
			long.end()
			return line[:0], long, rerr
		}
		return line, nil, rerr
	}
}

// longLine is what is kept of a line too long to load: its length and its
// first and last few KiB, to name its request_id in the problem.
type longLine struct {
	n          int
	head, tail []byte
}

const longKeep = 4 << 10

func (l *longLine) add(b []byte) {
	if k := min(len(b), longKeep-len(l.head)); k > 0 {
		l.head = append(l.head, b[:k]...)
	}
	l.tail = append(l.tail, b...)
	if len(l.tail) > 2*longKeep {
		l.tail = append(l.tail[:0], l.tail[len(l.tail)-longKeep:]...)
	}
}

// end drops the end-of-line bytes from the count.
func (l *longLine) end() {
	for _, eol := range []string{"\n", "\r"} {
		if bytes.HasSuffix(l.tail, []byte(eol)) {
			l.tail = l.tail[:len(l.tail)-1]
			l.n--
		}
	}
}

// requestIDKey finds a request_id member in a fragment of a JSON object:
// the key must follow '{' or ',', which inside a JSON string can only be
// followed by an escaped quote, so a match is never content.
var requestIDKey = regexp.MustCompile(`[{,]\s*"request_id"\s*:\s*("(?:[^"\\]|\\.){1,1000}")`)

// requestID returns the line's request_id when its first or last bytes
// show it, else "".
func (l *longLine) requestID() string {
	for _, part := range [][]byte{l.head, l.tail} {
		m := requestIDKey.FindSubmatch(part)
		if m == nil {
			continue
		}
		var id string
		if json.Unmarshal(m[1], &id) == nil && validRequestID(id) {
			return id
		}
	}
	return ""
}
