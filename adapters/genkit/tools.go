package genkitadapter

import (
	"encoding/json"
	"fmt"

	"github.com/firebase/genkit/go/ai"

	"github.com/contextasm/contextasm/contextasm"
)

// Tools returns the tools res carries (Result.Tools, docs/tools.md) as
// Genkit's tool definitions, in the result's order (by name); nil for
// none. Each takes its input schema as declared.
func Tools(res *contextasm.Result) ([]*ai.ToolDefinition, error) {
	var out []*ai.ToolDefinition
	for _, t := range res.Messages().Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return nil, fmt.Errorf("genkitadapter: tool %q: %w", t.Name, err)
		}
		out = append(out, &ai.ToolDefinition{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return out, nil
}
