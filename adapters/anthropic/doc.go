// Package anthropicadapter puts contextasm in front of the Anthropic Go
// SDK (github.com/anthropics/anthropic-sdk-go): it builds Messages API
// request parameters from an assembled Result, and reads a response back
// into feedback for the Engine.
//
//	res, err := eng.Assemble(ctx, contextasm.Request{..., Format: chat.FormatAnthropic})
//	params, err := anthropicadapter.Params(res, anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024})
//	msg, err := client.Messages.New(ctx, params)
//	fb, err := anthropicadapter.Feedback(ctx, eng, res, msg)
//
// # Requests
//
// The parameters are chat.Anthropic's request body decoded into the SDK's
// types, so one encoder decides everything the API is strict about: the
// system prompt as text blocks, turns alternating (adjacent messages of a
// role merged, tool results first in their user turn), tool_use and
// tool_result blocks, and cache_control on the blocks that end at the
// Result's cache breakpoints: the sections unchanged since the
// conversation's previous call, whose bytes contextasm's sticky decisions
// keep identical, and its last message; with the template's cache_ttl
// "1h", each carries "ttl":"1h". The thinking blocks of the turn that made
// the pending tool calls go back first in that turn, unchanged, and tool
// call ids are written as chat.WireID maps them.
//
// # Responses
//
// Response reads a Message: its text blocks joined (whose <memory_ref>
// tags the Engine reads); each citation, naming a block by the cited
// document's title, a search result's source or a web page's URL (a
// block's request_id or provenance uri), at the start of the text block it
// annotates; and the usage, whose input is input_tokens plus the tokens
// read from and written to the cache. Feedback hands all of it to
// Engine.FeedbackResponse. Message turns the reply into a chat.Message, to
// declare as the conversation's next turn.
package anthropicadapter
