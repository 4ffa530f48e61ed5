// count.mjs counts texts in OpenAI's tiktoken (the npm package: tiktoken's
// Rust core compiled to WebAssembly), the reference internal/bpe's
// differential tests compare against.
//
// Input on stdin, one JSON object per line: {"enc": "o200k_base", "text": "..."}.
// Output on stdout, one line per text: the count, or, with "pieces": true,
// a JSON array of the tokens' byte lengths. Output is written in batches:
// at the end of input, and when a line {"flush": true} arrives.
import { createInterface } from "node:readline";
import { get_encoding } from "tiktoken";

const encodings = new Map();
function encoding(name) {
  let enc = encodings.get(name);
  if (!enc) {
    enc = get_encoding(name);
    encodings.set(name, enc);
  }
  return enc;
}

const out = [];
function flush() {
  if (out.length) {
    process.stdout.write(out.join(""));
    out.length = 0;
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line === "") continue;
  const req = JSON.parse(line);
  if (req.flush) {
    flush();
    continue;
  }
  const enc = encoding(req.enc);
  const toks = enc.encode_ordinary(req.text);
  if (req.pieces) {
    const lens = Array.from(toks, (t) => enc.decode_single_token_bytes(t).length);
    out.push(JSON.stringify(lens) + "\n");
  } else {
    out.push(toks.length + "\n");
  }
  if (out.length >= 256) flush();
}
flush();
