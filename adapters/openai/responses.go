package openaiadapter

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
)

// ResponsesInput returns res's conversation (Result.Messages) as a
// Responses API request's instructions (the system prompt) and input
// items, as chat.Responses writes them: messages, the reasoning item of
// the turn that made the pending calls, function calls and their outputs.
// It returns an error wrapping chat.ErrInvalid for a conversation the API
// would refuse (chat.Conversation.Check).
func ResponsesInput(res *contextasm.Result) (instructions string, input responses.ResponseInputParam, err error) {
	body, err := chat.Responses(res.Messages())
	if err != nil {
		return "", nil, fmt.Errorf("openaiadapter: %w", err)
	}
	var b struct {
		Instructions string                       `json:"instructions"`
		Input        responses.ResponseInputParam `json:"input"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return "", nil, fmt.Errorf("openaiadapter: the SDK does not read the request body: %w", err)
	}
	return b.Instructions, b.Input, nil
}

// ResponsesParams returns p with res's system prompt as its instructions,
// followed by p's own, and res's conversation as its input, followed by
// p's own input (a turn the host did not declare, say; a string input
// becomes a user message).
func ResponsesParams(res *contextasm.Result, p responses.ResponseNewParams) (responses.ResponseNewParams, error) {
	instructions, input, err := ResponsesInput(res)
	if err != nil {
		return p, err
	}
	if own := p.Instructions.Value; own != "" {
		instructions += own
	}
	if instructions != "" {
		p.Instructions = param.NewOpt(instructions)
	}
	if own := p.Input.OfString.Value; own != "" {
		input = append(input, responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{Type: "message",
			Role: responses.EasyInputMessageRoleUser, Content: responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt(own)}}})
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: append(input, p.Input.OfInputItemList...)}
	return p, nil
}
