package server

import (
	"encoding/json"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/outcome"
)

// The request and response bodies of the API, as docs/openapi.json
// describes them. Pointers and RawMessage mark the fields whose absence
// means something other than their zero value.

// assembleRequest is the body of POST /v1/assemble.
type assembleRequest struct {
	// Template is a name (a file of the template directory, without .json)
	// or a template definition, inline.
	Template json.RawMessage `json:"template"`
	Session  string          `json:"session"`
	User     string          `json:"user"`
	// Roles, when given, narrow the key's roles; absent means all of them.
	Roles *[]string `json:"roles"`
	// Now is RFC 3339; absent means the server's clock.
	Now    *string `json:"now"`
	Format string  `json:"format"`
	Fresh  bool    `json:"fresh"`
	Budget int     `json:"budget"`
	// Query, NoQuery and Relevance say what the call is about
	// (contextasm.Request's fields); at most one is given. Relevance null
	// or absent is none; {} scores every block 0.
	Query     string             `json:"query"`
	NoQuery   bool               `json:"no_query"`
	Relevance map[string]float64 `json:"relevance"`
	// Dump returns the whole dump; Blocks the kept and cut blocks.
	Dump   bool `json:"dump"`
	Blocks bool `json:"blocks"`
}

// assembleResponse is the body POST /v1/assemble returns.
type assembleResponse struct {
	AssemblyID          string                       `json:"assembly_id"`
	Format              string                       `json:"format"`
	Text                string                       `json:"text"`
	Body                json.RawMessage              `json:"body,omitempty"`
	TotalTokens         int                          `json:"total_tokens"`
	Budget              int                          `json:"budget"`
	Encoding            string                       `json:"encoding"`
	Fingerprint         string                       `json:"fingerprint"`
	RenderHash          string                       `json:"render_hash"`
	Now                 string                       `json:"now"`
	Roles               []string                     `json:"roles"`
	StateVersion        uint64                       `json:"state_version,omitempty"`
	ExcludedCounts      map[outcome.Reason]int       `json:"excluded_counts,omitempty"`
	Prefix              *outcome.Prefix              `json:"prefix,omitempty"`
	CacheBreakpoints    []outcome.Breakpoint         `json:"cache_breakpoints,omitempty"`
	SummarizeCandidates []outcome.SummarizeCandidate `json:"summarize_candidates,omitempty"`
	Approximate         *outcome.Approximation       `json:"approximate,omitempty"`
	Blocks              []keptBlock                  `json:"blocks,omitempty"`
	Dump                *contextasm.Dump             `json:"dump,omitempty"`
}

// keptBlock is a block in an assembly's context, for a request with
// "blocks": true.
type keptBlock struct {
	RequestID string         `json:"request_id"`
	Section   string         `json:"section"`
	Status    outcome.Status `json:"status"`
	Tokens    int            `json:"tokens"`
}

// feedbackRequest is the body of POST /v1/feedback.
type feedbackRequest struct {
	AssemblyID string      `json:"assembly_id"`
	Response   string      `json:"response"`
	Cited      []citation  `json:"cited"`
	Usage      *usageField `json:"usage"`
}

// citation is a provider's structured citation (contextasm.Response.Cited).
type citation struct {
	ID     string `json:"id"`
	Offset int    `json:"offset"`
	Type   string `json:"type"`
}

// usageField is contextasm.Usage on the wire.
type usageField struct {
	InputTokens      int `json:"input_tokens"`
	CachedTokens     int `json:"cached_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens"`
}

// feedbackResponse is what POST /v1/feedback returns: what was learned,
// and whether the learned-state store acknowledged it.
type feedbackResponse struct {
	*feedback.Result
	Stored bool `json:"stored"`
}

// countRequest is the body of POST /v1/count: one text or several.
type countRequest struct {
	Encoding string    `json:"encoding"`
	Text     *string   `json:"text"`
	Texts    *[]string `json:"texts"`
}

// countResponse is what POST /v1/count returns.
type countResponse struct {
	Encoding    string                 `json:"encoding"`
	Tokens      int                    `json:"tokens"`
	Counts      *[]int                 `json:"counts,omitempty"`
	Approximate *outcome.Approximation `json:"approximate,omitempty"`
}

// declareResponse is what POST /v1/declarations returns.
type declareResponse struct {
	Declared int `json:"declared"`
	Blocks   int `json:"blocks"`
}

// forgetResponse is what DELETE /v1/declarations returns.
type forgetResponse struct {
	Forgotten int `json:"forgotten"`
	Blocks    int `json:"blocks"`
}

// endResponse is what POST /v1/sessions/{id}/end returns.
type endResponse struct {
	Blocks     int  `json:"blocks"`
	Decisions  int  `json:"decisions"`
	Assemblies int  `json:"assemblies"`
	Stored     bool `json:"stored"`
}

// assemblyResponse is what GET /v1/assemblies/{id} returns.
type assemblyResponse struct {
	AssemblyID string          `json:"assembly_id"`
	Session    string          `json:"session,omitempty"`
	Created    string          `json:"created"`
	FedBack    bool            `json:"fed_back"`
	Dump       contextasm.Dump `json:"dump"`
}

// statusResponse is what /healthz and /readyz return.
type statusResponse struct {
	Status string `json:"status"`
}
