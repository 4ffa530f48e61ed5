package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/contextasm/contextasm/outcome"
)

// ErrInvalidDump is wrapped by the errors of [ReadDump] for input that is
// not a render dump.
var ErrInvalidDump = errors.New("not a contextasm render dump")

// ReadDump reads one render dump (the output of `contextasm render
// --format json`) from r; name is used in errors. Fields this version does
// not know are ignored, so a newer engine's dumps still read; a document
// without protocol_version, fingerprint or sections, or with anything
// after the object, is refused.
func ReadDump(r io.Reader, name string) (*outcome.Dump, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("view: %s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var d struct {
		outcome.Dump
		Sections *[]outcome.SectionResult `json:"sections"`
	}
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("view: %s: %w: %v", name, ErrInvalidDump, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("view: %s: %w: more data after the JSON object", name, ErrInvalidDump)
	}
	var missing []string
	if d.ProtocolVersion == "" {
		missing = append(missing, "protocol_version")
	}
	if d.Fingerprint == "" {
		missing = append(missing, "fingerprint")
	}
	if d.Sections == nil {
		missing = append(missing, "sections")
	}
	if missing != nil {
		return nil, fmt.Errorf("view: %s: %w: missing %s", name, ErrInvalidDump, strings.Join(missing, ", "))
	}
	d.Dump.Sections = *d.Sections
	return &d.Dump, nil
}
