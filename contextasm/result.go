package contextasm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/fingerprint"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// Aliases for the result types of package truncate, so hosts need import
// only this package to read a Result.
type (
	// Event reports one decision about one block.
	Event = truncate.Event
	// SectionResult is one section's outcome.
	SectionResult = truncate.SectionResult
	// BlockResult is one block's outcome in its section.
	BlockResult = truncate.BlockResult
)

// Result is one assembly's outcome. Treat it as read-only: an Engine that
// assembles the same request twice without a change in between (a warm
// re-assembly) returns the same sections and events again, sharing their
// slices, rather than repeating the work. Feedback does not modify it
// either: the record it logs is a copy with model_response_hash set.
type Result struct {
	// Text is the rendered context: the protocol header line, then each
	// section that kept blocks, in template order.
	Text string
	// TotalTokens is the exact token count of Text; it is at most Budget.
	TotalTokens int
	// Fingerprint identifies the template: "sha256:" and 16 hex digits.
	Fingerprint string
	// RenderHash is "sha256:" and the SHA-256 of Text, in hex.
	RenderHash string
	Encoding   string
	Budget     int
	Now        time.Time
	// Sections are in template order; their blocks in rank order.
	Sections []SectionResult
	// Events explain every block left out, cut, stale or neutralised.
	Events []Event
	// Audit is the assembly's audit record: ids and hashes, no content.
	Audit Audit
}

// Audit is the record of one assembly (SPEC §5.2). It carries ids and
// hashes, never block content.
type Audit struct {
	RequestID   string `json:"request_id"`
	Fingerprint string `json:"fingerprint"`
	RenderHash  string `json:"render_hash"`
	// DeclaredMemoryTypes are the memory types of the blocks that took
	// part in the assembly (were eligible for a section), in the fixed
	// order constraint, context, history, external.
	DeclaredMemoryTypes []string `json:"declared_memory_types"`
	RenderedTokens      int      `json:"rendered_tokens"`
	Budget              int      `json:"budget"`
	Events              []Event  `json:"events"`
	// ModelResponseHash is set in the record Feedback logs: the hash of
	// the model's response to this assembly.
	ModelResponseHash string `json:"model_response_hash,omitempty"`
}

// Log writes the record as one log entry ("contextasm.assembly") with the
// record's fields as attributes; with slog's JSON handler it is one JSON
// line.
func (a *Audit) Log(ctx context.Context, l *slog.Logger) {
	attrs := []slog.Attr{
		slog.String("request_id", a.RequestID),
		slog.String("fingerprint", a.Fingerprint),
		slog.String("render_hash", a.RenderHash),
		slog.Any("declared_memory_types", a.DeclaredMemoryTypes),
		slog.Int("rendered_tokens", a.RenderedTokens),
		slog.Int("budget", a.Budget),
		slog.Any("events", a.Events),
	}
	if a.ModelResponseHash != "" {
		attrs = append(attrs, slog.String("model_response_hash", a.ModelResponseHash))
	}
	l.LogAttrs(ctx, slog.LevelInfo, "contextasm.assembly", attrs...)
}

func newResult(tpl *template.Template, req Request, a *assembled, events []Event) *Result {
	out, renderHash := a.out, a.renderHash
	id := req.ID
	if id == "" {
		id = "asm-" + renderHash[len("sha256:"):][:12]
	}
	if events == nil {
		events = []Event{}
	}
	return &Result{
		Text:        out.Text,
		TotalTokens: out.TotalTokens,
		Fingerprint: tpl.Fingerprint(),
		RenderHash:  renderHash,
		Encoding:    tpl.Encoding(),
		Budget:      tpl.Budget(),
		Now:         req.Now,
		Sections:    out.Sections,
		Events:      events,
		Audit: Audit{
			RequestID:           id,
			Fingerprint:         tpl.Fingerprint(),
			RenderHash:          renderHash,
			DeclaredMemoryTypes: a.types,
			RenderedTokens:      out.TotalTokens,
			Budget:              tpl.Budget(),
			Events:              events,
		},
	}
}

// renderHashOf returns "sha256:" and the hex SHA-256 of a rendered text.
func renderHashOf(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// memoryTypes returns the memory types of the blocks that took part in an
// assembly (were eligible for a section), in the fixed type order: blocks
// other requests' scopes or roles hide are not the audit record's business.
func memoryTypes(sections []SectionResult) []string {
	types := []string{}
	for _, mt := range declare.MemoryTypes {
	sections:
		for _, sec := range sections {
			for _, b := range sec.Blocks {
				if b.MemoryType == mt {
					types = append(types, string(mt))
					break sections
				}
			}
		}
	}
	return types
}

// Dump is a Result in the JSON shape of `contextasm render --format json`
// (SPEC §7). It round-trips through encoding/json, so tools can read dumps
// back (to diff two turns, say).
type Dump struct {
	ProtocolVersion string          `json:"protocol_version"`
	Fingerprint     string          `json:"fingerprint"`
	RenderHash      string          `json:"render_hash"`
	Encoding        string          `json:"encoding"`
	Budget          int             `json:"budget"`
	TotalTokens     int             `json:"total_tokens"`
	Now             string          `json:"now"`
	Sections        []SectionResult `json:"sections"`
	Events          []Event         `json:"events"`
	Text            string          `json:"text"`
}

// Dump returns the result in its JSON dump shape.
func (r *Result) Dump() Dump {
	return Dump{
		ProtocolVersion: fingerprint.ProtocolVersion,
		Fingerprint:     r.Fingerprint,
		RenderHash:      r.RenderHash,
		Encoding:        r.Encoding,
		Budget:          r.Budget,
		TotalTokens:     r.TotalTokens,
		Now:             r.Now.UTC().Format(time.RFC3339Nano),
		Sections:        r.Sections,
		Events:          r.Events,
		Text:            r.Text,
	}
}
