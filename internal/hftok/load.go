package hftok

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/contextasm/contextasm/internal/tokfile"
)

// ErrUnsupported is wrapped by load errors about a component of a
// tokenizer.json that this package does not implement.
var ErrUnsupported = errors.New("hftok: unsupported tokenizer component")

// ErrInvalid is wrapped by load errors about a malformed tokenizer.json.
var ErrInvalid = errors.New("hftok: invalid tokenizer file")

// LoadError is a problem with a tokenizer file: the file, the JSON path of
// the component (e.g. "pre_tokenizer.pretokenizers[1]") and what is wrong.
// It wraps ErrUnsupported or ErrInvalid.
type LoadError struct {
	File    string // the name given to Parse or LoadFile; "" for none
	Field   string // the component's JSON path; "" for the file as a whole
	Message string // what is wrong
	Err     error  // ErrUnsupported or ErrInvalid
}

// Error returns "hftok: file: field: message", leaving out empty parts.
func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString("hftok: ")
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Unwrap returns ErrUnsupported or ErrInvalid.
func (e *LoadError) Unwrap() error { return e.Err }

// LoadFile reads and compiles a tokenizer.json file: a regular file of at
// most tokfile.MaxFileBytes.
func LoadFile(path string) (*Tokenizer, error) {
	data, err := tokfile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("hftok: %w", err)
	}
	return Parse(data, path)
}

type addedJSON struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// component is the common head of every typed component.
type component struct {
	Type string `json:"type"`
}

type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// parser collects the context of errors while compiling.
type parser struct{ name string }

func (p *parser) unsupported(field, format string, args ...any) error {
	return &LoadError{File: p.name, Field: field, Message: fmt.Sprintf(format, args...), Err: ErrUnsupported}
}

func (p *parser) invalid(field, format string, args ...any) error {
	return &LoadError{File: p.name, Field: field, Message: fmt.Sprintf(format, args...), Err: ErrInvalid}
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// Parse compiles the JSON of a tokenizer.json file; name is used in errors.
func Parse(data []byte, name string) (*Tokenizer, error) {
	p := &parser{name: name}
	f, err := scanFile(data)
	if err != nil {
		return nil, p.invalid("", "not a tokenizer.json: %v", err)
	}
	if !f.hasModel || isNull(f.model) {
		return nil, p.invalid("model", "missing")
	}
	var added []addedJSON
	if !isNull(f.addedTokens) {
		if err := json.Unmarshal(f.addedTokens, &added); err != nil {
			return nil, p.invalid("added_tokens", "%v", err)
		}
	}
	t := &Tokenizer{}
	if !isNull(f.normalizer) {
		if t.norm, err = p.normalizer(f.normalizer, "normalizer"); err != nil {
			return nil, err
		}
	}
	if !isNull(f.preTokenizer) {
		if t.pre, t.byteLevel, err = p.preTokenizer(f.preTokenizer, "pre_tokenizer"); err != nil {
			return nil, err
		}
	}
	if t.model, err = p.model(f, t.byteLevel); err != nil {
		return nil, err
	}
	if t.added, err = p.addedTokens(added, t.norm); err != nil {
		return nil, err
	}
	t.lineAdditive = t.additive(added)
	t.classify(added)
	return t, nil
}

// normalizer compiles a normalizer; nil means none (the identity).
func (p *parser) normalizer(raw json.RawMessage, field string) (normalizer, error) {
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, p.invalid(field, "%v", err)
	}
	switch c.Type {
	case "NFC":
		return unicodeNorm{norm.NFC}, nil
	case "NFD":
		return unicodeNorm{norm.NFD}, nil
	case "NFKC":
		return unicodeNorm{norm.NFKC}, nil
	case "NFKD":
		return unicodeNorm{norm.NFKD}, nil
	case "Sequence":
		var s struct {
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, p.invalid(field, "%v", err)
		}
		var seq sequenceNorm
		for i, r := range s.Normalizers {
			n, err := p.normalizer(r, fmt.Sprintf("%s.normalizers[%d]", field, i))
			if err != nil {
				return nil, err
			}
			seq = append(seq, n)
		}
		switch len(seq) {
		case 0:
			return nil, nil
		case 1:
			return seq[0], nil
		}
		return seq, nil
	case "Replace":
		var r struct {
			Pattern patternJSON `json:"pattern"`
			Content string      `json:"content"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, p.invalid(field, "%v", err)
		}
		m, err := p.pattern(r.Pattern, field+".pattern")
		if err != nil {
			return nil, err
		}
		return replaceNorm{pat: m, with: r.Content}, nil
	case "Prepend":
		var r struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, p.invalid(field, "%v", err)
		}
		return prependNorm(r.Prepend), nil
	}
	return nil, p.unsupported(field, "normalizer %q is not supported (supported: NFC, NFD, NFKC, NFKD, Replace, Prepend, Sequence)", c.Type)
}

// pattern compiles a Split or Replace pattern.
func (p *parser) pattern(pj patternJSON, field string) (matcher, error) {
	switch {
	case pj.String != nil && pj.Regex == nil:
		return literal(*pj.String), nil
	case pj.Regex != nil && pj.String == nil:
		if m, ok := fastPattern(*pj.Regex); ok {
			return m, nil
		}
		re, err := compileRegex(*pj.Regex)
		if err != nil {
			return nil, p.unsupported(field, "regex %q does not compile: %v", *pj.Regex, err)
		}
		if g := repeatedGroup(*pj.Regex); g != "" {
			return nil, p.unsupported(field, "regex %q: %q repeats a group that holds a repetition or an alternation, which can take time exponential in the text's length; such patterns are not supported", *pj.Regex, g)
		}
		return re, nil
	}
	return nil, p.invalid(field, `want exactly one of "String" and "Regex"`)
}

// preTokenizer compiles a pre-tokenizer into its steps, in order, and
// reports whether it ends with ByteLevel (the model then works on bytes).
func (p *parser) preTokenizer(raw json.RawMessage, field string) ([]preStep, bool, error) {
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, false, p.invalid(field, "%v", err)
	}
	switch c.Type {
	case "Sequence":
		var s struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, p.invalid(field, "%v", err)
		}
		var steps []preStep
		byteLevel := false
		for i, r := range s.PreTokenizers {
			f := fmt.Sprintf("%s.pretokenizers[%d]", field, i)
			if byteLevel {
				return nil, false, p.unsupported(f, "a pre-tokenizer after ByteLevel is not supported")
			}
			sub, bl, err := p.preTokenizer(r, f)
			if err != nil {
				return nil, false, err
			}
			steps = append(steps, sub...)
			byteLevel = bl
		}
		return steps, byteLevel, nil
	case "Split":
		var s struct {
			Pattern  patternJSON `json:"pattern"`
			Behavior string      `json:"behavior"`
			Invert   bool        `json:"invert"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, p.invalid(field, "%v", err)
		}
		m, err := p.pattern(s.Pattern, field+".pattern")
		if err != nil {
			return nil, false, err
		}
		b, ok := behaviors[s.Behavior]
		if !ok {
			return nil, false, p.unsupported(field+".behavior", "split behavior %q is not supported", s.Behavior)
		}
		return []preStep{splitStep{pat: m, behavior: b, invert: s.Invert}}, false, nil
	case "ByteLevel":
		var s struct {
			AddPrefixSpace bool  `json:"add_prefix_space"`
			UseRegex       *bool `json:"use_regex"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, p.invalid(field, "%v", err)
		}
		useRegex := s.UseRegex == nil || *s.UseRegex // the library's default is true
		st := byteLevelStep{addPrefixSpace: s.AddPrefixSpace}
		if useRegex {
			re, err := compileRegex(gpt2Pattern)
			if err != nil {
				return nil, false, p.invalid(field, "%v", err)
			}
			st.regex = &splitStep{pat: re, behavior: isolated}
		}
		return []preStep{st}, true, nil
	case "Digits":
		var s struct {
			IndividualDigits bool `json:"individual_digits"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, p.invalid(field, "%v", err)
		}
		b := contiguous
		if s.IndividualDigits {
			b = isolated
		}
		return []preStep{splitStep{pat: runeClass(isNumeric), behavior: b}}, false, nil
	case "Metaspace":
		var s struct {
			Replacement    string  `json:"replacement"`
			PrependScheme  *string `json:"prepend_scheme"`
			AddPrefixSpace *bool   `json:"add_prefix_space"`
			Split          *bool   `json:"split"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, p.invalid(field, "%v", err)
		}
		if n := len([]rune(s.Replacement)); n != 1 {
			return nil, false, p.invalid(field+".replacement", "want one character, got %q", s.Replacement)
		}
		st := metaspaceStep{replacement: s.Replacement, scheme: prependAlways, splits: s.Split == nil || *s.Split}
		switch {
		case s.PrependScheme != nil:
			switch *s.PrependScheme {
			case "always":
			case "first":
				st.scheme = prependFirst
			case "never":
				st.scheme = prependNever
			default:
				return nil, false, p.unsupported(field+".prepend_scheme", "prepend scheme %q is not supported", *s.PrependScheme)
			}
		case s.AddPrefixSpace != nil && !*s.AddPrefixSpace:
			st.scheme = prependNever
		}
		return []preStep{st}, false, nil
	}
	return nil, false, p.unsupported(field, "pre-tokenizer %q is not supported (supported: Split, ByteLevel, Digits, Metaspace, Sequence)", c.Type)
}

// gpt2Pattern is ByteLevel's own split, used when use_regex is true.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

var behaviors = map[string]behavior{
	"Removed":            removed,
	"Isolated":           isolated,
	"MergedWithPrevious": mergedWithPrevious,
	"MergedWithNext":     mergedWithNext,
	"Contiguous":         contiguous,
}

// addedTokens compiles the added tokens into the two matchers: tokens
// matched in the raw text and tokens matched in normalized text.
func (p *parser) addedTokens(list []addedJSON, n normalizer) (_ addedVocab, err error) {
	var raw, normalized []addedEntry
	// Normalizing the tokens may run a Replace regex: under the time
	// budget of one encode of all their text.
	total := 0
	for _, a := range list {
		total += len(a.Content)
	}
	sc := &scratch{started: time.Now(), budget: matchBudget(total)}
	defer func() {
		if r := recover(); r != nil {
			if _, spent := r.(outOfTime); !spent {
				panic(r)
			}
			err = p.unsupported("added_tokens", "normalizing the added tokens took longer than %v: the normalizer's regex is too slow", sc.budget)
		}
	}()
	for i, a := range list {
		field := fmt.Sprintf("added_tokens[%d]", i)
		switch {
		case a.SingleWord:
			return addedVocab{}, p.unsupported(field, "added token %q: single_word is not supported", a.Content)
		case a.LStrip:
			return addedVocab{}, p.unsupported(field, "added token %q: lstrip is not supported", a.Content)
		case a.RStrip:
			return addedVocab{}, p.unsupported(field, "added token %q: rstrip is not supported", a.Content)
		case a.ID < 0 || a.ID > maxID:
			return addedVocab{}, p.invalid(field, "added token %q: id %d out of range", a.Content, a.ID)
		case a.Content == "":
			continue
		}
		if a.Normalized {
			content := a.Content
			if n != nil {
				content = n.normalize(span{s: content}, false, sc).s
			}
			normalized = append(normalized, addedEntry{content: content, id: int32(a.ID)})
		} else {
			raw = append(raw, addedEntry{content: a.Content, id: int32(a.ID)})
		}
	}
	return addedVocab{raw: newTrie(raw), normalized: newTrie(normalized)}, nil
}

// maxID bounds token ids so that they fit the int32 the model stores.
const maxID = 1<<31 - 1
