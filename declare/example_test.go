package declare_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/contextasm/contextasm/declare"
)

func ExampleLoad() {
	const memories = `# Two blocks offered for session s1.
{"request_id":"rule-apr","memory_type":"constraint","scope":"global","priority":1,"content":"Quote the APR with every rate."}
{"request_id":"turn-7","memory_type":"history","scope":"session","session_id":"s1","content":"The applicant asked about car loans."}
`
	decls, err := declare.Load(strings.NewReader(memories), "memories.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range decls {
		fmt.Println(d.RequestID, d.MemoryType, "required:", d.IsRequired())
	}

	// One bad line, and nothing loads: every problem is listed instead.
	const broken = `{"request_id":"turn-8","memory_type":"history","scope":"session","content":"No session id."}
{"request_id":"turn-8","memory_type":"diary","scope":"global","content":"Same id, unknown type."}`
	decls, err = declare.Load(strings.NewReader(broken), "broken.jsonl")
	fmt.Println(len(decls), errors.Is(err, declare.ErrInvalid))
	fmt.Println(err)
	// Output:
	// rule-apr constraint required: true
	// turn-7 history required: false
	// 0 true
	// declare: broken.jsonl:1: request_id "turn-8": session_id: is required when scope is session
	// declare: broken.jsonl:2: request_id "turn-8": memory_type: must be one of constraint, context, history, external (got "diary")
	// declare: broken.jsonl:2: request_id "turn-8": request_id: duplicate request_id (first declared on line 1)
}
