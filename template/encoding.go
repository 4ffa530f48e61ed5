package template

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/contextasm/contextasm/internal/tokfile"
)

// ApproxPrefix starts the name of an approximate encoding, "approx:" and a
// model family ("approx:claude", "approx:gemini"): for models without a
// local tokenizer, counted from o200k_base with a safety margin learned
// from the token counts the provider reports (see docs/tokenizers.md).
const ApproxPrefix = "approx:"

// resolveEncoding reads a template's encoding: a built-in name, an
// approximate encoding, or a tokenizer file (a path relative to the
// template file's directory, or to the working directory for a template
// without a file). It returns what the fingerprint covers — the name, or
// the file's identity ("sha256:..."), never its path — and the file's
// resolved path, or a problem message. A confined template (one read from
// a file) may name only a file inside its own directory.
func resolveEncoding(enc, templateFile string, confined bool) (canonical, file, problem string) {
	if slices.Contains(Encodings(), enc) {
		return enc, "", ""
	}
	if name, ok := strings.CutPrefix(enc, ApproxPrefix); ok {
		if !validApprox(name) {
			return "", "", fmt.Sprintf("approximate encoding %q: the family after %q must be 1 to 64 of a-z, 0-9, '.', '_', '-'", enc, ApproxPrefix)
		}
		return enc, "", ""
	}
	var id, path string
	var err error
	if confined {
		id, path, err = tokfile.IdentityIn(filepath.Dir(templateFile), enc)
	} else {
		path = enc
		if !filepath.IsAbs(path) && templateFile != "" {
			path = filepath.Join(filepath.Dir(templateFile), path)
		}
		id, err = tokfile.Identity(path)
	}
	switch {
	case errors.Is(err, tokfile.ErrOutside):
		return "", "", fmt.Sprintf("a template file may name a tokenizer file only inside its own directory (got %q); "+
			"name one elsewhere with the command line's --tokenizer or Template.WithTokenizer", enc)
	case errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Sprintf("must be %s, %sNAME or a tokenizer file (got %q, and there is no file %s)",
			strings.Join(Encodings(), ", "), ApproxPrefix, enc, path)
	case err != nil:
		return "", "", fmt.Sprintf("tokenizer file %s: %v", path, err)
	}
	return id, path, ""
}

func validApprox(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// TokenizerFile returns the path of the tokenizer file the template's
// encoding names, resolved against the template's directory; "" for a
// built-in or approximate encoding. Encoding then returns the file's
// identity.
func (t *Template) TokenizerFile() string { return t.tokenizerFile }

// Approximate reports whether the template's encoding is an approximate
// one ("approx:..."): counts are estimates with a safety margin.
func (t *Template) Approximate() bool { return strings.HasPrefix(t.encoding, ApproxPrefix) }

// WithTokenizer returns a copy of t that counts with the tokenizer file at
// path (relative to the working directory) instead of its own encoding.
// Its fingerprint differs: it covers the file's identity.
func (t *Template) WithTokenizer(path string) (*Template, error) {
	def := t.Definition()
	def.Encoding = path
	return Compile(def)
}
