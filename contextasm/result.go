package contextasm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/contextasm/contextasm/chat"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/fingerprint"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// Aliases for the vocabulary of package outcome, so hosts need import only
// this package to read a Result.
type (
	// Event reports one decision about one block.
	Event = outcome.Event
	// SectionResult is one section's outcome.
	SectionResult = outcome.SectionResult
	// BlockResult is one block's outcome in its section.
	BlockResult = outcome.BlockResult
	// Audit is the record of one assembly: ids and hashes, no content.
	Audit = outcome.Audit
	// Dump is a Result in the JSON shape of `contextasm render --format
	// json`.
	Dump = outcome.Dump
	// Prefix compares a text with the previous one of its conversation.
	Prefix = outcome.Prefix
	// Breakpoint is a place where a prompt cache may end.
	Breakpoint = outcome.Breakpoint
	// SummarizeCandidate is a run of history dropped for room, for the
	// host to summarise.
	SummarizeCandidate = outcome.SummarizeCandidate
)

// Result is one assembly's outcome. Treat it as read-only: an Engine that
// assembles the same request twice without a change in between (a warm
// re-assembly) returns the same sections and events again, sharing their
// slices, rather than repeating the work. Feedback does not modify it
// either: the record it logs is a copy with model_response_hash set.
//
// The text and its figures are fields. What the assembly says about every
// block — Sections, Events and the Audit record — are methods: an Engine
// that assembled incrementally (see the package's Performance section)
// works them out on first use, by assembling the same snapshot again from
// scratch, and returns the same values on every later call. A Result is
// safe for concurrent use.
type Result struct {
	// Text is the rendered context: the protocol header line, then each
	// section that kept blocks, in template order. For a chat format it
	// is the system prompt: the same without the history blocks, which
	// are messages (see Messages).
	Text string
	// TotalTokens is the exact token count of Text; it is at most Budget.
	// For a chat format it is the conversation's count: the system prompt
	// and every message with their overhead (see ChatOverhead), and the
	// tools part's (Tools.Tokens).
	TotalTokens int
	// Fingerprint identifies the template: "sha256:" and 16 hex digits.
	Fingerprint string
	// RenderHash is "sha256:" and the SHA-256 of Text, in hex; for a chat
	// format, of the request body (chat.Encode of Messages).
	RenderHash string
	// Format is the request's: zero for the text format.
	Format chat.Format
	// messages are a chat format's history blocks, in reading order.
	messages []chat.Message
	// cacheTTL is the template's cache_ttl, which Messages carries.
	cacheTTL string
	// Encoding is the template's encoding, which counted every token.
	Encoding string
	// Budget is the budget applied: the template's.
	Budget int
	// Now is the request's Now, the instant expiry and staleness were judged
	// at.
	Now time.Time
	// ExcludedCounts counts the hidden exclusions per reason (see
	// Events); nil when there are none.
	ExcludedCounts map[outcome.Reason]int
	// StateVersion is the version of the learned state (Config.State) the
	// blocks' trust came from: the store's version the Engine's snapshot
	// was at. Zero without a store.
	StateVersion uint64
	// Approximate is set when the encoding is approximate ("approx:..."):
	// TotalTokens and the budget were then enforced with an estimate, and
	// this says how it was made (see [Engine.ReportUsage]).
	Approximate *Approximation
	// Prefix compares Text with the text of the previous assembly of the
	// same session, user and template: how many leading bytes and tokens
	// they share, where they part and why. Nil on a conversation's first
	// assembly, and for a request without a SessionID.
	Prefix *Prefix
	// CacheBreakpoints are up to four places where a prompt cache may end:
	// the ends of sections that did not change since the previous assembly
	// (on the first, of every section) and that cover at least
	// Config.Stickiness.MinCachePrefix tokens. Nil for a request without a
	// SessionID.
	CacheBreakpoints []Breakpoint
	// SummarizeCandidates are, for a request with a SessionID, the runs of
	// consecutive history blocks the assembly dropped for room and that
	// nothing in the context stands for: summarise each after the call
	// and declare the summary as a history block whose replaces lists the
	// run's IDs, before the next (docs/degrade.md). Nil when there are
	// none.
	SummarizeCandidates []SummarizeCandidate
	// Template says which template of the request's fallback chain
	// (Request.Template, then Request.Fallback) was used and why each
	// earlier one was not; nil for a request without Fallback or Accept.
	Template *TemplateChoice
	// Tools is a chat request's tools part: the tools kept and left out,
	// with their tokens (docs/tools.md); nil without tools. Its Tokens
	// are part of TotalTokens.
	Tools    *ToolsResult
	toolDefs []chat.Tool // the kept tools as the bodies write them

	told *told // Sections, Events and Audit
}

// told is what a Result tells beyond its text, made on first use.
type told struct {
	once   sync.Once
	asm    *assembled
	extra  []Event // after the assembly's own: the sources' and the state store's
	id     string  // the audit record's request_id
	inputs []outcome.Input
	events []Event
	audit  Audit
}

// Body returns a chat format's request body: chat.Encode of Messages, the
// bytes RenderHash is the hash of (held to the API's rules when
// Config.CheckBodies is set), encoded once by the assembly so that a host
// sends it without encoding it again. It is nil for the text format. The
// slice is shared by the Results of warm re-assemblies: do not modify it.
func (r *Result) Body() []byte { return r.told.asm.body }

// Sections returns each section's outcome, in template order, its blocks
// in rank order. The slices are shared by every call and by the Results of
// warm re-assemblies: do not modify them.
func (r *Result) Sections() []SectionResult {
	if r.told == nil {
		return nil
	}
	return r.told.asm.explained().Sections
}

// Events returns what explains every block left out, cut, stale or
// neutralised, except blocks hidden from the request (another session's or
// user's, needing a role it lacks, or meant for the user only), which
// ExcludedCounts counts per reason unless Request.ListHidden is set; then
// the sources' events (see SetSourceEvents) and the state store's. It is
// never nil for the Result of an assembly.
func (r *Result) Events() []Event {
	if r.told == nil {
		return nil
	}
	r.told.make(r)
	return r.told.events
}

// Audit returns the assembly's audit record: ids and hashes, no content.
func (r *Result) Audit() Audit {
	if r.told == nil {
		return Audit{}
	}
	r.told.make(r)
	return r.told.audit
}

// make works out the events and the audit record, once.
func (t *told) make(r *Result) {
	t.once.Do(func() {
		a := t.asm
		out := a.explained()
		events := out.Events
		if len(t.extra) > 0 {
			events = append(slices.Clip(events), t.extra...) // never into the assembly's array
		}
		if events == nil {
			events = []Event{}
		}
		t.events = events
		t.audit = Audit{
			RequestID:           t.id,
			Fingerprint:         r.Fingerprint,
			RenderHash:          a.renderHash,
			DeclaredMemoryTypes: memoryTypes(out.Sections),
			RenderedTokens:      a.out.TotalTokens,
			Budget:              r.Budget,
			Blocks:              auditBlocks(out),
			Events:              events,
			ExcludedCounts:      a.out.ExcludedCounts,
			Inputs:              t.inputs,
			Conflicts:           out.Conflicts,
			Template:            r.Template,
		}
	})
}

func newResult(tpl *template.Template, req Request, a *assembled, extra []Event) *Result {
	out, renderHash := a.out, a.renderHash
	id := req.ID
	if id == "" {
		id = "asm-" + renderHash[len("sha256:"):][:12]
	}
	return &Result{
		Format:              a.format,
		messages:            out.Messages,
		cacheTTL:            out.CacheTTL,
		Text:                out.Text,
		TotalTokens:         out.TotalTokens,
		Fingerprint:         tpl.Fingerprint(),
		RenderHash:          renderHash,
		Encoding:            tpl.Encoding(),
		Budget:              tpl.Budget(),
		Now:                 req.Now,
		ExcludedCounts:      out.ExcludedCounts,
		Prefix:              out.Prefix,
		CacheBreakpoints:    out.Breakpoints,
		SummarizeCandidates: out.SummarizeCandidates,
		told:                &told{asm: a, extra: extra, id: id},
	}
}

// renderHashOf returns "sha256:" and the hex SHA-256 of what an assembly
// sends the model: its text, or for a chat format the request body, which
// check holds to its API's rules first (Config.CheckBodies), and which it
// keeps in a.body (Result.Body).
func renderHashOf(a *assembled, check bool) (string, error) {
	h := sha256.New()
	if a.format != 0 {
		body, err := chat.Encode(a.format, conversation(a.out))
		if err == nil && check {
			err = checkBody(a.format, body)
		}
		if err != nil {
			return "", fmt.Errorf("contextasm: the %v body: %w", a.format, err)
		}
		h.Write(body)
		a.body = body
	} else {
		// In pieces: the text is not copied whole on every assembly.
		var buf [4096]byte
		for t := a.out.Text; len(t) > 0; {
			n := copy(buf[:], t)
			h.Write(buf[:n])
			t = t[n:]
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// memoryTypes returns the memory types of the blocks that took part in an
// assembly (were eligible for a section), in the fixed type order: blocks
// other requests' scopes or roles hide are not the audit record's business.
func memoryTypes(sections []SectionResult) []string {
	types := []string{}
	for _, mt := range declare.MemoryTypes() {
	sections:
		for _, sec := range sections {
			for _, b := range sec.Blocks {
				if b.MemoryType == string(mt) {
					types = append(types, string(mt))
					break sections
				}
			}
		}
	}
	return types
}

// Dump returns the result in its JSON dump shape.
func (r *Result) Dump() Dump {
	return Dump{
		ProtocolVersion:     fingerprint.ProtocolVersion,
		Fingerprint:         r.Fingerprint,
		RenderHash:          r.RenderHash,
		Encoding:            r.Encoding,
		Budget:              r.Budget,
		TotalTokens:         r.TotalTokens,
		Now:                 r.Now.UTC().Format(time.RFC3339Nano),
		Sections:            r.Sections(),
		Events:              r.Events(),
		ExcludedCounts:      r.ExcludedCounts,
		Text:                r.Text,
		StateVersion:        r.StateVersion,
		Approximate:         r.Approximate,
		Prefix:              r.Prefix,
		CacheBreakpoints:    r.CacheBreakpoints,
		SummarizeCandidates: r.SummarizeCandidates,
		Query:               r.Query(),
		Conflicts:           r.Conflicts(),
		Template:            r.Template,
		Tools:               r.Tools,
	}
}

// Query says what the assembly's relevance came from (the request's
// query, the session's newest user turn, or the host's scores), by hash
// and token count, never by text; nil when relevance did not count. The
// count is made on first use.
func (r *Result) Query() *outcome.Query {
	if r.told == nil {
		return nil
	}
	return r.told.asm.queryInfo()
}

// auditBlocks lists the blocks in out's text with the hash of each one's
// span, for the audit record.
func auditBlocks(out *assemble.Output) []outcome.AuditBlock {
	blocks := []outcome.AuditBlock{}
	for _, sec := range out.Sections {
		for _, b := range sec.Blocks {
			if b.Status == outcome.StatusDropped {
				continue
			}
			sum := sha256.Sum256([]byte(out.Text[b.Offset : b.Offset+b.Length]))
			blocks = append(blocks, outcome.AuditBlock{RequestID: b.RequestID, Status: b.Status, SHA256: hex.EncodeToString(sum[:])})
		}
	}
	return blocks
}
