package declare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// MemoryType says what a block is; a template routes blocks to sections by it.
type MemoryType string

// The memory types.
const (
	Constraint MemoryType = "constraint"
	Context    MemoryType = "context"
	History    MemoryType = "history"
	External   MemoryType = "external"
)

// NumMemoryTypes is the number of memory types.
const NumMemoryTypes = 4

// MemoryTypes returns every memory type, in a fixed order: constraint,
// context, history, external. It returns an array, a fresh copy each call.
func MemoryTypes() [NumMemoryTypes]MemoryType {
	return [...]MemoryType{Constraint, Context, History, External}
}

// Valid reports whether t is one of the memory types.
func (t MemoryType) Valid() bool {
	switch t {
	case Constraint, Context, History, External:
		return true
	}
	return false
}

// Scope says who a block is visible to.
type Scope string

// The scopes.
const (
	ScopeSession Scope = "session" // one session: SessionID must match
	ScopeUser    Scope = "user"    // one user, all sessions: UserID must match
	ScopeGlobal  Scope = "global"  // everyone
)

// Audience values (MCP annotation meaning).
const (
	AudienceUser      = "user"
	AudienceAssistant = "assistant"
)

// Defaults for the optional numbers.
const (
	DefaultSemanticWeight = 0.5
	DefaultTrustScore     = 0.5
	// MaxTrustScore is the ceiling of trust: no block is ever fully trusted.
	MaxTrustScore = 0.99
	// DefaultMaxContentBytes is the largest content accepted unless
	// Config.MaxContentBytes says otherwise.
	DefaultMaxContentBytes = 1 << 20
)

// Provenance says where a block came from.
type Provenance struct {
	// SourceID (source_id) is the source's name; it fills a render string's
	// {source_id}, the only provenance that can reach the model.
	SourceID string `json:"source_id,omitempty"`
	// SourceFormat (source_format) is the MIME type of the original.
	SourceFormat string `json:"source_format,omitempty"`
	// SourceLocation (source_location) is where in the source the block is:
	// a citation, a file's relative path.
	SourceLocation string `json:"source_location,omitempty"`
	// URI is a URI of the original.
	URI string `json:"uri,omitempty"`
}

// Declaration is one memory block offered for assembly; docs/declarations.md
// describes every field.
//
// Optional numbers are pointers so that "absent" and "zero" differ: an
// absent SemanticWeight or TrustScore means the default (0.5), an absent
// Priority means the block carries no priority hint.
type Declaration struct {
	// RequestID (request_id) is the block's identity: declaring an id the
	// engine holds replaces that block.
	RequestID string `json:"request_id" validate:"required,request_id"`
	// MemoryType (memory_type) says what the block is; templates route by it.
	MemoryType MemoryType `json:"memory_type" validate:"required,oneof=constraint context history external"`
	// Scope says who the block is visible to: session, user or global.
	Scope Scope `json:"scope" validate:"required,oneof=session user global"`
	// SessionID (session_id) is the session a session-scoped block belongs to.
	SessionID string `json:"session_id,omitempty" validate:"required_if=Scope session"`
	// UserID (user_id) is the user a user-scoped block belongs to.
	UserID string `json:"user_id,omitempty" validate:"required_if=Scope user"`
	// Content is the text the model sees, at most the content limit; it may
	// be empty only on an assistant turn that makes tool calls.
	Content string `json:"content" validate:"required_unless=Role assistant"`
	// SemanticWeight (semantic_weight), from 0 to 1, is how relevant the host
	// judges the block; nil means DefaultSemanticWeight.
	SemanticWeight *float64 `json:"semantic_weight,omitempty" validate:"omitnil,gte=0,lte=1"`
	// TrustScore (trust_score), from 0 to MaxTrustScore, is how far the
	// content can be trusted; nil means DefaultTrustScore.
	TrustScore *float64 `json:"trust_score,omitempty" validate:"omitnil,gte=0,lte=0.99"`
	// Priority, from 0 to 1, is an MCP-style priority hint; nil means none
	// (scored as 0.5). 1 makes the block required unless it is Untrusted.
	Priority *float64 `json:"priority,omitempty" validate:"omitnil,gte=0,lte=1"`
	// Required means the block is never dropped or cut: if it cannot fit, the
	// assembly fails.
	Required bool `json:"required,omitempty"`
	// Audience lists who the block is for, "user" and/or "assistant"; empty
	// means both. Without "assistant" it never reaches the model.
	Audience []string `json:"audience,omitempty" validate:"omitempty,dive,oneof=user assistant"`
	// ValidUntil (valid_until) is the instant from which the block is expired
	// and left out; nil means it never expires.
	ValidUntil *Time `json:"valid_until,omitempty"`
	// StaleAfter (stale_after) says when the block becomes stale: that long
	// before ValidUntil, or else that long after LastModified; nil: never.
	StaleAfter *Duration `json:"stale_after,omitempty"`
	// IdleTTL, on a session-scoped block, releases it once its session has
	// gone that long without an assembly (docs/conversations.md).
	IdleTTL *Duration `json:"idle_ttl,omitempty"`
	// LastModified (last_modified) is when the block last changed (a history
	// block's turn time); it orders `order: time` sections. Nil: unknown.
	LastModified *time.Time `json:"last_modified,omitempty"`
	// Roles, when not empty, admit the block only to a request holding at
	// least one of them.
	Roles []string `json:"roles,omitempty" validate:"omitempty,dive,required,printascii"`
	// Provenance says where the block came from, for the dump and the views.
	Provenance Provenance `json:"provenance,omitzero"`
	// BreakOnViolation (break_on_violation), on a constraint, has feedback
	// check the response against ViolationPatterns.
	BreakOnViolation bool `json:"break_on_violation,omitempty"`
	// ViolationPatterns (violation_patterns) are RE2 expressions a response
	// must not match while the block was in the text.
	ViolationPatterns []string `json:"violation_patterns,omitempty"`

	// Role, ToolCalls, ToolCallID and Group are a history block's place in
	// a chat (docs/chat.md): who speaks it (empty means RoleUser), the tool
	// calls an assistant turn makes, the call a tool result answers, and
	// the group it is kept or dropped with. Other memory types have none.
	Role Role `json:"role,omitempty" validate:"omitempty,oneof=user assistant tool"`
	// ToolCalls (tool_calls) are the calls an assistant turn makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID (tool_call_id) is, on a tool result, the id of the call it
	// answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Group names the group the block is kept or dropped with.
	Group string `json:"group,omitempty"`
	// Reasoning are, on an assistant turn, the reasoning items its provider
	// returned with it (docs/chat.md#reasoning), sent back unchanged where
	// the provider requires them.
	Reasoning []Reasoning `json:"reasoning,omitempty"`

	// Variants, MaxTokens, Supersedes and Replaces let an assembly degrade
	// a block before it drops it, or leave it out for a newer one
	// (docs/degrade.md): shorter versions of the content, longest first; a
	// cap on the content's tokens (for tool output and pasted documents);
	// the ids of the blocks this one replaces (a corrected fact, a newer
	// version); and, on a history block the host wrote as a summary, the
	// ids of the turns it summarises.
	Variants []string `json:"variants,omitempty"`
	// MaxTokens (max_tokens) caps the content's tokens: the rest is cut off
	// with a marker. Nil: no limit.
	MaxTokens *int `json:"max_tokens,omitempty"`
	// Supersedes are the request_ids of the blocks this one replaces; they are
	// left out while it is eligible.
	Supersedes []string `json:"supersedes,omitempty"`
	// Replaces are, on a summary, the request_ids of the turns it summarises.
	Replaces []string `json:"replaces,omitempty"`

	// ConflictKey (conflict_key) names the fact or rule the block states:
	// blocks with the same key, of any memory type, exclude each other,
	// and of those a request may see only the most trusted enters
	// (docs/assembly.md#conflicts). Empty: none.
	ConflictKey string `json:"conflict_key,omitempty"`

	// Untrusted marks a block from a source the host does not control, such
	// as an MCP server not marked trusted: its priority is a ranking hint and
	// never makes it required (so a server cannot make assembly fail). It is
	// set by ingest code, never read from JSON.
	Untrusted bool `json:"-"`
}

// Weight returns the semantic weight, or its default when absent.
func (d *Declaration) Weight() float64 {
	if d.SemanticWeight == nil {
		return DefaultSemanticWeight
	}
	return *d.SemanticWeight
}

// Trust returns the declared trust score, or its default when absent.
func (d *Declaration) Trust() float64 {
	if d.TrustScore == nil {
		return DefaultTrustScore
	}
	return *d.TrustScore
}

// IsRequired reports whether the block must never be dropped: it says so,
// or a trusted source gave it priority 1 (MCP's "effectively required").
func (d *Declaration) IsRequired() bool {
	return d.Required || (!d.Untrusted && d.Priority != nil && *d.Priority >= 1)
}

// ForAssistant reports whether the block may reach the model: an empty
// audience means everyone.
func (d *Declaration) ForAssistant() bool {
	if len(d.Audience) == 0 {
		return true
	}
	for _, a := range d.Audience {
		if a == AudienceAssistant {
			return true
		}
	}
	return false
}

// StaleFrom returns when the block becomes stale, and false if it never
// does. With valid_until it is valid_until - stale_after; without
// it, stale_after counts from last_modified (the age after which a block is
// stale), which is what a user declaring only a shelf life expects.
func (d *Declaration) StaleFrom() (time.Time, bool) {
	if d.StaleAfter == nil {
		return time.Time{}, false
	}
	switch {
	case d.ValidUntil != nil:
		return d.ValidUntil.Time.Add(-time.Duration(*d.StaleAfter)), true
	case d.LastModified != nil:
		return d.LastModified.Add(time.Duration(*d.StaleAfter)), true
	}
	return time.Time{}, false
}

// Time is an instant written either as an RFC 3339 string or as Unix
// seconds (a JSON number, fractions allowed). It is written back as RFC 3339.
type Time struct{ time.Time }

// UnmarshalJSON accepts an RFC 3339 string or a number of Unix seconds.
func (t *Time) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fmt.Errorf("want an RFC 3339 time or Unix seconds, got %q", s)
		}
		t.Time = v
		return nil
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 64)
	if err != nil || !(f >= minUnixSeconds && f <= maxUnixSeconds) { // written so NaN fails too
		return fmt.Errorf("want an RFC 3339 time or Unix seconds, got %s", b)
	}
	sec := int64(f)
	t.Time = time.Unix(sec, int64((f-float64(sec))*1e9)).UTC()
	return nil
}

// The Unix seconds accepted: from 0000-01-01T00:00:00Z, the earliest
// instant RFC 3339 can write (so every time read writes back as one), to
// 1e11 (year 5138).
const (
	minUnixSeconds = -62167219200
	maxUnixSeconds = 1e11
)

// MarshalJSON writes the time as RFC 3339.
func (t Time) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.Time.Format(time.RFC3339Nano))
}

// Duration is a span written either as a Go duration string ("168h") or as
// a number of seconds. It is written back as a Go duration string.
type Duration time.Duration

// UnmarshalJSON accepts a Go duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("want a duration such as \"168h\" or seconds, got %q", s)
		}
		*d = Duration(v)
		return nil
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 64)
	// The nanoseconds must fit an int64 (about 292 years): converting a
	// larger float is implementation-defined (negative on amd64).
	ns := f * float64(time.Second)
	if err != nil || !(f >= 0 && ns < 1<<63) { // written so NaN fails too
		return fmt.Errorf("want a duration such as \"168h\" or seconds, got %s", b)
	}
	*d = Duration(ns)
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}
