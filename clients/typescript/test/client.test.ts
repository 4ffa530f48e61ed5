// The client against the real server: every call, its errors, and a
// tenant's isolation.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";

import { Client, ContextasmError, type Declaration } from "../src/index.js";
import { binary, keys, startServer, type Served } from "./server.js";

const NOW = "2026-11-30T09:00:00Z";
const bin = binary();

function memory(session: string): Declaration[] {
  return [
    { request_id: `${session}/rule`, memory_type: "constraint", scope: "session", session_id: session, required: true,
      content: 'Cite what you use with <memory_ref id="..."/>.' },
    { request_id: `${session}/refunds`, memory_type: "constraint", scope: "session", session_id: session, roles: ["support"],
      content: "Refunds above EUR 100 need a supervisor." },
    { request_id: `${session}/audit`, memory_type: "constraint", scope: "session", session_id: session, roles: ["auditor"],
      content: "Auditors see every refund decision." },
    { request_id: `${session}/policy`, memory_type: "external", scope: "session", session_id: session,
      provenance: { uri: "kb://refund-policy" }, content: "Full refund within 30 days." },
  ];
}

async function rejects(p: Promise<unknown>, status: number, code: string, field?: string): Promise<ContextasmError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ContextasmError, String(e));
    assert.equal(e.status, status, e.message);
    assert.equal(e.code, code, e.message);
    if (field !== undefined) assert.equal(e.field, field);
    return e;
  }
  assert.fail(`resolved, want ${status} ${code}`);
}

describe("client", { skip: bin === undefined }, () => {
  let server: Served;
  before(async () => { server = await startServer(bin!); });
  after(async () => { assert.equal(await server.stop(), 0); });

  it("declares, assembles, feeds back once", async () => {
    const s = `s-${randomUUID().slice(0, 8)}`;
    const c = new Client({ baseUrl: server.url, apiKey: keys.support });
    assert.deepEqual(await c.healthz(), { status: "ok" });
    assert.equal((await c.declare(memory(s))).declared, 4);
    const out = await c.assemble({ template: "support", session: s, now: NOW, blocks: true });
    const ids = out.blocks!.map((b) => b.request_id);
    assert.ok(ids.includes(`${s}/refunds`) && !ids.includes(`${s}/audit`), String(ids));
    assert.deepEqual(out.roles, ["support"]);
    const fb = await c.feedback(out.assembly_id, "A full refund.", { cited: [{ id: "kb://refund-policy", offset: 0 }],
      usage: { input_tokens: 120, cached_tokens: 64 } });
    assert.deepEqual(fb.trust_changes.map((t) => t.request_id), [`${s}/policy`]);
    await rejects(c.feedback(out.assembly_id, "again"), 409, "already_fed_back", "assembly_id");
    const got = await c.assembly(out.assembly_id);
    assert.equal(got.fed_back, true);
    assert.equal(got.dump.text, out.text);
    const end = await c.endSession(s);
    assert.equal(end.blocks, 4);
    assert.equal(end.assemblies, 1);
  });

  it("assembles chat bodies", async () => {
    const s = `chat-${randomUUID().slice(0, 8)}`;
    const c = new Client({ baseUrl: server.url, apiKey: keys.support });
    await c.declare([...memory(s), { request_id: `${s}/t1`, memory_type: "history", scope: "session", session_id: s,
      content: "Can I get a refund?", last_modified: "2026-11-30T08:59:00Z" }]);
    const o = await c.assemble({ template: "support", session: s, now: NOW, format: "openai" });
    const msgs = o.body!.messages!;
    assert.equal(msgs[0]?.role, "system");
    assert.deepEqual(msgs.at(-1), { role: "user", content: "Can I get a refund?" });
    const a = await c.assemble({ template: "support", session: s, now: NOW, format: "anthropic" });
    assert.ok(Array.isArray(a.body!.system));
    const r = await c.assemble({ template: "support", session: s, now: NOW, format: "responses" });
    assert.equal(typeof r.body!.instructions, "string");
    assert.deepEqual(r.body!.input!.at(-1), { type: "message", role: "user", content: "Can I get a refund?" });
  });

  it("assembles about a query or the host's scores", async () => {
    const s = `q-${randomUUID().slice(0, 8)}`;
    const policy = `${s}/policy`;
    const c = new Client({ baseUrl: server.url, apiKey: keys.support });
    await c.declare(memory(s));
    const byText = await c.assemble({ template: "support", session: s, now: NOW, fresh: true, dump: true, query: "refund within 30 days" });
    assert.equal(byText.dump?.query?.from, "request");
    assert.ok(!JSON.stringify(byText.dump?.query).includes("refund within"), "the dump names the query's text");
    const scored = await c.assemble({ template: "support", session: s, now: NOW, fresh: true, dump: true, relevance: { [policy]: 0.75 } });
    assert.equal(scored.dump?.query?.from, "host");
    assert.equal(scored.dump?.query?.scores, 1);
    const row = scored.dump!.sections.flatMap((sec) => sec.blocks).find((b) => b.request_id === policy);
    assert.equal(row?.relevance, 0.75);
    const none = await c.assemble({ template: "support", session: s, now: NOW, fresh: true, dump: true, no_query: true });
    assert.equal(none.dump?.query, undefined);
    await rejects(c.assemble({ template: "support", session: s, now: NOW, relevance: { [policy]: 1.5 } }), 400, "invalid_request", `relevance.${policy}`);
    await rejects(c.assemble({ template: "support", session: s, now: NOW, query: "x", no_query: true }), 400, "invalid_request", "no_query");
  });

  it("forgets and counts", async () => {
    const s = `f-${randomUUID().slice(0, 8)}`;
    const c = new Client({ baseUrl: server.url, apiKey: keys.support });
    await c.declare(memory(s));
    assert.equal((await c.forget(`${s}/rule`)).forgotten, 1);
    await rejects(c.forget(`${s}/rule`), 404, "not_found");
    assert.equal((await c.forgetPrefix(`${s}/`)).forgotten, 3);
    assert.equal((await c.count({ text: "hello world" })).tokens, 2);
    assert.deepEqual((await c.count({ texts: ["hello world", "a b c"], encoding: "cl100k_base" })).counts, [2, 3]);
  });

  it("names the field at fault", async () => {
    const c = new Client({ baseUrl: server.url, apiKey: keys.support });
    const e = await rejects(c.declare([{ request_id: "ok", memory_type: "context", scope: "global", content: "x" },
      { request_id: "bad", memory_type: "context", scope: "session", content: "x" }]), 400, "invalid_declarations", "declarations[1].session_id");
    assert.equal(e.problems[0]?.index, 1);
    await rejects(c.assemble({ template: "support", roles: ["auditor"] }), 403, "role_not_allowed", "roles[0]");
    await rejects(c.assemble({ template: "nope" }), 400, "unknown_template", "template");
    await rejects(new Client({ baseUrl: server.url, apiKey: "not-a-key-at-all" }).count({ text: "x" }), 401, "unauthorized");
  });

  it("keeps tenants apart", async () => {
    const s = `t-${randomUUID().slice(0, 8)}`;
    const acme = new Client({ baseUrl: server.url, apiKey: keys.support });
    const beta = new Client({ baseUrl: server.url, apiKey: keys.other });
    await acme.declare(memory(s));
    const out = await acme.assemble({ template: "support", session: s, now: NOW });
    await rejects(beta.assembly(out.assembly_id), 404, "not_found");
    await rejects(beta.forget(`${s}/rule`), 404, "not_found");
    await rejects(beta.endSession(s), 404, "not_found");
    await rejects(beta.feedback(out.assembly_id, "x"), 404, "not_found");
    assert.equal((await beta.forgetPrefix(`${s}/`)).forgotten, 0);
    assert.equal((await acme.assembly(out.assembly_id)).fed_back, false);
  });
});
