// A tool-using conversation through a local contextasm serve, with the
// Vercel AI SDK.
//
//   contextasm serve --templates DIR &      # loopback; DIR holds support.json
//   node examples/quickstart.mjs            # CONTEXTASM_URL, CONTEXTASM_API_KEY, CONTEXTASM_TEMPLATE to point elsewhere
//
// The model is the AI SDK's MockLanguageModelV3 standing in for a
// provider's (openai("gpt-5.5"), anthropic("claude-sonnet-4-5")), so the
// example runs without an API key: it calls get_order, then answers.

import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

import { Client } from "contextasm";
import { contextasmMiddleware } from "contextasm/ai-sdk";

const client = new Client({ baseUrl: process.env.CONTEXTASM_URL, apiKey: process.env.CONTEXTASM_API_KEY });
const session = `demo-${Date.now()}`;
await client.declare([{ request_id: "refund-policy", memory_type: "external", scope: "global",
  content: "Full refund within 30 days of delivery." }]);

const usage = { inputTokens: { total: 300, noCache: 300, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 20, text: 20, reasoning: undefined } };
const provider = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => prompt.at(-1).role === "tool"
    ? { content: [{ type: "text", text: '<memory_ref id="refund-policy"/> Delivered 2026-11-20: refundable.' }],
        finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] }
    : { content: [{ type: "tool-call", toolCallId: "call_1", toolName: "get_order", input: '{"order":"A-17"}' }],
        finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] },
});

const model = wrapLanguageModel({
  model: provider,
  middleware: contextasmMiddleware({ client, template: process.env.CONTEXTASM_TEMPLATE ?? "support", session,
    onFeedback: (fb) => fb.trust_changes.forEach((c) => console.log(`trust of ${c.request_id}: ${c.from.toFixed(2)} -> ${c.to.toFixed(2)}`)) }),
});
const { text } = await generateText({
  model,
  system: 'You are a support agent. Cite with <memory_ref id="..."/>.',
  prompt: "My order A-17 arrived broken. Can I get a refund?",
  tools: { get_order: tool({ inputSchema: z.object({ order: z.string() }), execute: async ({ order }) => ({ order, delivered: "2026-11-20" }) }) },
  stopWhen: stepCountIs(4),
});
console.log(text);
await client.endSession(session);
