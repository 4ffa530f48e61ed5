// Package chat is a context as the chat APIs take it: a system prompt and
// a list of messages with roles, where an assistant's tool calls and the
// tools' results travel together. It holds plain Go types and two encoders,
// one per request body, and no provider SDK.
//
//	conv := res.Messages()          // a contextasm.Result as a Conversation
//	body, err := chat.OpenAI(conv)   // {"messages":[...]} for Chat Completions
//	body, err = chat.Anthropic(conv) // {"system":[...],"messages":[...]} for Messages
//
// A host adds its model name and other parameters to the body (or copies
// the Conversation into its SDK's types) and sends it.
//
// # Types
//
// A [Conversation] is a system prompt, as [SystemPart]s, and [Message]s in
// the order the model reads them. A Message has a [Role]: a user turn, an
// assistant turn (which may make [ToolCall]s), or a tool's result, which
// answers one call by its id. The types carry only what both APIs share;
// BlockIDs ties each message to the memory blocks it came from.
//
// # Rules
//
// [Conversation.Check] holds a conversation to the rules both APIs document
// for the messages they accept, and the encoders refuse a conversation that
// breaks them (an [*Error] wrapping [ErrInvalid]), so a body they return is
// one the API takes:
//
//   - a tool result answers a call of the assistant message just before it,
//     and every call of an assistant message is answered by the tool
//     messages that directly follow it (one result per call);
//   - ids and tool names are 1 to 40 and 1 to 64 characters of
//     [A-Za-z0-9_-]; a call's arguments are a JSON object;
//   - user and tool messages have content; an assistant message has content
//     or tool calls;
//   - for Anthropic, the first message (after merging, see below) is a user
//     turn, text is never only white space, and at most 4 cache
//     breakpoints are set.
//
// An empty Messages encodes as an empty list: both APIs need at least one
// message, which the host then appends.
//
// # The two bodies
//
// [OpenAI] writes the system prompt as one "system" message (its parts
// joined), then each message: assistant tool calls as
// {"id","type":"function","function":{"name","arguments"}}, results as
// "tool" messages with "tool_call_id".
//
// [Anthropic] writes the system prompt as a list of text blocks, one per
// part, with "cache_control":{"type":"ephemeral"} on each part that ends at
// a cache breakpoint. Messages alternate user and assistant: adjacent
// messages of one role (a tool result counts as a user turn) merge into one
// message whose content lists their blocks in order; tool calls become
// tool_use blocks and results tool_result blocks, which, following the
// assistant message that made the calls, come first in their user message.
// The text of a final assistant message loses its trailing white space,
// which the API refuses in a prefill.
//
// Both encoders are deterministic: the same Conversation gives the same
// bytes, with no HTML escaping.
package chat
