package einoadapter

import (
	"encoding/json"
	"fmt"

	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/contextasm/contextasm/contextasm"
)

// Tools returns the tools res carries (Result.Tools, docs/tools.md) as
// Eino's tool definitions, in the result's order (by name); nil for none.
// Each takes its parameters as the declared JSON Schema.
func Tools(res *contextasm.Result) ([]*schema.ToolInfo, error) {
	var out []*schema.ToolInfo
	for _, t := range res.Messages().Tools {
		s := new(jsonschema.Schema)
		if err := json.Unmarshal(t.InputSchema, s); err != nil {
			return nil, fmt.Errorf("einoadapter: tool %q: %w", t.Name, err)
		}
		out = append(out, &schema.ToolInfo{Name: t.Name, Desc: t.Description, ParamsOneOf: schema.NewParamsOneOfByJSONSchema(s)})
	}
	return out, nil
}
