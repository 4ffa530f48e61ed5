// Package openaiadapter puts contextasm in front of the OpenAI Go SDK
// (github.com/openai/openai-go/v3): it builds Chat Completions request
// parameters from an assembled Result, and reads a completion back into
// feedback for the Engine.
//
//	res, err := eng.Assemble(ctx, contextasm.Request{..., Format: chat.FormatOpenAI})
//	params, err := openaiadapter.Params(res, openai.ChatCompletionNewParams{Model: openai.ChatModelGPT5_5}, openaiadapter.Options{})
//	completion, err := client.Chat.Completions.New(ctx, params)
//	fb, err := openaiadapter.Feedback(ctx, eng, res, completion)
//
// # Requests
//
// The messages are those of Result.Messages, as chat.OpenAI writes them:
// the system prompt first, then each kept history block with its role, an
// assistant's tool calls and the results that answer them. Where the
// Result marks cache breakpoints (the ends of the sections that did not
// change since the conversation's previous call, and its last message),
// the message's content is a list of text parts and the part that ends at
// a breakpoint carries an explicit prompt_cache_breakpoint, so that
// OpenAI's prompt cache ends where contextasm knows the prefix is stable.
// Options.PlainContent writes plain strings instead, for servers that
// speak the API but not its cache breakpoints.
//
// # The Responses API
//
// For a Result assembled with chat.FormatResponses, ResponsesParams (and
// ResponsesInput) build a responses.ResponseNewParams from chat.Responses'
// body: the system prompt as instructions, the conversation as input items
// (messages, the reasoning item of the turn that made the pending calls,
// function_call and function_call_output items, under the ids chat.WireID
// writes), then the host's own instructions and input.
//
//	res, err := eng.Assemble(ctx, contextasm.Request{..., Format: chat.FormatResponses})
//	params, err := openaiadapter.ResponsesParams(res, responses.ResponseNewParams{Model: openai.ChatModelGPT5_5})
//	resp, err := client.Responses.New(ctx, params)
//
// # Responses
//
// Response reads a completion's first choice: its text (whose
// <memory_ref> tags the Engine reads), its url_citation annotations, each
// naming a block by its provenance uri or request_id at the annotation's
// place in the text, and the usage: prompt tokens, and of them those read
// from and written to the cache. Feedback hands all of it to
// Engine.FeedbackResponse: citations move trust, and an approximate
// encoding learns its margin from the reported tokens. Message turns the
// assistant's reply into a chat.Message, to declare as the conversation's
// next turn.
package openaiadapter
