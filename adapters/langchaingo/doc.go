// Package langchaingoadapter is a LangChainGo memory
// (github.com/tmc/langchaingo schema.Memory) that assembles the chain's
// context with contextasm instead of keeping a token buffer.
//
//	mem, err := langchaingoadapter.New(eng, langchaingoadapter.Config{Template: tpl, SessionID: "s1"})
//	chain := chains.NewConversation(llm, mem)
//	answer, err := chains.Run(ctx, chain, "And over 60 months?")
//
// LangChainGo's ConversationTokenBuffer drops the oldest messages while
// their count, made with one fixed tokenizer whatever the model, is over a
// limit. This memory instead hands the conversation to a contextasm
// Engine on every call: the messages become history blocks of the
// session (declare.Conversation, replacing the previous call's), and the
// memory variable is the context the template assembles from them and from
// whatever else the host declared (rules, facts, documents), counted with
// the template's encoding, under its caps and budget, every block left out
// explained by an event.
//
// The memory variable is the rendered text (the text format: each message
// a history block whose content starts with its speaker's prefix,
// "Human: " or "AI: "), or, with Config.ReturnMessages, a list of
// llms.ChatMessage: the system prompt, then the kept messages with their
// roles, tool calls and tool results (assembled for a chat format, where
// the budget covers the messages too).
//
// With ReturnMessages, Memory.Tools (and Tools for a Result) gives the
// tools the last assembly carried (docs/tools.md) as llms.Tool, to call
// the model with (llms.WithTools). Config.ToolResultMaxTokens clips the
// tool results the memory declares, and Config.ClearToolResults makes
// the template's history sections clear older ones (docs/chat.md).
//
// SaveContext adds the turn to the chat history and feeds the answer back
// to the Engine (Engine.FeedbackResponse) as the response to the context
// it was given: its <memory_ref> citations move trust, and a broken
// break_on_violation constraint comes back as an error wrapping
// feedback.ErrConstraintViolation.
package langchaingoadapter
