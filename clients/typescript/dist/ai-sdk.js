// A Vercel AI SDK middleware (wrapLanguageModel): every model call's
// prompt is declared to contextasm serve and replaced by the assembled
// context; the model's answer is fed back.
// Messages are dated from a fixed instant, a millisecond apart, so that a
// conversation handed over again dates its messages as before.
const EPOCH = Date.UTC(2000, 0, 1);
/** Returns the middleware: wrapLanguageModel({ model, middleware: contextasmMiddleware({ client, template }) }). */
export function contextasmMiddleware(options) {
    const assemblies = new WeakMap();
    const sessionOf = (params) => {
        const s = typeof options.session === "function" ? options.session(params) : options.session;
        const fromCall = params.providerOptions?.contextasm?.session;
        const session = s ?? (typeof fromCall === "string" ? fromCall : undefined);
        if (!session)
            throw new Error("contextasm: no session: give options.session or providerOptions.contextasm.session");
        return session;
    };
    const learn = async (assemblyId, text, cited, usage) => {
        const fb = await options.client.feedback(assemblyId, text, usage ? { cited, usage } : { cited });
        options.onFeedback?.(fb, assemblyId);
    };
    return {
        specificationVersion: "v3",
        async transformParams({ params }) {
            const session = sessionOf(params);
            const prefix = `${options.prefix ?? "ai-sdk/"}${session}/`;
            const { declarations, outputs } = declare(params.prompt, session, prefix);
            await options.client.declare(declarations, { replacePrefix: prefix });
            const relevance = await options.relevance?.(params);
            const out = await options.client.assemble({
                template: options.template, session, format: "openai",
                ...(options.user !== undefined && { user: options.user }),
                ...(options.roles !== undefined && { roles: options.roles }),
                ...(options.budget !== undefined && { budget: options.budget }),
                ...(relevance !== undefined && { relevance }),
            });
            const next = { ...params, prompt: promptOf(out.body?.messages ?? [], outputs) };
            assemblies.set(next, out.assembly_id);
            return next;
        },
        async wrapGenerate({ doGenerate, params }) {
            const result = await doGenerate();
            const id = assemblies.get(params);
            if (id) {
                let text = "";
                const cited = [];
                for (const part of result.content) {
                    if (part.type === "text")
                        text += part.text;
                    else if (part.type === "source" && part.sourceType === "url")
                        cited.push({ id: part.url, offset: 0 });
                }
                await learn(id, text, cited, usageOf(result.usage));
            }
            return result;
        },
        async wrapStream({ doStream, params }) {
            const result = await doStream();
            const id = assemblies.get(params);
            if (!id)
                return result;
            let text = "";
            let usage;
            const cited = [];
            const tap = new TransformStream({
                transform(part, controller) {
                    if (part.type === "text-delta")
                        text += part.delta;
                    else if (part.type === "source" && part.sourceType === "url")
                        cited.push({ id: part.url, offset: new TextEncoder().encode(text).length });
                    else if (part.type === "finish")
                        usage = usageOf(part.usage);
                    controller.enqueue(part);
                },
                async flush() {
                    await learn(id, text, cited, usage);
                },
            });
            return { ...result, stream: result.stream.pipeThrough(tap) };
        },
    };
}
/** The provider's usage as the API takes it, when it adds up. */
function usageOf(u) {
    const input = u.inputTokens.total;
    if (input === undefined)
        return undefined;
    const cached = u.inputTokens.cacheRead ?? 0;
    const written = u.inputTokens.cacheWrite ?? 0;
    return cached + written <= input ? { input_tokens: input, cached_tokens: cached, cache_write_tokens: written } : { input_tokens: input };
}
/** The prompt's messages as declarations (system: required constraints;
 * the rest history blocks of the session with their roles, tool calls and
 * answered call ids, the newest required), and each tool result's output
 * by call id, to give back what the model was given. */
export function declare(prompt, session, prefix) {
    const declarations = [];
    const outputs = new Map();
    const add = (d) => {
        const n = declarations.length;
        declarations.push({ request_id: `${prefix}${String(n).padStart(5, "0")}`, scope: "session", session_id: session,
            ...d, ...(d.memory_type === "history" ? { last_modified: new Date(EPOCH + n).toISOString() } : {}) });
    };
    for (const m of prompt) {
        switch (m.role) {
            case "system":
                if (m.content.trim())
                    add({ memory_type: "constraint", required: true, content: m.content });
                break;
            case "user": {
                const text = m.content.map((p) => (p.type === "text" ? p.text : "")).join("");
                if (text.trim())
                    add({ memory_type: "history", role: "user", content: text });
                break;
            }
            case "assistant": {
                let text = "";
                const calls = [];
                for (const p of m.content) {
                    if (p.type === "text")
                        text += p.text;
                    else if (p.type === "tool-call")
                        calls.push({ id: p.toolCallId, name: p.toolName, arguments: JSON.stringify(p.input ?? {}) });
                }
                if (text.trim() || calls.length)
                    add({ memory_type: "history", role: "assistant", content: text, ...(calls.length ? { tool_calls: calls } : {}) });
                break;
            }
            case "tool":
                for (const p of m.content) {
                    if (p.type !== "tool-result")
                        continue;
                    outputs.set(p.toolCallId, p.output);
                    add({ memory_type: "history", role: "tool", tool_call_id: p.toolCallId, content: outputText(p.output) });
                }
                break;
        }
    }
    for (let i = declarations.length - 1; i >= 0; i--) {
        const d = declarations[i];
        if (d && d.memory_type === "history") {
            d.required = true;
            break;
        }
    }
    return { declarations, outputs };
}
/** A tool result's output as the text a block holds. */
function outputText(o) {
    switch (o.type) {
        case "text":
        case "error-text":
            return o.value || "(empty)";
        case "json":
        case "error-json":
            return JSON.stringify(o.value);
        case "execution-denied":
            return o.reason ?? "execution denied";
        default:
            return JSON.stringify(o);
    }
}
/** The assembled context (an OpenAI body's messages) as the AI SDK's
 * prompt: the system prompt, then the kept messages. */
export function promptOf(messages, outputs) {
    const prompt = [];
    const names = new Map();
    for (const m of messages) {
        const content = typeof m.content === "string" ? m.content : "";
        switch (m.role) {
            case "system":
                prompt.push({ role: "system", content });
                break;
            case "user":
                prompt.push({ role: "user", content: [{ type: "text", text: content }] });
                break;
            case "assistant": {
                const parts = [];
                if (content)
                    parts.push({ type: "text", text: content });
                for (const c of m.tool_calls ?? []) {
                    names.set(c.id, c.function.name);
                    parts.push({ type: "tool-call", toolCallId: c.id, toolName: c.function.name, input: JSON.parse(c.function.arguments) });
                }
                prompt.push({ role: "assistant", content: parts });
                break;
            }
            case "tool": {
                const id = String(m.tool_call_id);
                const original = outputs.get(id);
                const output = original && outputText(original) === content ? original : { type: "text", value: content };
                prompt.push({ role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: names.get(id) ?? "", output }] });
                break;
            }
        }
    }
    return prompt;
}
