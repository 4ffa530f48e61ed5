package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/contextasm/contextasm/template"
)

// inlineCacheSize bounds the compiled inline templates (and budget
// variants) kept: compiling one costs more than assembling with it.
const inlineCacheSize = 256

// templates resolves a request's template: by name, or inline.
type templates struct {
	named map[string]*template.Template
	// compiled caches inline templates by the SHA-256 of their JSON: the
	// key is content, never a tenant's name, so sharing the cache between
	// tenants shows no one anything they did not send.
	compiled *lru.Cache[[32]byte, *template.Template]
	// budgets caches templates with another budget, by template and
	// budget.
	budgets *lru.Cache[budgetKey, *template.Template]
}

type budgetKey struct {
	tpl    *template.Template
	budget int
}

func newTemplates(named map[string]*template.Template) (*templates, error) {
	c, err := lru.New[[32]byte, *template.Template](inlineCacheSize)
	if err != nil {
		return nil, err
	}
	b, err := lru.New[budgetKey, *template.Template](inlineCacheSize)
	if err != nil {
		return nil, err
	}
	return &templates{named: named, compiled: c, budgets: b}, nil
}

// LoadTemplates reads every *.json file of dir as a template named by the
// file's name without .json. Every problem of every file is reported.
func LoadTemplates(dir string) (map[string]*template.Template, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("server: --templates: %w", err)
		}
	}
	sort.Strings(paths)
	out := make(map[string]*template.Template, len(paths))
	var errs []error
	for _, p := range paths {
		tpl, err := template.LoadFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[strings.TrimSuffix(filepath.Base(p), ".json")] = tpl
	}
	return out, errors.Join(errs...)
}

// resolve returns the template raw names (a JSON string) or defines (a
// JSON object), with budget (when positive) in place of its own.
func (t *templates) resolve(raw json.RawMessage, budget int) (*template.Template, *apiError) {
	raw = bytes.TrimSpace(raw)
	var tpl *template.Template
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, badRequest(codeInvalid, "template", "missing: name a template of the server's directory or give one inline")
	case raw[0] == '"':
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return nil, badRequest(codeWrongType, "template", "template: %v", err)
		}
		var ok bool
		if tpl, ok = t.named[name]; !ok {
			return nil, badRequest(codeUnknownTpl, "template", "no template %q on this server (%s)", name, t.names())
		}
	case raw[0] == '{':
		var err *apiError
		if tpl, err = t.inline(raw); err != nil {
			return nil, err
		}
	default:
		return nil, badRequest(codeWrongType, "template", "template: wrong type: want a name (string) or a template (object)")
	}
	if budget < 0 {
		return nil, badRequest(codeInvalid, "budget", "budget %d is negative (0 or absent means the template's)", budget)
	}
	if budget == 0 || budget == tpl.Budget() {
		return tpl, nil
	}
	key := budgetKey{tpl, budget}
	if v, ok := t.budgets.Get(key); ok {
		return v, nil
	}
	v, err := tpl.WithBudget(budget)
	if err != nil {
		return nil, badRequest(codeInvalid, "budget", "%v", err)
	}
	t.budgets.Add(key, v)
	return v, nil
}

// inline compiles a template given in the request. It may name a
// built-in or approximate encoding only: a tokenizer file is a path on
// the server, which a client must not choose (nor learn exists).
func (t *templates) inline(raw json.RawMessage) (*template.Template, *apiError) {
	key := sha256.Sum256(append([]byte("inline\x00"), raw...))
	if v, ok := t.compiled.Get(key); ok {
		return v, nil
	}
	if err := checkInlineEncoding(raw); err != nil {
		return nil, err
	}
	tpl, err := template.Parse(raw, "template")
	if err != nil {
		return nil, fromEngine(err, "template")
	}
	t.compiled.Add(key, tpl)
	return tpl, nil
}

// names lists the named templates, for a message.
func (t *templates) names() string {
	if len(t.named) == 0 {
		return "it has none: start it with --templates DIR, or give the template inline"
	}
	names := make([]string, 0, len(t.named))
	for n := range t.named {
		names = append(names, n)
	}
	slices.Sort(names)
	return "it has " + strings.Join(names, ", ")
}

// checkInlineEncoding refuses an inline template whose encoding (under
// any spelling of the key, each time it is given) names a file.
func checkInlineEncoding(raw json.RawMessage) *apiError {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return badRequest(codeMalformedJSON, "template", "template: %v", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return badRequest(codeMalformedJSON, "template", "template: %v", err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return badRequest(codeMalformedJSON, "template", "template: %v", err)
		}
		key, _ := tok.(string)
		var enc string
		if !strings.EqualFold(key, "encoding") || json.Unmarshal(v, &enc) != nil {
			continue // the template's own validation names a wrong type
		}
		if enc != "" && !slices.Contains(template.Encodings(), enc) && !strings.HasPrefix(enc, template.ApproxPrefix) {
			return badRequest(codeInvalidTpl, "template.encoding", "an inline template's encoding must be %s or %sNAME (got %q): a tokenizer file is for templates of the server's directory",
				strings.Join(template.Encodings(), ", "), template.ApproxPrefix, enc)
		}
	}
	return nil
}
