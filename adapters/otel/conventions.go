package oteladapter

import (
	"encoding/json"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
)

// Conventions says which names of the GenAI semantic conventions the spans
// carry. The conventions are still experimental and renamed things after
// v1.41.0; as they ask of existing instrumentations, the old names stay the
// default and the new ones are opted into with OTEL_SEMCONV_STABILITY_OPT_IN.
type Conventions uint8

const (
	// ConventionsFromEnv (the zero value) reads OTEL_SEMCONV_STABILITY_OPT_IN
	// when New runs: a comma-separated list holding
	// gen_ai_latest_experimental selects ConventionsLatest, anything else
	// ConventionsLegacy.
	ConventionsFromEnv Conventions = iota
	// ConventionsLegacy are the names of v1.41.0 and before: the feedback
	// span "contextasm.feedback" with gen_ai.usage.cache_creation.input_tokens,
	// and content (Config.RecordContent) as contextasm.text and
	// contextasm.response.
	ConventionsLegacy
	// ConventionsLatest are the current names: the feedback span, which
	// records the model call (its input, output and usage), is
	// "gen_ai.client.inference" with gen_ai.usage.cache_write.input_tokens,
	// and content is gen_ai.system_instructions and gen_ai.input.messages
	// (on both spans) and gen_ai.output.messages (on the feedback's), in the
	// conventions' JSON shapes, which Langfuse, Phoenix and LangSmith read.
	ConventionsLatest
	// ConventionsBoth carries both sets of attribute names (the span names
	// are the latest), for dashboards moving from one to the other.
	ConventionsBoth
)

// OptInEnv is the variable ConventionsFromEnv reads, and OptInLatest the
// value in it that selects ConventionsLatest.
const (
	OptInEnv    = "OTEL_SEMCONV_STABILITY_OPT_IN"
	OptInLatest = "gen_ai_latest_experimental"
)

// Span names of a feedback.
const (
	legacyFeedbackSpan = "contextasm.feedback"
	// InferenceSpan is the feedback's span under ConventionsLatest.
	InferenceSpan = "gen_ai.client.inference"
)

// Attribute keys the semconv package of v1.41.0 does not have.
const (
	keyCacheWrite    = attribute.Key("gen_ai.usage.cache_write.input_tokens")
	keyCacheCreation = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	keySystem        = attribute.Key("gen_ai.system_instructions")
	keyInput         = attribute.Key("gen_ai.input.messages")
	keyOutput        = attribute.Key("gen_ai.output.messages")
)

// resolve returns c, read from the environment when it is
// ConventionsFromEnv.
func (c Conventions) resolve() Conventions {
	if c != ConventionsFromEnv {
		return c
	}
	for _, v := range strings.Split(os.Getenv(OptInEnv), ",") {
		if strings.TrimSpace(v) == OptInLatest {
			return ConventionsLatest
		}
	}
	return ConventionsLegacy
}

func (c Conventions) legacy() bool { return c == ConventionsLegacy || c == ConventionsBoth }
func (c Conventions) latest() bool { return c == ConventionsLatest || c == ConventionsBoth }

// part is a message part of the conventions' JSON schemas.
type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    string          `json:"result,omitempty"`
}

type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// contentAttributes are an assembly's system instructions and input
// messages in the conventions' shapes: for a chat format the system prompt
// and the messages, for the text format the whole text as the system
// instructions (it is what a host sends as its system prompt).
func contentAttributes(res *contextasm.Result) []attribute.KeyValue {
	var system []part
	var input []message
	if res.Format == 0 {
		system = []part{{Type: "text", Content: res.Text}}
	} else {
		conv := res.Messages()
		for _, p := range conv.System {
			system = append(system, part{Type: "text", Content: p.Text})
		}
		for _, m := range conv.Messages {
			input = append(input, inputMessage(m))
		}
	}
	attrs := []attribute.KeyValue{keySystem.String(jsonOf(system))}
	if input != nil {
		attrs = append(attrs, keyInput.String(jsonOf(input)))
	}
	return attrs
}

func inputMessage(m chat.Message) message {
	out := message{Role: string(m.Role)}
	switch m.Role {
	case chat.RoleTool:
		out.Parts = []part{{Type: "tool_call_response", ID: m.ToolCallID, Result: m.Content}}
	default:
		if m.Content != "" {
			out.Parts = append(out.Parts, part{Type: "text", Content: m.Content})
		}
		for _, tc := range m.ToolCalls {
			out.Parts = append(out.Parts, part{Type: "tool_call", ID: tc.ID, Name: tc.Name, Arguments: json.RawMessage(tc.Arguments)})
		}
	}
	if out.Parts == nil {
		out.Parts = []part{}
	}
	return out
}

// outputAttribute is a response as the model's one output message.
func outputAttribute(text string) attribute.KeyValue {
	return keyOutput.String(jsonOf([]message{{Role: "assistant", Parts: []part{{Type: "text", Content: text}}}}))
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "[]" // the values above always marshal: arguments are validated JSON objects
	}
	return string(b)
}
