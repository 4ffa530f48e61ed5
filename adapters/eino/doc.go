// Package einoadapter puts contextasm in front of the model in CloudWeGo
// Eino (github.com/cloudwego/eino): an agent middleware for ChatModelAgent
// and a prompt.ChatTemplate for compose graphs.
//
//	mw, err := einoadapter.NewMiddleware(eng, einoadapter.Config{Template: tpl})
//	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Model: m, Handlers: []adk.ChatModelAgentMiddleware{mw}})
//	iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Run(ctx, msgs, adk.WithSessionValues(map[string]any{"session_id": "s1"}))
//
// # The middleware
//
// Before each model call (BeforeModelRewriteState) the middleware hands
// the agent's messages to the Engine, the system messages as required
// constraint blocks and the others as the session's history blocks
// (declare.Conversation, replacing the previous call's), assembles the
// context for a chat format, and rewrites the agent's persisted state to
// it: one system message with the rendered system prompt, then the kept
// messages, the agent's own *schema.Message values (a cut one with its
// content cut). After the call (AfterModelRewriteState) it feeds the
// model's reply back (Engine.FeedbackResponse): its <memory_ref>
// citations move trust, the reported prompt and cached tokens go along,
// and a broken break_on_violation constraint stops the run with an error
// wrapping feedback.ErrConstraintViolation.
//
// Eino's documentation warns that rewriting the model's input on every
// call breaks the prompt cache across iterations. Rewriting the persisted
// state keeps the prefix only if the rewrite itself is stable, and that is
// what contextasm's decisions are: within a conversation an assembly
// follows the previous one (Config.Stickiness in package contextasm),
// keeping what it kept, writing it in the same order, and shedding history
// in batches down to a slack so that the calls after a shed only append.
// The system message is byte-identical as long as the blocks it holds do
// not change, and the kept messages are the same values, in the same
// order, with new ones after them.
//
// The system message the middleware writes carries, in its Extra under
// ExtraSystem, the texts of the system messages it replaced (as a JSON
// list), so that the next call declares the agent's instructions again
// rather than the rendered context.
//
// When the Engine holds tools (docs/tools.md), the state's ToolInfos are
// the Result's, as Eino's tool definitions (Tools): those the request's
// roles may see, under the template's cap, the schemas as declared. The
// agent still runs a tool the model calls by its name, so declare the
// agent's tools. Config.ToolResultMaxTokens clips the tool results the
// middleware declares, and Config.ClearToolResults makes the template's
// history sections clear older ones (docs/chat.md).
//
// # The chat template
//
// ChatTemplate is a prompt.ChatTemplate: Format takes the conversation
// from the variables (Config.HistoryKey, and the new user turn from
// Config.QueryKey) and the session from Config.SessionKey, and returns the
// assembled messages. Its Feedback feeds a reply back for the session's
// last assembly, and its Tools gives that assembly's tools, to bind to
// the model (model.WithTools).
//
// # Messages
//
// Conversation and Messages map Eino's messages to package chat's and
// back: system messages to system parts, user, assistant and tool
// messages to turns, an assistant's tool calls (type function) with their
// id, name and arguments, and a tool message's call id.
package einoadapter
