package contextasm

import (
	"encoding/json"

	"github.com/contextasm/contextasm/declare"
)

// turnTools are the tools TestIncrementalEqualsFull's engines hold: its
// chat requests carry them, under the budget, the same on both.
var turnTools = []declare.Tool{
	{Name: "get_fee", Description: "The fee for a transfer.", InputSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}}}`)},
	{Name: "send_transfer", Description: "Send a transfer.", Roles: []string{"admin"}, InputSchema: json.RawMessage(`{"type":"object"}`)},
}
