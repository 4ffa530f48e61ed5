// Package toolsel owns which tool definitions a chat request carries and
// what they cost (docs/tools.md): role scope (a tool whose roles the
// request lacks, or that the template's hint roles keep from it, is
// absent, counted and not named), the count by each provider's rule
// (OpenAI's published rule for function definitions; Anthropic's
// tool-use system prompt plus the definitions as JSON, an estimate), and
// the choice under the template's tools cap: required tools stay, the
// rest by relevance to the query (package lexical over name, description
// and parameter names) or by name. What it returns is in name order, so
// the tools array changes only when the chosen set does.
package toolsel
