package contextasm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// A chat request carries the tools its roles may see, counted in the
// budget; at call time Authorize decides again, with the roles as they are
// then.
func ExampleEngine_Authorize() {
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	err = eng.DeclareTools(
		declare.Tool{Name: "get_rate", Description: "Today's rate.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		declare.Tool{Name: "send_email", Description: "Send an email.", Roles: []string{"editor"}, InputSchema: json.RawMessage(`{"type":"object"}`)},
	)
	if err != nil {
		panic(err)
	}
	tpl, err := template.Parse([]byte(`{"budget": 1000, "tools": {"max_tokens": 300},
	  "sections": [{"name": "S", "priority": 1, "memory_types": ["constraint"], "max_tokens": 100, "render": "{content}"}]}`), "t.json")
	if err != nil {
		panic(err)
	}
	req := contextasm.Request{Template: tpl, Now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Roles: []string{"viewer"}, Format: chat.FormatOpenAI}
	res, err := eng.Assemble(context.Background(), req)
	if err != nil {
		panic(err)
	}
	for _, k := range res.Tools.Kept {
		fmt.Println("sent:", k.Name, k.Tokens, "tokens")
	}
	fmt.Println("hidden:", res.Tools.Hidden["role"])
	fmt.Println(eng.Authorize(context.Background(), req, "send_email"))
	// Output:
	// sent: get_rate 12 tokens
	// hidden: 1
	// contextasm: tool "send_email" refused: the request holds roles viewer, which does not include the role editor
}
