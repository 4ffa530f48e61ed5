// Package chat is a context as the chat APIs take it: a system prompt and
// a list of messages with roles, where an assistant's tool calls and the
// tools' results travel together. It holds plain Go types and three
// encoders, one per request body, and no provider SDK.
//
//	conv := res.Messages()          // a contextasm.Result as a Conversation
//	body, err := chat.OpenAI(conv)   // {"messages":[...]} for Chat Completions
//	body, err = chat.Anthropic(conv) // {"system":[...],"messages":[...]} for Messages
//	body, err = chat.Responses(conv) // {"instructions":"...","input":[...]} for Responses
//
// A host adds its model name and other parameters to the body (or copies
// the Conversation into its SDK's types) and sends it.
//
// # Types
//
// A [Conversation] is a system prompt, as [SystemPart]s, and [Message]s in
// the order the model reads them. A Message has a [Role]: a user turn, an
// assistant turn (which may make [ToolCall]s), or a tool's result, which
// answers one call by its id. An assistant message may carry the
// [Reasoning] items its provider returned. BlockIDs ties each message to
// the memory blocks it came from.
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
//   - call ids are 1 to 128 characters of printable ASCII but the space,
//     written as [WireID] maps them (unchanged when they are 1 to 40 of
//     [A-Za-z0-9_-], which every API takes); tool names are 1 to 64
//     characters of [A-Za-z0-9_-]; a call's arguments are a JSON object
//     in UTF-8;
//   - reasoning items are valid ([ValidReasoning]) and on assistant
//     messages only, at most one OpenAI item a message;
//   - user and tool messages have content; an assistant message has content
//     or tool calls;
//   - for Anthropic, the first message (after merging, see below) is a user
//     turn, message text is never only white space, the system prompt is
//     not only white space, and at most 4 cache breakpoints are set.
//
// An empty Messages encodes as an empty list: both APIs need at least one
// message, which the host then appends.
//
// # The three bodies
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
// which the API refuses in a prefill. A system part that is only white
// space joins the part before it. Thinking blocks open their assistant
// message; Conversation.CacheTTL "1h" writes "ttl":"1h" on every
// cache_control.
//
// [Responses] writes the system prompt as "instructions" and each message
// as input items: "message" items, an assistant's OpenAI reasoning item
// and then its "function_call" items, and "function_call_output" items for
// results, right after the calls they answer.
//
// The encoders are deterministic: the same Conversation gives the same
// bytes, with no HTML escaping.
//
// # Performance
//
// The encoders write a body without reflection, into one buffer sized
// from the conversation: a body costs a constant few allocations however
// many messages it has (the buffer, and Check's maps of call ids), plus
// one for a system prompt in parts that join inside a UTF-8 sequence, one
// per use of each call id that [WireID] maps, and the validation of each
// reasoning item. The bytes are the ones encoding/json wrote for the same
// bodies (with SetEscapeHTML(false)), which the tests hold them to; the
// tool definitions still go through encoding/json.
package chat
