import type { LanguageModelMiddleware } from "ai";
import { Client } from "./index.js";
import type { Declaration, FeedbackResponse, TemplateDefinition } from "./types.js";
type TransformOptions = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0];
type CallOptions = TransformOptions["params"];
type Prompt = CallOptions["prompt"];
type PromptMessage = Prompt[number];
type ToolOutput = Extract<Extract<PromptMessage, {
    role: "tool";
}>["content"][number], {
    type: "tool-result";
}>["output"];
export interface MiddlewareOptions {
    client: Client;
    /** The template: a name of the server's directory, or one inline. */
    template: string | TemplateDefinition;
    /** The session of a call: a string, a function of the call, or else the
     * call's providerOptions.contextasm.session. */
    session?: string | ((params: CallOptions) => string | undefined);
    user?: string;
    roles?: string[];
    /** The prefix of the declarations, before the session ("ai-sdk/"). */
    prefix?: string;
    budget?: number;
    /** A retriever's relevance of blocks for a call, by request_id from 0
     * to 1, in place of the server's scorer; undefined (or no function):
     * the call is about its newest user message. */
    relevance?: (params: CallOptions) => Record<string, number> | undefined | Promise<Record<string, number> | undefined>;
    /** Told what each feedback learned. */
    onFeedback?: (feedback: FeedbackResponse, assemblyId: string) => void;
}
/** Returns the middleware: wrapLanguageModel({ model, middleware: contextasmMiddleware({ client, template }) }). */
export declare function contextasmMiddleware(options: MiddlewareOptions): LanguageModelMiddleware;
/** The prompt's messages as declarations (system: required constraints;
 * the rest history blocks of the session with their roles, tool calls and
 * answered call ids, the newest required), and each tool result's output
 * by call id, to give back what the model was given. */
export declare function declare(prompt: Prompt, session: string, prefix: string): {
    declarations: Declaration[];
    outputs: Map<string, ToolOutput>;
};
/** The assembled context (an OpenAI body's messages) as the AI SDK's
 * prompt: the system prompt, then the kept messages. */
export declare function promptOf(messages: Array<Record<string, unknown>>, outputs: Map<string, ToolOutput>): Prompt;
export {};
