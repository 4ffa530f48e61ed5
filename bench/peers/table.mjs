#!/usr/bin/env node
// Prints the side-by-side table of contextasm against the peer renderers,
// from the JSON of `contextasm bench --format json` (one file per workload
// size), the JSON of render.mjs (any number of files), and the token counts
// of the peers' outputs by contextasm's own tokenizer (the output of
// `go run ./bench/peers/count FILE...`). run.sh calls it; it can be run by
// hand on kept files:
//
//   node table.mjs --contextasm ca-2000.json --peers peers-2000-priompt.json \
//                  --counts counts.tsv [--json merged.json]
//
// Ratios are peer ms / contextasm ms: above 1, contextasm is faster.
// Exits 1 when a peer's output is over its budget or its count disagrees
// with contextasm's tokenizer (the table is printed first).

import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    contextasm: { type: 'string', multiple: true, default: [] },
    peers: { type: 'string', multiple: true, default: [] },
    counts: { type: 'string', multiple: true, default: [] },
    json: { type: 'string' },
  },
});

const read = (f) => JSON.parse(readFileSync(f, 'utf8'));

// contextasm bench: {"encoding","blocks","runs","results":[{"budget",
// "total_tokens","kept","cut","dropped","cold_ms","warm_ms","turn_ms",...}]}
// kept/cut/dropped are counts; per-section objects or lists are summed.
const total = (v) => {
  if (typeof v === 'number') return v;
  if (Array.isArray(v)) return v.reduce((n, x) => n + total(x), 0);
  if (v && typeof v === 'object') return Object.values(v).reduce((n, x) => n + total(x), 0);
  return undefined;
};
const ca = new Map(); // `${blocks}/${budget}` -> row
const caRuns = new Map();
for (const f of opt.contextasm) {
  const d = read(f);
  if (typeof d.blocks !== 'number' || !Array.isArray(d.results)) {
    throw new Error(`${f}: not the JSON of contextasm bench (want blocks and results)`);
  }
  caRuns.set(d.blocks, d.runs);
  for (const r of d.results) ca.set(`${d.blocks}/${r.budget}`, { ...r, encoding: d.encoding });
}

// go run ./bench/peers/count FILE...: "count<TAB>file" a line.
const goCount = new Map();
for (const f of opt.counts) {
  for (const line of readFileSync(f, 'utf8').split('\n')) {
    const m = /^(\d+)\t(.*)$/.exec(line);
    if (m) goCount.set(m[2], Number(m[1]));
  }
}

const peerRows = [];
let tokenizer;
for (const f of opt.peers) {
  const d = read(f);
  tokenizer ??= d.tokenizer;
  for (const r of d.results) peerRows.push({ ...r, blocks: d.blocks, eligible: d.eligible });
}

const num = (x) => (x === undefined || x === null ? '-' : x.toLocaleString('en-US'));
const ms = (x) => (typeof x === 'number' ? x.toFixed(x < 10 ? 2 : 1) : '-');
const ratio = (a, b) => {
  if (typeof a !== 'number' || typeof b !== 'number' || b <= 0) return '-';
  const r = a / b;
  return r >= 100 ? Math.round(r).toLocaleString('en-US') : r.toFixed(r >= 10 ? 1 : 2);
};
const pad = (s, n) => String(s).padStart(n);
const padEnd = (s, n) => String(s).padEnd(n);

let failed = false;
const merged = [];
const keys = [...new Set(peerRows.map((r) => `${r.blocks}/${r.budget}`).concat([...ca.keys()]))]
  .sort((a, b) => {
    const [xa, ya] = a.split('/').map(Number);
    const [xb, yb] = b.split('/').map(Number);
    return xa - xb || ya - yb;
  });
const out = [];
out.push('Peer ms / contextasm ms (above 1: contextasm is faster). cold = fresh token cache,');
out.push('warm = nothing changed, turn = one history block added; peers: median per render,');
out.push('no cache across renders. check: peer output <= budget and its count = contextasm\'s tokenizer.');
if (tokenizer) out.push(`Peers' tokenizer: ${tokenizer}.`);
for (const key of keys) {
  const [blocks, budget] = key.split('/').map(Number);
  const c = ca.get(key);
  const rows = peerRows.filter((r) => r.blocks === blocks && r.budget === budget);
  out.push('');
  out.push(`${num(blocks)} blocks, budget ${num(budget)} -- contextasm: ` + (c
    ? `${num(c.total_tokens)} tokens, ${num(total(c.kept))} kept + ${num(total(c.cut))} cut, ` +
      `cold ${ms(c.cold_ms)} ms, warm ${ms(c.warm_ms)} ms, turn ${ms(c.turn_ms)} ms` +
      (caRuns.get(blocks) ? ` (median of ${caRuns.get(blocks)})` : '')
    : 'no result'));
  if (rows.length === 0) continue;
  out.push(`  ${padEnd('peer', 16)}${pad('ms', 10)}${pad('runs', 6)}${pad('tokens', 9)}${pad('blocks', 8)}  ${padEnd('check', 8)}${pad('/cold', 8)}${pad('/warm', 9)}${pad('/turn', 9)}`);
  for (const r of rows) {
    const g = r.file !== undefined ? goCount.get(r.file) : undefined;
    let check = 'ok';
    if (!r.within_budget) check = 'OVER';
    else if (g === undefined) check = 'no-go';
    else if (g !== r.tokens) check = `go=${g}`;
    if (check !== 'ok') failed = true;
    out.push(`  ${padEnd(r.peer, 16)}${pad(ms(r.ms), 10)}${pad(r.runs, 6)}${pad(num(r.tokens), 9)}${pad(num(r.kept), 8)}  ${padEnd(check, 8)}` +
      `${pad(ratio(r.ms, c?.cold_ms), 8)}${pad(ratio(r.ms, c?.warm_ms), 9)}${pad(ratio(r.ms, c?.turn_ms), 9)}`);
    merged.push({
      blocks, budget, peer: r.peer, version: r.version, peer_ms: r.ms, peer_runs: r.runs,
      peer_tokens: r.tokens, go_count: g, check, kept: r.kept, caps: r.caps,
      contextasm: c ? { total_tokens: c.total_tokens, cold_ms: c.cold_ms, warm_ms: c.warm_ms, turn_ms: c.turn_ms } : null,
      ratio_cold: c ? r.ms / c.cold_ms : null,
      ratio_warm: c ? r.ms / c.warm_ms : null,
      ratio_turn: c ? r.ms / c.turn_ms : null,
    });
  }
}
process.stdout.write(out.join('\n') + '\n');
if (opt.json) writeFileSync(opt.json, JSON.stringify(merged, null, 2) + '\n');
process.exit(failed ? 1 : 0);
