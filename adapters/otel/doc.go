// Package oteladapter instruments a contextasm Engine with OpenTelemetry:
// a span per assembly, a span per feedback linked to it, and metrics.
//
//	eng, err := contextasm.New(cfg)
//	tel, err := oteladapter.New(eng, oteladapter.Config{}) // the global providers
//	res, err := tel.Assemble(ctx, req)                   // span "assemble_context"
//	fb, err := tel.FeedbackResponse(ctx, res, r)          // span "contextasm.feedback", linked
//
// The returned *Engine embeds the contextasm.Engine, so it is what the
// other adapters take wherever they assemble or feed back.
//
// # Spans
//
// An assembly's span, "assemble_context", carries the GenAI semantic
// conventions' (as of v1.41.0) gen_ai.operation.name ("assemble_context")
// and gen_ai.conversation.id (the request's session), and contextasm.* attributes: the template's
// fingerprint and encoding, the render hash and assembly id, the format,
// the budget and the tokens used, the blocks kept, cut and dropped and the
// blocks excluded, the tokens of the blocks dropped, the stable prefix's
// tokens and why it ends, the cache breakpoints (count and token offsets),
// and the learned state's version when there is one. Each event of the
// Result (a block dropped, cut, excluded or flagged) is a span event named
// "contextasm." plus its kind, with the block's request_id, section,
// reason, tokens and group. A failed assembly records its error.
//
// A feedback's span, "contextasm.feedback", links to the span of the
// assembly it is about, and carries the citations, unknown citations,
// trust changes and violations counted, and the provider's reported usage
// as gen_ai.usage.input_tokens, gen_ai.usage.cache_read.input_tokens and
// gen_ai.usage.cache_creation.input_tokens. A violated constraint sets the
// span's status to an error.
//
// # Conventions
//
// The GenAI semantic conventions are experimental and renamed what this
// adapter used after v1.41.0. By default (Config.Conventions zero and
// OTEL_SEMCONV_STABILITY_OPT_IN without gen_ai_latest_experimental) the
// spans keep the names above. With gen_ai_latest_experimental in the
// variable (or ConventionsLatest), the feedback's span, which records the
// model call as the host reports it, is "gen_ai.client.inference" with
// gen_ai.operation.name "chat" and gen_ai.usage.cache_write.input_tokens
// in place of cache_creation, and recorded content is
// gen_ai.system_instructions and gen_ai.input.messages (on both spans) and
// gen_ai.output.messages (on the feedback's), in the conventions' JSON
// shapes, instead of contextasm.text and contextasm.response.
// ConventionsBoth carries both sets of attributes.
//
// # Metrics
//
//   - contextasm.assembly.duration (s): per assembly, by format and
//     outcome;
//   - contextasm.context.tokens ({token}): per assembly, the tokens of each
//     section's blocks by status (kept, cut, dropped);
//   - contextasm.truncations ({event}): the events, by reason and kind;
//   - contextasm.prefix.stable_ratio (1): per assembly that follows
//     another of its conversation, the stable prefix's share of the tokens;
//   - contextasm.cache.read_ratio (1): per feedback with reported usage,
//     the share of the input the provider read from its cache.
//
// # Content
//
// Block content is never recorded: ids, counts and hashes only. With
// Config.RecordContent, the assembly's span also carries the rendered text
// (contextasm.text) and the feedback's span the response's
// (contextasm.response), or under the latest conventions their gen_ai.*
// attributes.
//
// # The server
//
// The Engine fits contextasm serve's hook for each tenant's engine
// (internal/server's Config.Instrument), which gives the server these
// spans for every assembly and feedback made over HTTP.
package oteladapter
