package outcome

// Tools is a chat request's tools part (docs/tools.md): the tool
// definitions it carries and those it could see but left out, with their
// tokens. Tools the request may not see are counted per reason, never
// named.
type Tools struct {
	// Kept are the tools the request carries, in name order (the order
	// of the body's "tools").
	Kept []ToolKept `json:"kept"`
	// LeftOut (left_out) are the tools the request could see but that did
	// not fit the tools cap, in name order; each has an event.
	LeftOut []ToolLeftOut `json:"left_out,omitempty"`
	// Hidden counts the tools the request may not see, per reason (role,
	// hint_role).
	Hidden map[string]int `json:"hidden,omitempty"`
	// Tokens is what the tools part counts in the budget, the format's
	// fixed cost included; part of the total.
	Tokens int `json:"tokens"`
	// Cap is the cap applied: the template's tools max_tokens, else the
	// budget.
	Cap int `json:"cap"`
	// Method is the counting rule: openai-functions (OpenAI's published
	// rule for function definitions) or anthropic-tools (its tool-use
	// system prompt and the definitions as JSON).
	Method string `json:"method"`
	// Approximate is set when no exact published rule covers the count:
	// always for anthropic-tools; for openai-functions with nested
	// schemas or an encoding other than OpenAI's own.
	Approximate bool `json:"approximate,omitempty"`
}

// ToolKept is a tool a request carries.
type ToolKept struct {
	Name      string  `json:"name"`
	Source    string  `json:"source"`
	Tokens    int     `json:"tokens"`
	Relevance float64 `json:"relevance,omitempty"`
	Required  bool    `json:"required,omitempty"`
}

// ToolLeftOut is a tool a request could see but does not carry.
type ToolLeftOut struct {
	Name      string  `json:"name"`
	Source    string  `json:"source"`
	Tokens    int     `json:"tokens"`
	Relevance float64 `json:"relevance,omitempty"`
	Reason    string  `json:"reason"`
}
