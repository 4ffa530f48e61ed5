package template

// ToolSelect says how a template's tools part chooses among the tools a
// request may see when they exceed its cap.
type ToolSelect string

// The selections.
const (
	// SelectRelevance keeps, after the required tools, the tools most
	// relevant to the request's query (name, description and parameter
	// names), the tie broken by name.
	SelectRelevance ToolSelect = "relevance"
	// SelectName keeps, after the required tools, tools in name order
	// until the cap: the same tools whatever the query.
	SelectName ToolSelect = "name"
)

// ToolsDefinition is a template's tools part (docs/tools.md): how many
// tokens the tool definitions of a chat request may take, and how they are
// chosen. A template without one sends every tool the request may see,
// counted in the budget all the same.
type ToolsDefinition struct {
	// MaxTokens (max_tokens) caps the tools part, overhead included, in
	// the format's count; 0 means no cap but the budget.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Select is how tools are chosen past the cap; empty means
	// SelectRelevance.
	Select ToolSelect `json:"select,omitempty"`
	// DestructiveRole (destructive_role), when set, is a role a request
	// needs to see or call a tool that may destroy (MCP's destructiveHint,
	// true unless the tool says otherwise or is read-only).
	DestructiveRole string `json:"destructive_role,omitempty"`
	// OpenWorldRole (open_world_role), when set, is a role a request needs
	// to see or call a tool that reaches outside entities (openWorldHint,
	// true unless the tool says otherwise).
	OpenWorldRole string `json:"open_world_role,omitempty"`
	// StickyMargin (sticky_margin), when set, is how far (in relevance,
	// which lies in [0, 1)) a tool a conversation's previous call left
	// out must outrank one it carried to take its place; nil means the
	// Engine's Stickiness.Margin, the blocks' margin; 1 or more means
	// relevance never displaces a tool the conversation carries.
	StickyMargin *float64 `json:"sticky_margin,omitempty"`
}

// MaxStickyMargin is the largest tools sticky_margin: past 1 (relevance
// lies in [0, 1)) a margin changes nothing.
const MaxStickyMargin = 1

// Tools returns the template's tools part, nil when it has none.
func (t *Template) Tools() *ToolsDefinition { return t.def.Tools }

// toolsProblems checks a tools part.
func toolsProblems(d *ToolsDefinition, add func(field, format string, args ...any)) {
	if d == nil {
		return
	}
	if d.MaxTokens < 0 {
		add("tools.max_tokens", "must not be negative; 0 means no cap but the budget (got %d)", d.MaxTokens)
	}
	if d.Select != "" && d.Select != SelectRelevance && d.Select != SelectName {
		add("tools.select", "must be relevance or name (got %q)", d.Select)
	}
	if m := d.StickyMargin; m != nil && !(*m >= 0 && *m <= MaxStickyMargin) {
		add("tools.sticky_margin", "must be a relevance margin from 0 to %d (got %v)", MaxStickyMargin, *m)
	}
	for _, r := range [...]struct{ field, role string }{{"tools.destructive_role", d.DestructiveRole}, {"tools.open_world_role", d.OpenWorldRole}} {
		if r.role != "" && !validVersion(r.role) {
			add(r.field, "must be a role of 1 to %d printable characters (got %q)", MaxVersionLen, r.role)
		}
	}
}

// cloneTools returns a copy of d with its defaults filled in.
func cloneTools(d *ToolsDefinition) *ToolsDefinition {
	if d == nil {
		return nil
	}
	c := *d
	c.StickyMargin = clonePtr(d.StickyMargin)
	if c.Select == "" {
		c.Select = SelectRelevance
	}
	return &c
}
