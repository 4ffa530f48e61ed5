package tokfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Patterns a tiktoken spec may name.
const (
	PatternCL100k = "cl100k_base"
	PatternO200k  = "o200k_base"
)

// ErrInvalid is wrapped by errors about a malformed spec.
var ErrInvalid = errors.New("tokfile: invalid tokenizer spec")

// Kind says what format a tokenizer file is in.
type Kind uint8

// The kinds of tokenizer file.
const (
	KindHF       Kind = iota + 1 // a Hugging Face tokenizer.json
	KindTiktoken                 // a tiktoken spec naming a rank file
)

// Spec is a tiktoken spec, read.
type Spec struct {
	// Format is "tiktoken", which marks the file as a spec.
	Format string `json:"format"`
	// Ranks is the rank file's path as written: relative to the spec's
	// directory, or absolute. Required.
	Ranks string `json:"ranks"`
	// Pattern names the pre-tokenizer's split pattern: PatternCL100k or
	// PatternO200k.
	Pattern string `json:"pattern"`
	// RanksPath is Ranks resolved against the spec's directory.
	RanksPath string `json:"-"`
}

// maxSpec bounds what Sniff reads to tell a spec (a few lines) from a
// tokenizer.json (megabytes).
const maxSpec = 64 << 10

// MaxFileBytes bounds a tokenizer file and a rank file: twice the largest
// of the supported families' (Gemma 3's tokenizer.json, 33 MB). A larger
// file, or one that is not a regular file (a device, a FIFO), is refused
// before it is read.
const MaxFileBytes = 64 << 20

// Errors about a file that is refused before it is read.
var (
	ErrTooLarge   = errors.New("tokfile: tokenizer file too large")
	ErrNotRegular = errors.New("tokfile: not a regular file")
)

// opener opens a file by name: with os.Open, or (confined) within an
// os.Root.
type opener struct {
	openFile func(name string) (*os.File, error)
	stat     func(name string) (os.FileInfo, error)
	confined bool
}

var anywhere = opener{openFile: os.Open, stat: os.Stat}

// open opens a tokenizer or rank file, refusing one that is not regular or
// is larger than MaxFileBytes.
func (o opener) open(name string) (*os.File, error) {
	// Stat before opening: opening a FIFO waits for a writer.
	if fi, err := o.stat(name); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s (%s)", ErrNotRegular, name, fi.Mode().Type())
	}
	f, err := o.openFile(name)
	if err != nil {
		return nil, fmt.Errorf("tokfile: %w", err)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("tokfile: %s: %w", name, err)
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, fmt.Errorf("%w: %s (%s)", ErrNotRegular, name, fi.Mode().Type())
	case fi.Size() > MaxFileBytes:
		f.Close()
		return nil, fmt.Errorf("%w: %s is %d bytes, more than %d (tokfile.MaxFileBytes)", ErrTooLarge, name, fi.Size(), MaxFileBytes)
	}
	return f, nil
}

// read reads a whole file opened by open, within the bound (a file that
// grows while read is cut there, and refused).
func (o opener) read(name string) ([]byte, error) {
	f, err := o.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("tokfile: %s: %w", name, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%w: %s is more than %d bytes (tokfile.MaxFileBytes)", ErrTooLarge, name, MaxFileBytes)
	}
	return data, nil
}

// ReadFile reads a tokenizer or rank file whole: a regular file of at most
// MaxFileBytes.
func ReadFile(path string) ([]byte, error) { return anywhere.read(path) }

// Sniff reports the kind of the tokenizer file at path and, for a spec, the
// spec.
func Sniff(path string) (Kind, *Spec, error) { return anywhere.sniff(path) }

func (o opener) sniff(path string) (Kind, *Spec, error) {
	f, err := o.open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, maxSpec+1))
	if err != nil {
		return 0, nil, fmt.Errorf("tokfile: %s: %w", path, err)
	}
	if len(head) > maxSpec || !bytes.Contains(head, []byte(`"tiktoken"`)) {
		return KindHF, nil, nil
	}
	var probe struct {
		Format string `json:"format"`
	}
	if json.Unmarshal(head, &probe) != nil || probe.Format != "tiktoken" {
		return KindHF, nil, nil
	}
	s, err := parseSpec(head, path)
	if err != nil {
		return 0, nil, err
	}
	return KindTiktoken, s, nil
}

func parseSpec(data []byte, path string) (*Spec, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
	}
	switch {
	case s.Ranks == "":
		return nil, fmt.Errorf("%w: %s: ranks: the rank file is required", ErrInvalid, path)
	case s.Pattern != PatternCL100k && s.Pattern != PatternO200k:
		return nil, fmt.Errorf("%w: %s: pattern: must be %s or %s (got %q)", ErrInvalid, path, PatternCL100k, PatternO200k, s.Pattern)
	}
	s.RanksPath = s.Ranks
	if !filepath.IsAbs(s.Ranks) {
		s.RanksPath = filepath.Join(filepath.Dir(path), s.Ranks)
	}
	return &s, nil
}

// Identity returns "sha256:" and the hex identity of the tokenizer file at
// path (see the package doc).
func Identity(path string) (string, error) { return anywhere.identity(path) }

// ErrOutside is wrapped by IdentityIn's error about a name that leaves
// its directory.
var ErrOutside = errors.New("tokfile: a tokenizer file outside the template's directory")

// IdentityIn is Identity for a file a template names: name must be a local
// path (filepath.IsLocal: relative, no ".." out) of a file inside dir, and
// so must a spec's rank file be, symbolic links included (os.Root). It
// returns the identity and the file's path (dir joined with name).
func IdentityIn(dir, name string) (id, path string, err error) {
	path = filepath.Join(dir, name)
	if !filepath.IsLocal(name) {
		return "", path, fmt.Errorf("%w: %q is not a path inside %s", ErrOutside, name, dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", path, fmt.Errorf("tokfile: %w", err)
	}
	defer root.Close()
	id, err = opener{openFile: root.Open, stat: root.Stat, confined: true}.identity(name)
	return id, path, err
}

func (o opener) identity(path string) (string, error) {
	kind, spec, err := o.sniff(path)
	if err != nil {
		return "", err
	}
	if kind == KindHF {
		sum, err := o.hash(path)
		if err != nil {
			return "", err
		}
		return "sha256:" + sum, nil
	}
	if o.confined && !filepath.IsLocal(spec.RanksPath) {
		return "", fmt.Errorf("%w: %s: ranks: %q is not a path inside the template's directory", ErrOutside, path, spec.Ranks)
	}
	ranks, err := o.hash(spec.RanksPath)
	if err != nil {
		return "", fmt.Errorf("%w (the ranks of %s)", err, path)
	}
	sum := sha256.Sum256([]byte("tiktoken\n" + spec.Pattern + "\n" + ranks + "\n"))
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

func (o opener) hash(path string) (string, error) {
	f, err := o.open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("tokfile: %s: %w", path, err)
	}
	if n > MaxFileBytes {
		return "", fmt.Errorf("%w: %s is more than %d bytes (tokfile.MaxFileBytes)", ErrTooLarge, path, MaxFileBytes)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
