// The middleware with the real `ai` package: generateText and streamText
// over wrapLanguageModel and the package's MockLanguageModelV3, against
// the real server. The mock sees what a provider would be sent: the
// assembled context, not the host's prompt.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";

import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3, convertArrayToReadableStream } from "ai/test";
import { z } from "zod";

import { contextasmMiddleware } from "../src/ai-sdk.js";
import { Client, type FeedbackResponse } from "../src/index.js";
import { binary, keys, startServer, type Served } from "./server.js";

const bin = binary();

type Prompt = MockLanguageModelV3["doGenerateCalls"][number]["prompt"];

const usage = (input: number, cacheRead: number) => ({
  inputTokens: { total: input, noCache: input - cacheRead, cacheRead, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: undefined },
});

describe("AI SDK middleware", { skip: bin === undefined }, () => {
  let server: Served;
  before(async () => { server = await startServer(bin!); });
  after(async () => { assert.equal(await server.stop(), 0); });

  it("runs a tool-using conversation through the server", async () => {
    const session = `ai-${randomUUID().slice(0, 8)}`;
    const client = new Client({ baseUrl: server.url, apiKey: keys.support });
    await client.declare([{ request_id: `kb/${session}/policy`, memory_type: "external", scope: "session", session_id: session,
      provenance: { uri: `kb://${session}/policy` }, content: "Full refund within 30 days of delivery." }]);
    const seen: Prompt[] = [];
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        seen.push(options.prompt);
        if (seen.length === 1) {
          return { content: [{ type: "tool-call", toolCallId: "call_1", toolName: "get_order", input: '{"order":"A-17"}' }],
            finishReason: { unified: "tool-calls", raw: undefined }, usage: usage(200, 0), warnings: [] };
        }
        return { content: [{ type: "text", text: "Delivered on 2026-11-20: you can return it for a full refund." },
          { type: "source", sourceType: "url", id: "s1", url: `kb://${session}/policy` }],
          finishReason: { unified: "stop", raw: undefined }, usage: usage(260, 128), warnings: [] };
      },
    });
    const feedbacks: FeedbackResponse[] = [];
    const wrapped = wrapLanguageModel({ model, middleware: contextasmMiddleware({ client, template: "support", session,
      onFeedback: (fb) => feedbacks.push(fb) }) });
    const result = await generateText({
      model: wrapped,
      system: "You are a support agent.",
      prompt: "Where is my order A-17, and can I return it?",
      tools: { get_order: tool({ inputSchema: z.object({ order: z.string() }),
        execute: async ({ order }) => ({ order, delivered: "2026-11-20", amount_eur: 80 }) }) },
      stopWhen: stepCountIs(3),
    });
    assert.equal(result.text, "Delivered on 2026-11-20: you can return it for a full refund.");
    assert.equal(seen.length, 2);
    // The model saw the assembled context: the template's header and the
    // declared policy in the system prompt, the host's system text in it.
    for (const prompt of seen) {
      const system = prompt[0];
      assert.equal(system?.role, "system");
      assert.ok(system?.role === "system" && system.content.startsWith("[MODEL_CONTEXT_PROTOCOL v1.2"), JSON.stringify(system));
      assert.ok(system?.role === "system" && system.content.includes("Full refund within 30 days"));
      assert.ok(system?.role === "system" && system.content.includes("You are a support agent."));
    }
    // The second call: the tool call and its result, as the SDK had them.
    const second = seen[1]!;
    assert.deepEqual(second.slice(1).map((m) => m.role), ["user", "assistant", "tool"]);
    const toolMsg = second[3];
    assert.ok(toolMsg?.role === "tool");
    const part = toolMsg.content[0];
    assert.ok(part?.type === "tool-result" && part.toolName === "get_order" && part.output.type === "json", JSON.stringify(part));
    // Both replies fed back; the cited source moved trust.
    assert.equal(feedbacks.length, 2);
    assert.deepEqual(feedbacks[1]!.trust_changes.map((t) => t.request_id), [`kb/${session}/policy`]);
  });

  it("feeds a streamed answer back when the stream ends", async () => {
    const session = `st-${randomUUID().slice(0, 8)}`;
    const client = new Client({ baseUrl: server.url, apiKey: keys.support });
    await client.declare([{ request_id: `kb/${session}/policy`, memory_type: "external", scope: "session", session_id: session,
      content: "Full refund within 30 days." }]);
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: convertArrayToReadableStream([
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: `<memory_ref id="kb/${session}/policy"/> ` },
          { type: "text-delta", id: "t", delta: "Yes, within 30 days." },
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage: usage(100, 0) },
        ]),
      }),
    });
    const feedbacks: FeedbackResponse[] = [];
    const result = streamText({ model: wrapLanguageModel({ model, middleware: contextasmMiddleware({ client, template: "support",
      onFeedback: (fb) => feedbacks.push(fb) }) }), prompt: "Can I return it?", providerOptions: { contextasm: { session } } });
    assert.equal(await result.text, `<memory_ref id="kb/${session}/policy"/> Yes, within 30 days.`);
    assert.equal(feedbacks.length, 1);
    assert.deepEqual(feedbacks[0]!.refs.map((r) => r.request_id), [`kb/${session}/policy`]);
  });

  it("gives the server a retriever's scores for each call", async () => {
    const session = `rel-${randomUUID().slice(0, 8)}`;
    const policy = `kb/${session}/policy`;
    const client = new Client({ baseUrl: server.url, apiKey: keys.support });
    await client.declare([{ request_id: policy, memory_type: "external", scope: "session", session_id: session,
      content: "Full refund within 30 days." }]);
    const model = new MockLanguageModelV3({ doGenerate: async () => ({ content: [{ type: "text", text: "Yes." }],
      finishReason: { unified: "stop", raw: undefined }, usage: usage(50, 0), warnings: [] }) });
    const ids: string[] = [];
    const asked: string[] = [];
    await generateText({ model: wrapLanguageModel({ model, middleware: contextasmMiddleware({ client, template: "support", session,
      relevance: async (params) => {
        const last = params.prompt.at(-1);
        asked.push(last?.role === "user" && last.content[0]?.type === "text" ? last.content[0].text : "");
        return { [policy]: 0.9 };
      },
      onFeedback: (_fb, id) => ids.push(id) }) }), prompt: "Can I return it?" });
    assert.deepEqual(asked, ["Can I return it?"]);
    const dump = (await client.assembly(ids[0]!)).dump;
    assert.equal(dump.query?.from, "host");
    assert.equal(dump.sections.flatMap((s) => s.blocks).find((b) => b.request_id === policy)?.relevance, 0.9);
  });
});
