// table.js joins the Go benchmark output and bench.js's JSON into the
// Markdown table of bench/README.md.
"use strict";
const fs = require("fs");
const [goFile, nodeFile] = process.argv.slice(2);
const goText = fs.readFileSync(goFile, "utf8");
const node = JSON.parse(fs.readFileSync(nodeFile, "utf8"));
const go = {};
for (const line of goText.split("\n")) {
  let m = line.match(/^BenchmarkCount\/(\w+)-\d+\s+\d+\s+([\d.]+) ns\/op\s+([\d.]+) MB\/s/);
  if (m) (go[m[1]] ||= {}).rate = Number(m[3]);
  m = line.match(/^BenchmarkLoad\/(\w+)-\d+\s+\d+\s+([\d.]+) ns\/op\s+([\d.]+) heap-MB/);
  if (m) Object.assign((go[m[1]] ||= {}), { load: Number(m[2]) / 1e6, heap: Number(m[3]) });
}
const f1 = (x) => x.toFixed(1);
const f0 = (x) => Math.round(x).toLocaleString("en-US");
console.log(`corpus: ${node.bytes} bytes; node ${node.node}\n`);
console.log("| family | Go MB/s | JS MB/s | Rust MB/s | Go ÷ JS | Go load ms | JS load ms | Rust load ms | Go heap MB | JS heap MB |");
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const [f, n] of Object.entries(node.families)) {
  const g = go[f] || {};
  console.log(`| ${f} | ${f1(g.rate)} | ${f1(n.js.mb_per_s)} | ${f1(n.rust.mb_per_s)} | ${(g.rate / n.js.mb_per_s).toFixed(2)} | ${f0(g.load)} | ${f0(n.js.load_ms)} | ${f0(n.rust.load_ms)} | ${f1(g.heap)} | ${f1(n.js.heap_mb)} |`);
}
