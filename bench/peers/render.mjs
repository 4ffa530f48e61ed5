#!/usr/bin/env node
// Peer renderers for contextasm's benchmark workload.
//
// Reads a workload written by `go run ./bench/genworkload` (template.json in
// contextasm's template format, memories.jsonl in its declaration format),
// mirrors contextasm's eligibility, routing, scoring and ranking in plain
// JavaScript, and renders the eligible blocks with each peer prompt
// renderer under each budget, with the o200k_base encoding. It reports the
// median wall time per render and the token count of each output, checked
// against the budget, as JSON on stdout. See README.md for the mapping.
//
//   node render.mjs -w DIR [--budgets 8192,16384] [--runs 5]
//                   [--peers prompt-tsx,priompt,priompt-isolate]
//                   [--tokenizer native|wasm] [--max-seconds 60] [--out DIR]
//
// Offline once the locked packages are installed (README.md: `npm install
// --no-save --ignore-scripts`; `npm ci` refuses this lockfile).

import { createRequire } from 'node:module';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------- options

const { values: opt } = parseArgs({
  options: {
    workload: { type: 'string', short: 'w' },
    budgets: { type: 'string', default: '' },
    runs: { type: 'string', default: '5' },
    peers: { type: 'string', default: 'prompt-tsx,priompt,priompt-isolate' },
    tokenizer: { type: 'string', default: 'native' },
    'max-seconds': { type: 'string', default: '60' },
    now: { type: 'string', default: '2026-11-30T09:00:00Z' },
    session: { type: 'string', default: 's-bench' },
    user: { type: 'string', default: 'u-bench' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

function usage(code) {
  const w = code === 0 ? process.stdout : process.stderr;
  w.write(`usage: node render.mjs -w WORKLOAD_DIR [--budgets B1,B2] [--runs N]
       [--peers prompt-tsx,priompt,priompt-isolate] [--tokenizer native|wasm]
       [--max-seconds S] [--now RFC3339] [--session ID] [--user ID] [--out DIR]
`);
  process.exit(code);
}
if (opt.help) usage(0);
if (!opt.workload) usage(2);
const RUNS = Number.parseInt(opt.runs, 10);
const MAX_MS = Number(opt['max-seconds']) * 1000;
if (!(RUNS >= 1) || !(MAX_MS > 0)) usage(2);
const PEERS = opt.peers.split(',').filter(Boolean);
for (const p of PEERS) {
  if (!['prompt-tsx', 'priompt', 'priompt-isolate'].includes(p)) {
    process.stderr.write(`render.mjs: unknown peer ${p}\n`);
    usage(2);
  }
}
if (!['native', 'wasm'].includes(opt.tokenizer)) usage(2);
const NOW = Date.parse(opt.now);
if (Number.isNaN(NOW)) usage(2);

// priompt reports timings to a StatsD agent over UDP at load time; keep that
// on the loopback whatever the environment says (nothing listens there).
process.env.DD_AGENT_HOST = '127.0.0.1';

function pkgVersion(name) {
  return JSON.parse(readFileSync(join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
}

// ---------------------------------------------------------------- tokenizer
//
// One o200k_base tokenizer for both peers and for the check of their
// outputs. "native": @anysphere/tiktoken-node, the Rust tiktoken that
// priompt ships with and uses by default (its counts run on a worker thread
// and are asynchronous). "wasm": tiktoken, the WASM build of the same Rust
// code (synchronous). Both count special-token text as ordinary text, as
// contextasm does.

const O200K_NATIVE = 2; // @anysphere/tiktoken-node SupportedEncoding.O200k
let rawCount; // (text) => number | Promise<number>
let tokenizerName;
if (opt.tokenizer === 'native') {
  const tn = require('@anysphere/tiktoken-node');
  const nt = tn.getTokenizer();
  rawCount = (text) => nt.exactNumTokensNoSpecialTokens(text, O200K_NATIVE);
  tokenizerName = `@anysphere/tiktoken-node ${pkgVersion('@anysphere/tiktoken-node')} (native)`;
} else {
  const { get_encoding } = require('tiktoken');
  const enc = get_encoding('o200k_base');
  rawCount = (text) => (text ? enc.encode_ordinary(text).length : 0);
  tokenizerName = `tiktoken ${pkgVersion('tiktoken')} (wasm)`;
}
// The peers count through here, so each render's tokenizer calls and the
// characters they tokenized can be reported (contextasm reports its own).
const calls = { n: 0, chars: 0 };
const count = (text) => {
  calls.n++;
  calls.chars += text.length;
  return rawCount(text);
};

// ---------------------------------------------------------------- workload

const template = JSON.parse(readFileSync(join(opt.workload, 'template.json'), 'utf8'));
const encoding = template.encoding ?? 'o200k_base';
if (encoding !== 'o200k_base') {
  process.stderr.write(`render.mjs: encoding ${encoding}: only o200k_base is wired up\n`);
  process.exit(2);
}
const budgets = (opt.budgets || String(template.budget))
  .split(',').map((s) => Number.parseInt(s, 10));
if (budgets.some((b) => !(b > 0))) usage(2);

// Sections in priority order (ties: file order), as contextasm routes and
// cuts; `position` keeps the file order, in which sections are written.
const sections = template.sections.map((s, position) => ({
  name: s.name,
  priority: s.priority,
  position,
  types: s.memory_types,
  maxTokens: s.max_tokens,
  render: s.render,
  separator: s.separator ?? '\n',
  order: s.order ?? 'rank',
}));
const byPriority = [...sections].sort((a, b) => a.priority - b.priority || a.position - b.position);
byPriority.forEach((s, i) => { s.rankIndex = i; });
const route = new Map();
for (const s of byPriority) {
  for (const t of s.types) if (!route.has(t)) route.set(t, s);
}

const decls = [];
for (const line of readFileSync(join(opt.workload, 'memories.jsonl'), 'utf8').split('\n')) {
  if (line.trim() === '' || line.startsWith('#')) continue;
  decls.push(JSON.parse(line));
}

function parseTime(v) {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'number' ? v * 1000 : Date.parse(v);
}

// Go duration strings ("168h", "1h30m", "90s", "1.5h") or seconds.
function parseDuration(v) {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return v * 1000;
  const unit = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };
  let ms = 0;
  for (const [, n, u] of v.matchAll(/([0-9.]+)(ns|us|µs|ms|s|m|h)/g)) ms += Number(n) * unit[u];
  return ms;
}

// Declarations in the form the mirror needs, parsed once (as contextasm's
// Engine holds its declared blocks).
const blocks = decls.map((d, i) => {
  const validUntil = parseTime(d.valid_until);
  const staleAfter = parseDuration(d.stale_after);
  const lastModified = parseTime(d.last_modified);
  let staleFrom;
  if (staleAfter !== undefined) {
    staleFrom = validUntil !== undefined ? validUntil - staleAfter : lastModified + staleAfter;
  }
  return {
    declared: i,
    id: d.request_id,
    type: d.memory_type,
    scope: d.scope,
    sessionId: d.session_id,
    userId: d.user_id,
    content: d.content,
    weight: d.semantic_weight ?? 0.5,
    trust: d.trust_score ?? 0.5,
    priority: d.priority,
    required: d.required === true || d.priority === 1,
    audience: d.audience,
    roles: d.roles,
    validUntil,
    staleFrom,
    staleAfter,
    lastModified,
    sourceId: d.provenance?.source_id ?? '',
  };
});

// ---------------------------------------------------------------- the mirror
//
// What contextasm does before it counts anything (docs/assembly.md,
// eligibility and the score), so that each peer gets the same eligible blocks, in the
// same sections, with priorities that follow contextasm's ranking:
// eligibility (expired, out_of_scope, access_denied for a request without
// roles, audience, no_section), routing to the most important section that
// takes the type, the default score, rank = required first, score
// descending, request_id ascending, and the section's write order.

function score(b) {
  const p = b.priority ?? 0.5;
  let s = (0.4 * p + 0.35 * b.weight + 0.25 * b.trust) / 1.0;
  if (b.staleFrom !== undefined && NOW >= b.staleFrom) {
    const f = b.staleAfter > 0 ? Math.min((NOW - b.staleFrom) / b.staleAfter, 1) : 1;
    s *= 1 - 0.5 * (1 + f) / 2;
  }
  return s;
}

function compareRank(a, b) {
  if (a.required !== b.required) return a.required ? -1 : 1;
  if (a.score !== b.score) return b.score - a.score;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

// A section's render string, split once into literals and placeholders.
function compileRender(render) {
  const parts = render.split(/\{(content|request_id|memory_type|source_id)\}/);
  const pick = { content: (b) => b.content, request_id: (b) => b.id, memory_type: (b) => b.type, source_id: (b) => b.sourceId };
  return (b) => {
    let out = parts[0];
    for (let i = 1; i < parts.length; i += 2) out += pick[parts[i]](b) + parts[i + 1];
    return out;
  };
}
for (const s of sections) s.renderBlock = compileRender(s.render);

// The header contextasm writes first; the peers write one of the same shape
// that is never dropped, so all outputs spend the budget on the same things.
const HEADER = `[MODEL_CONTEXT_PROTOCOL v${template.template_version ?? '1.2'} | fp:sha256:0000000000000000]\n`;

// prepare returns, per section in file order, its blocks in write order,
// each with its text (rendered block plus separator) and its priority
// inside the section: n for the best-ranked of n blocks, 1 for the worst.
function prepare() {
  const per = new Map(sections.map((s) => [s, []]));
  for (const b of blocks) {
    if (b.validUntil !== undefined && NOW >= b.validUntil) continue; // expired
    if (b.scope === 'session' && b.sessionId !== opt.session) continue; // out_of_scope
    if (b.scope === 'user' && b.userId !== opt.user) continue; // out_of_scope
    if (b.roles && b.roles.length > 0) continue; // access_denied: the request holds no role
    if (b.audience && b.audience.length > 0 && !b.audience.includes('assistant')) continue; // audience
    const s = route.get(b.type);
    if (!s) continue; // no_section
    per.get(s).push({ id: b.id, required: b.required, score: score(b), declared: b.declared, lastModified: b.lastModified, b });
  }
  const out = [];
  for (const s of sections) {
    const list = per.get(s);
    list.sort(compareRank);
    const n = list.length;
    list.forEach((r, i) => { r.prio = n - i; r.text = s.renderBlock(r.b) + s.separator; });
    if (s.order === 'time') {
      // undated first, then last_modified ascending; ties keep rank order
      list.sort((a, b) => (a.lastModified ?? -Infinity) - (b.lastModified ?? -Infinity) || b.prio - a.prio);
    } else if (s.order === 'declared') {
      list.sort((a, b) => a.declared - b.declared);
    }
    out.push({ section: s, blocks: list });
  }
  return out;
}

// ---------------------------------------------------------------- peers

// @vscode/prompt-tsx: the header as a message that outranks everything, then
// one user message per section (in file order) whose priority follows the
// section's priority, holding a <TokenLimit max={max_tokens}> with one
// <TextChunk> per block whose priority follows its rank. prompt-tsx prunes
// each TokenLimit to its cap first, then, over the budget, the lowest-
// priority message's lowest-priority chunk: lowest section and lowest-ranked
// block first, as contextasm cuts. The output is the messages' texts joined.
// (One message for the whole prompt gives the same output about twice as
// slowly: prompt-tsx rebuilds a message's text after each pruning pass, and
// that costs more the longer the message.)
function promptTsxPeer() {
  const tsx = require('@vscode/prompt-tsx');
  const { PromptRenderer, PromptElement, UserMessage, TextChunk, TokenLimit, OutputMode, Raw } = tsx;
  const { vscpp, vscppf } = globalThis; // set by the package's tsx globals
  const TEXT = Raw.ChatCompletionContentPartKind.Text;
  const messageText = (msg) => msg.content.filter((p) => p.type === TEXT).map((p) => p.text).join('');
  // The message's token count is the count of its text: no per-message
  // overhead, so that it is the count of the rendered text itself.
  const tokenizer = {
    mode: OutputMode.Raw,
    tokenLength: (part) => (part.type === TEXT ? count(part.text) : 0),
    countMessageTokens: (msg) => count(messageText(msg)),
  };
  const nSections = byPriority.length;
  return {
    name: 'prompt-tsx',
    version: pkgVersion('@vscode/prompt-tsx'),
    caps: true,
    async render(prepared, budget) {
      class Root extends PromptElement {
        render() {
          return vscpp(vscppf, null,
            vscpp(UserMessage, { priority: nSections + 1 }, vscpp(TextChunk, null, HEADER)),
            ...prepared.map(({ section, blocks: list }) => vscpp(UserMessage,
              { priority: nSections - section.rankIndex },
              vscpp(TokenLimit, { max: section.maxTokens },
                ...list.map((r) => vscpp(TextChunk, { priority: r.prio }, r.text))))));
        }
      }
      const renderer = new PromptRenderer({ modelMaxPromptTokens: budget }, Root, {}, tokenizer);
      const res = await renderer.renderRaw();
      return { text: res.messages.map(messageText).join(''), reported: res.tokenCount };
    },
  };
}

// priompt: one <scope p={...}> per block, with an absolute priority whose
// high part is the section's and low part the block's rank, so that the
// budget drops the lowest section's lowest-ranked blocks first. priompt has
// no per-section cap short of <isolate>: this peer applies the overall
// budget only.
//
// priompt-isolate: each section an <isolate tokenLimit={max_tokens}>, its
// blocks scoped by rank inside; priompt renders each isolate on its own
// under its cap, then treats it as one unit of the section's priority, so
// the budget drops whole sections (lowest first), not blocks.
function priomptPeer(isolate) {
  const pr = require('@impowering/priompt');
  const tk = require('@impowering/priompt/dist/tokenizer');
  // priompt's own O200K tokenizer (@anysphere/tiktoken-node) counts
  // through `numTokens`; route that through `count`, which is the same
  // native call under --tokenizer native and the WASM one under wasm.
  const tokenizer = { ...tk.O200K, numTokens: async (t) => count(t) };
  if (opt.tokenizer !== 'native') {
    const { get_encoding } = require('tiktoken');
    const enc = get_encoding('o200k_base');
    tokenizer.encodeTokens = async (t) => Array.from(enc.encode_ordinary(t));
    tokenizer.decodeTokens = async (toks) => new TextDecoder().decode(enc.decode(Uint32Array.from(toks)));
  }
  const el = pr.createElement;
  const nSections = byPriority.length;
  return {
    name: isolate ? 'priompt-isolate' : 'priompt',
    version: pkgVersion('@impowering/priompt'),
    caps: isolate,
    async render(prepared, budget) {
      // Stride: more than any section's block count, so sections never mix.
      const stride = Math.max(1, ...prepared.map((p) => p.blocks.length)) + 1;
      const children = [HEADER]; // unscoped: always kept
      for (const { section, blocks: list } of prepared) {
        const sp = (nSections - section.rankIndex) * stride;
        if (isolate) {
          children.push(el('isolate', { tokenLimit: section.maxTokens, p: sp },
            ...list.map((r) => el('scope', { p: r.prio }, r.text))));
        } else {
          for (const r of list) children.push(el('scope', { p: sp + r.prio }, r.text));
        }
      }
      const res = await pr.render(el('scope', null, ...children), { tokenLimit: budget, tokenizer });
      return { text: pr.promptGetText(res.prompt) ?? '', reported: res.tokenCount };
    },
  };
}

// ---------------------------------------------------------------- measure

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round = (x) => Math.round(x * 100) / 100;

// What survived: blocks appear in the output in tree order, so one pass
// with a cursor finds them. Runs after timing.
async function inspect(prepared, text) {
  let at = text.startsWith(HEADER) ? HEADER.length : 0;
  const out = {};
  let kept = 0;
  for (const { section, blocks: list } of prepared) {
    let sectionText = '';
    let n = 0;
    for (const r of list) {
      if (text.startsWith(r.text, at)) {
        at += r.text.length;
        sectionText += r.text;
        n++;
      }
    }
    kept += n;
    const tokens = await count(sectionText.endsWith(section.separator)
      ? sectionText.slice(0, sectionText.length - section.separator.length) : sectionText);
    out[section.name] = { kept: n, eligible: list.length, tokens, max_tokens: section.maxTokens };
  }
  return { kept, sections: out, accounted: at === text.length };
}

const peers = PEERS.map((p) => (p === 'prompt-tsx' ? promptTsxPeer() : priomptPeer(p === 'priompt-isolate')));
const eligible = prepare().reduce((n, p) => n + p.blocks.length, 0);
const results = [];
for (const peer of peers) {
  for (const budget of budgets) {
    const one = async () => {
      calls.n = 0;
      calls.chars = 0;
      const t0 = performance.now();
      const prepared = prepare();
      const t1 = performance.now();
      const out = await peer.render(prepared, budget);
      const t2 = performance.now();
      return { prepared, out, prepMs: t1 - t0, ms: t2 - t0, calls: calls.n, chars: calls.chars };
    };
    // One warm-up (JIT, tokenizer start-up), then --runs renders, stopping
    // early once --max-seconds have gone by. A warm-up that alone takes
    // longer than that is the one measurement: JIT warm-up is noise next to
    // it, and a slow peer keeps the whole comparison bounded.
    const warm = await one();
    const times = [];
    const prep = [];
    let last = warm;
    const warmupOnly = warm.ms > MAX_MS;
    if (warmupOnly) {
      times.push(warm.ms);
      prep.push(warm.prepMs);
    } else {
      const started = performance.now();
      for (let i = 0; i < RUNS; i++) {
        last = await one();
        times.push(last.ms);
        prep.push(last.prepMs);
        if (performance.now() - started > MAX_MS) break;
      }
    }
    const { text, reported } = last.out;
    const { calls: tokenizerCalls, chars: tokenizedChars } = last;
    const tokens = await count(text);
    const seen = await inspect(last.prepared, text);
    let file;
    if (opt.out) {
      mkdirSync(opt.out, { recursive: true });
      file = join(opt.out, `${peer.name}-${budget}.txt`);
      writeFileSync(file, text);
    }
    const r = {
      peer: peer.name,
      version: peer.version,
      budget,
      ms: round(median(times)),
      min_ms: round(Math.min(...times)),
      max_ms: round(Math.max(...times)),
      prep_ms: round(median(prep)),
      warmup_ms: round(warm.ms),
      tokenizer_calls: tokenizerCalls,
      tokenized_chars: tokenizedChars,
      runs: times.length,
      warmup_only: warmupOnly,
      tokens,
      reported_tokens: reported,
      within_budget: tokens <= budget,
      caps: peer.caps,
      caps_honoured: Object.values(seen.sections).every((s) => s.tokens <= s.max_tokens),
      kept: seen.kept,
      eligible,
      all_text_accounted: seen.accounted,
      sections: seen.sections,
      bytes: Buffer.byteLength(text),
      ...(file ? { file } : {}),
    };
    results.push(r);
    process.stderr.write(`render.mjs: ${peer.name} budget ${budget}: ${r.ms} ms (median of ${r.runs}), ${tokens} tokens, ${r.kept}/${eligible} blocks\n`);
  }
}

process.stdout.write(JSON.stringify({
  encoding,
  tokenizer: tokenizerName,
  node: process.version,
  workload: opt.workload,
  blocks: blocks.length,
  eligible,
  runs: RUNS,
  now: new Date(NOW).toISOString(),
  results,
}, null, 2) + '\n');
process.exit(0); // priompt's StatsD client would keep the loop alive
