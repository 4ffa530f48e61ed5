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

// Sniff reports the kind of the tokenizer file at path and, for a spec, the
// spec.
func Sniff(path string) (Kind, *Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, fmt.Errorf("tokfile: %w", err)
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
func Identity(path string) (string, error) {
	kind, spec, err := Sniff(path)
	if err != nil {
		return "", err
	}
	if kind == KindHF {
		sum, err := hashFile(path)
		if err != nil {
			return "", err
		}
		return "sha256:" + sum, nil
	}
	ranks, err := hashFile(spec.RanksPath)
	if err != nil {
		return "", fmt.Errorf("%w (the ranks of %s)", err, path)
	}
	sum := sha256.Sum256([]byte("tiktoken\n" + spec.Pattern + "\n" + ranks + "\n"))
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("tokfile: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("tokfile: %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
