package openaiadapter_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	openaiadapter "github.com/contextasm/contextasm/adapters/openai"
	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/internal/chatcheck"
	"github.com/contextasm/contextasm/template"
)

// toolTurn returns a result for the Responses format whose conversation
// ends with calls the model is to go on from, made by a turn with an
// OpenAI reasoning item, under ids Kimi would emit.
func toolTurn(t *testing.T) *contextasm.Result {
	t.Helper()
	eng, err := contextasm.New(contextasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	var rs chat.Reasoning
	if err := json.Unmarshal([]byte(`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Look up the rate."}],"encrypted_content":"gAAAA"}`), &rs); err != nil {
		t.Fatal(err)
	}
	conv := chat.Conversation{Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "What is the car-loan rate over 48 months?"},
		{Role: chat.RoleAssistant, Content: "Let me check.", Reasoning: []chat.Reasoning{rs},
			ToolCalls: []chat.ToolCall{{ID: "functions.get_rate:0", Name: "get_rate", Arguments: `{"term_months":48}`}}},
		{Role: chat.RoleTool, ToolCallID: "functions.get_rate:0", Content: "6.7% APR"},
	}}
	decls, err := declare.Conversation(conv, declare.ConversationOptions{SessionID: "s1", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Declare(append(decls, declare.Declaration{RequestID: "rule-apr", MemoryType: declare.Constraint, Scope: declare.ScopeGlobal,
		Content: "Quote rates with their APR."})...); err != nil {
		t.Fatal(err)
	}
	tpl, err := template.Parse([]byte(tplSrc), "template.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Assemble(context.Background(), contextasm.Request{Template: tpl, Now: now, SessionID: "s1", Format: chat.FormatResponses})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The SDK's parameters say what chat.Responses writes, the host's own
// instructions and input after it, and the SDK sends them as they are, in
// a body the API's rules accept.
func TestResponsesParams(t *testing.T) {
	res := toolTurn(t)
	want, err := chat.Responses(res.Messages())
	if err != nil {
		t.Fatal(err)
	}
	var wantBody struct {
		Instructions string `json:"instructions"`
		Input        []any  `json:"input"`
	}
	if err := json.Unmarshal(want, &wantBody); err != nil {
		t.Fatal(err)
	}
	if len(wantBody.Input) != 5 { // user, reasoning, message, function_call, function_call_output
		t.Fatalf("the fixture's body has %d items: %s", len(wantBody.Input), want)
	}

	var sent []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/responses" {
			http.NotFound(w, r)
			return
		}
		sent, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5.5", "status": "completed",
			"output": []any{map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": "6.7% APR.", "annotations": []any{}}}}}})
	}))
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	params, err := openaiadapter.ResponsesParams(res, responses.ResponseNewParams{Model: openai.ChatModelGPT5_5,
		Instructions: param.NewOpt("Answer in English."), Input: responses.ResponseNewParamsInputUnion{OfString: param.NewOpt("Thanks!")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Responses.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(sent, &got); err != nil {
		t.Fatal(err)
	}
	if got["model"] != "gpt-5.5" {
		t.Errorf("model = %v", got["model"])
	}
	if got["instructions"] != wantBody.Instructions+"Answer in English." {
		t.Errorf("instructions = %q", got["instructions"])
	}
	input, _ := got["input"].([]any)
	if len(input) != len(wantBody.Input)+1 || !reflect.DeepEqual(input[:len(wantBody.Input)], wantBody.Input) {
		t.Fatalf("the SDK sent the input\n%v\nnot chat.Responses'\n%v", input, wantBody.Input)
	}
	if last := input[len(input)-1].(map[string]any); last["content"] != "Thanks!" || last["role"] != "user" {
		t.Errorf("the host's input is not last: %v", last)
	}
	delete(got, "model")
	rest, _ := json.Marshal(got)
	if err := chatcheck.Responses(rest, chatcheck.Options{}); err != nil {
		t.Errorf("%v\n%s", err, rest)
	}
}
