// Package genkitadapter puts contextasm in front of the model in Firebase
// Genkit for Go (github.com/firebase/genkit/go): a middleware that
// assembles the request's messages and documents on every model call.
//
//	mw, err := genkitadapter.New(eng, genkitadapter.Config{Template: tpl, SessionID: "s1"})
//	resp, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithMessages(history...), ai.WithDocs(docs...), ai.WithUse(mw))
//
// # Every model call
//
// The middleware's WrapModel hook runs for each model call of a
// generation, tool-loop iterations included. It declares the request's
// messages (system messages as required constraint blocks, the others as
// the session's history blocks: declare.Conversation) and its documents
// (external blocks, their metadata's "uri" or "url" as provenance), in one
// Engine.ReplacePrefix under "genkit/<session>/", assembles the template
// for a chat format, and sends the model the result: the system prompt,
// one message per stretch between cache breakpoints, then the kept
// messages, the request's own values (a cut one rebuilt with its text
// cut), and no documents: those kept are in the system prompt, where the
// template's sections put them. After the call it feeds the reply back
// (Engine.FeedbackResponse) with the usage the model reported.
//
// # Tools and tool results
//
// When the Engine holds tools (docs/tools.md), the model request's Tools
// are the Result's, as Genkit's tool definitions (Tools): those the
// request's roles may see, under the template's cap, the schemas as
// declared. Genkit still runs a tool the model calls by its name. A tool
// result the Result clipped (Config.ToolResultMaxTokens, or the
// section's tool_result_max_tokens) or cleared (Config.ClearToolResults,
// or the section's clear_tool_results) is sent so, in its tool message.
//
// # The cache marker
//
// With Config.CacheTTL, the message that ends at the Result's last cache
// breakpoint (the end of the last section unchanged since the previous
// call, or the conversation's last message) carries Genkit's cache marker,
// the metadata WithCacheTTL sets: a model plugin that caches caches up to
// there, the prefix contextasm keeps byte-stable. Gemini's context cache
// (the googlegenai plugin) refuses system messages in a cached request:
// set Config.ContextRole to ai.RoleUser to send the context as user
// messages then.
//
// # Messages
//
// Conversation maps Genkit's messages to package chat's: system messages
// to system parts, user and model messages to turns, a model's tool
// requests to tool calls (arguments as JSON), and each tool response to a
// tool result. A request or response without a ref gets an id made from
// its position, its response matched by name to the latest request.
// Text parts are what is counted; other parts travel with their message.
package genkitadapter
