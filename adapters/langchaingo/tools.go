package langchaingoadapter

import (
	"encoding/json"
	"fmt"

	"github.com/tmc/langchaingo/llms"

	"github.com/contextasm/contextasm/contextasm"
)

// Tools returns the tools res carries (Result.Tools, docs/tools.md) as
// LangChainGo's function tools, in the result's order (by name); nil for
// none. Each takes its parameters as the declared JSON Schema, decoded
// (the form every LangChainGo provider reads).
func Tools(res *contextasm.Result) ([]llms.Tool, error) {
	var out []llms.Tool
	for _, t := range res.Messages().Tools {
		var params map[string]any
		if err := json.Unmarshal(t.InputSchema, &params); err != nil {
			return nil, fmt.Errorf("langchaingoadapter: tool %q: %w", t.Name, err)
		}
		out = append(out, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return out, nil
}

// Tools returns the tools of the context the last LoadMemoryVariables
// assembled (Tools), to call the model with (llms.WithTools) beside its
// messages; nil before it, after SaveContext, and in the text format,
// which carries no tools.
func (m *Memory) Tools() ([]llms.Tool, error) {
	m.mu.Lock()
	res := m.last
	m.mu.Unlock()
	if res == nil {
		return nil, nil
	}
	return Tools(res)
}
