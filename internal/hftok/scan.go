package hftok

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A tokenizer.json is tens of megabytes, nearly all of it the model's
// vocabulary and merges. encoding/json validates the whole input, then
// decodes it through reflection; scanning it once by hand, straight into
// the maps the model keeps, loads a file several times faster. The small
// components (normalizer, pre-tokenizer, added tokens, the model's
// options) are cut out as raw JSON and decoded with encoding/json.

// scanner reads JSON from data.
type scanner struct {
	data []byte
	pos  int
	buf  []byte // scratch for strings with escapes
}

var errSyntax = errors.New("JSON syntax error")

func (s *scanner) fail(what string) error {
	return fmt.Errorf("%w at byte %d: %s", errSyntax, s.pos, what)
}

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return s.fail(fmt.Sprintf("want %q", c))
	}
	s.pos++
	return nil
}

// str reads a string. The result aliases data when it has no escapes, so
// callers that keep it must copy it (a map insert of string(b) does).
func (s *scanner) str() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		if c == '"' {
			out := s.data[start:s.pos]
			if !utf8.Valid(out) {
				return nil, s.fail("invalid UTF-8 in string") // as the library's parser refuses it
			}
			s.pos++
			return out, nil
		}
		if c == '\\' {
			s.buf = append(s.buf[:0], s.data[start:s.pos]...)
			return s.escaped()
		}
		if c < 0x20 {
			return nil, s.fail("control character in string")
		}
		s.pos++
	}
	return nil, s.fail("unterminated string")
}

// escaped finishes a string with escapes into s.buf.
func (s *scanner) escaped() ([]byte, error) {
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			if !utf8.Valid(s.buf) {
				return nil, s.fail("invalid UTF-8 in string")
			}
			s.pos++
			return s.buf, nil
		case c < 0x20:
			return nil, s.fail("control character in string")
		case c != '\\':
			s.buf = append(s.buf, c)
			s.pos++
			continue
		}
		if s.pos+1 >= len(s.data) {
			return nil, s.fail("unterminated escape")
		}
		e := s.data[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/':
			s.buf = append(s.buf, e)
		case 'b':
			s.buf = append(s.buf, '\b')
		case 'f':
			s.buf = append(s.buf, '\f')
		case 'n':
			s.buf = append(s.buf, '\n')
		case 'r':
			s.buf = append(s.buf, '\r')
		case 't':
			s.buf = append(s.buf, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, s.fail(`bad \u escape`)
			}
			if utf16.IsSurrogate(r) {
				// A pair makes one character; a lone half is U+FFFD, as
				// encoding/json decodes it.
				if s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
					save := s.pos
					s.pos += 2
					if r2, ok := s.hex4(); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							s.buf = utf8.AppendRune(s.buf, d)
							continue
						}
					}
					s.pos = save
				}
				r = utf8.RuneError
			}
			s.buf = utf8.AppendRune(s.buf, r)
		default:
			return nil, s.fail(fmt.Sprintf(`bad escape \%c`, e))
		}
	}
	return nil, s.fail("unterminated string")
}

func (s *scanner) hex4() (rune, bool) {
	if s.pos+4 > len(s.data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s.data[s.pos:s.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	s.pos += 4
	return rune(n), true
}

// integer reads a non-negative integer.
func (s *scanner) integer() (int, error) {
	s.ws()
	start := s.pos
	n := 0
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		n = n*10 + int(s.data[s.pos]-'0')
		if n > maxID {
			return 0, s.fail("integer out of range")
		}
		s.pos++
	}
	if s.pos == start {
		return 0, s.fail("want a non-negative integer")
	}
	return n, nil
}

// skip passes one value and returns its raw bytes.
func (s *scanner) skip() (json.RawMessage, error) {
	c := s.peek()
	start := s.pos
	switch c {
	case '"':
		if _, err := s.str(); err != nil {
			return nil, err
		}
	case '{', '[':
		close := byte('}')
		if c == '[' {
			close = ']'
		}
		s.pos++
		if s.peek() == close {
			s.pos++
			break
		}
		for {
			if c == '{' {
				if _, err := s.str(); err != nil {
					return nil, err
				}
				if err := s.expect(':'); err != nil {
					return nil, err
				}
			}
			if _, err := s.skip(); err != nil {
				return nil, err
			}
			switch s.peek() {
			case ',':
				s.pos++
				continue
			case close:
				s.pos++
			default:
				return nil, s.fail(fmt.Sprintf("want ',' or %q", close))
			}
			break
		}
	default:
		// A number or a literal: up to the next delimiter.
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
			default:
				s.pos++
				continue
			}
			break
		}
		if s.pos == start {
			return nil, s.fail("want a value")
		}
	}
	return json.RawMessage(s.data[start:s.pos]), nil
}

// object calls fn with each key of an object, the scanner at its value;
// fn must consume the value.
func (s *scanner) object(fn func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.fail("want ',' or '}'")
		}
	}
}

// array calls fn at each element of an array; fn must consume it.
func (s *scanner) array(fn func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for {
		if err := fn(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.fail("want ',' or ']'")
		}
	}
}

// scanned is a tokenizer.json split into its parts: the small components
// raw, the vocabulary and merges decoded.
type scanned struct {
	addedTokens, normalizer, preTokenizer json.RawMessage
	model                                 json.RawMessage // without vocab and merges
	hasModel                              bool
	vocab                                 map[string]int32
	merges                                [][2]string
}

// scanFile scans a whole tokenizer.json.
func scanFile(data []byte) (*scanned, error) {
	s := &scanner{data: data}
	out := &scanned{}
	err := s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "added_tokens":
			out.addedTokens, err = s.skip()
		case "normalizer":
			out.normalizer, err = s.skip()
		case "pre_tokenizer":
			out.preTokenizer, err = s.skip()
		case "model":
			out.hasModel = true
			err = s.model(out)
		default:
			_, err = s.skip()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if s.peek() != 0 {
		return nil, s.fail("data after the object")
	}
	return out, nil
}

// model scans the model object: vocab and merges into out, the rest into
// out.model as a JSON object.
func (s *scanner) model(out *scanned) error {
	if s.peek() != '{' {
		raw, err := s.skip()
		out.model = raw
		return err
	}
	rest := []byte{'{'}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "vocab":
			if s.peek() != '{' {
				break // Unigram's is an array: the model's type refuses it
			}
			out.vocab = make(map[string]int32, 1<<17)
			return s.object(func(tok []byte) error {
				id, err := s.integer()
				out.vocab[string(tok)] = int32(id)
				return err
			})
		case "merges":
			if s.peek() == 'n' {
				_, err := s.skip() // null
				return err
			}
			out.merges = make([][2]string, 0, 1<<17)
			return s.array(func() error {
				if s.peek() == '[' {
					var pair [2]string
					n := 0
					err := s.array(func() error {
						b, err := s.str()
						if n < 2 {
							pair[n] = string(b)
						}
						n++
						return err
					})
					if err == nil && n != 2 {
						err = s.fail(fmt.Sprintf("model.merges[%d]: want two tokens, got %d", len(out.merges), n))
					}
					out.merges = append(out.merges, pair)
					return err
				}
				b, err := s.str()
				if err != nil {
					return err
				}
				a, c, ok := cutSpace(b)
				if !ok {
					return s.fail(fmt.Sprintf("model.merges[%d]: merge %q has no space", len(out.merges), b))
				}
				out.merges = append(out.merges, [2]string{a, c})
				return nil
			})
		}
		raw, err := s.skip()
		if err != nil {
			return err
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		quoted, err := json.Marshal(string(key))
		if err != nil {
			return err
		}
		rest = append(rest, quoted...)
		rest = append(rest, ':')
		rest = append(rest, raw...)
		return nil
	})
	out.model = append(rest, '}')
	return err
}

func cutSpace(b []byte) (string, string, bool) {
	for i, c := range b {
		if c == ' ' {
			return string(b[:i]), string(b[i+1:]), true
		}
	}
	return "", "", false
}
