package fingerprint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ProtocolVersion is the version of the header this package writes and
// accepts.
const ProtocolVersion = "1.2"

// HeaderPrefix opens every header, whatever the version. Block content that
// contains it is neutralised.
const HeaderPrefix = "[MODEL_CONTEXT_PROTOCOL"

// Prefix is the algorithm tag of a fingerprint: "sha256:" + 16 hex digits.
const Prefix = "sha256:"

// hexLen is how many hex digits of the SHA-256 a fingerprint keeps.
const hexLen = 16

var (
	// ErrProtocolMismatch means a header names another protocol version or
	// fingerprint than the one expected.
	ErrProtocolMismatch = errors.New("fingerprint: protocol mismatch")
	// ErrNoHeader means the text does not start with a well-formed header.
	ErrNoHeader = errors.New("fingerprint: no protocol header")
)

// MismatchError details an [ErrProtocolMismatch].
type MismatchError struct {
	Version, WantVersion         string // the header's protocol version, and the one expected
	Fingerprint, WantFingerprint string // the header's fingerprint, and the template's
}

// Error says what differs.
func (e *MismatchError) Error() string {
	if e.Version != e.WantVersion {
		return fmt.Sprintf("fingerprint: protocol version %q, want %q", e.Version, e.WantVersion)
	}
	return fmt.Sprintf("fingerprint: fingerprint %s, want %s (the template changed)", e.Fingerprint, e.WantFingerprint)
}

// Unwrap returns [ErrProtocolMismatch].
func (e *MismatchError) Unwrap() error { return ErrProtocolMismatch }

// Canonical returns v's canonical JSON: object keys sorted, no insignificant
// whitespace, HTML characters not escaped, numbers as json writes them.
func Canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	// Re-decoding into generic values and encoding again sorts the keys of
	// every object, however v's types order their fields.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Sum returns the fingerprint of canonical bytes: "sha256:" and the first
// 16 hex digits of their SHA-256.
func Sum(canonical []byte) string {
	h := sha256.Sum256(canonical)
	return Prefix + hex.EncodeToString(h[:hexLen/2])
}

// Of returns the fingerprint of v's canonical JSON.
func Of(v any) (string, error) {
	c, err := Canonical(v)
	if err != nil {
		return "", err
	}
	return Sum(c), nil
}

// Header returns the header line (without newline) for a fingerprint as
// returned by [Sum].
func Header(fp string) string {
	return HeaderPrefix + " v" + ProtocolVersion + " | fp:" + fp + "]"
}

// ParseHeader reads the header at the start of text (its first line) and
// returns the protocol version and fingerprint it names.
func ParseHeader(text string) (version, fp string, err error) {
	line, _, _ := strings.Cut(text, "\n")
	line = strings.TrimSuffix(line, "\r")
	rest, ok := strings.CutPrefix(line, HeaderPrefix+" v")
	if !ok {
		return "", "", fmt.Errorf("%w: the first line does not start with %q", ErrNoHeader, HeaderPrefix+" v")
	}
	version, rest, ok = strings.Cut(rest, " | fp:")
	if !ok || version == "" || strings.ContainsAny(version, " |]") {
		return "", "", fmt.Errorf("%w: want %q after the version", ErrNoHeader, " | fp:")
	}
	fp, ok = strings.CutSuffix(rest, "]")
	if !ok || !wellFormed(fp) {
		return "", "", fmt.Errorf("%w: fingerprint %q is not %s and %d lowercase hex digits", ErrNoHeader, fp, Prefix, hexLen)
	}
	return version, fp, nil
}

func wellFormed(fp string) bool {
	h, ok := strings.CutPrefix(fp, Prefix)
	if !ok || len(h) != hexLen {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Verify checks that text starts with a header of this protocol version
// carrying the fingerprint want. It returns an error wrapping [ErrNoHeader]
// or [ErrProtocolMismatch] (a *MismatchError) otherwise.
func Verify(text, want string) error {
	version, fp, err := ParseHeader(text)
	if err != nil {
		return err
	}
	if version != ProtocolVersion || fp != want {
		return &MismatchError{Version: version, WantVersion: ProtocolVersion, Fingerprint: fp, WantFingerprint: want}
	}
	return nil
}
