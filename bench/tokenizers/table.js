// table.js joins the Go benchmark output and bench.js's JSON into the
// Markdown tables of bench/README.md.
"use strict";
const fs = require("fs");
const [goFile, nodeFile] = process.argv.slice(2);
const goText = fs.readFileSync(goFile, "utf8");
const node = JSON.parse(fs.readFileSync(nodeFile, "utf8"));
const go = {};
for (const line of goText.split("\n")) {
  let m = line.match(/^BenchmarkCount(Ordinary)?\/(\w+)-\d+\s+\d+\s+([\d.]+) ns\/op\s+([\d.]+) MB\/s/);
  if (m) (go[m[2]] ||= {})[m[1] ? "ordinary" : "all"] = Number(m[4]);
  m = line.match(/^BenchmarkLoad\/(\w+)-\d+\s+\d+\s+([\d.]+) ns\/op\s+([\d.]+) heap-MB/);
  if (m) Object.assign((go[m[1]] ||= {}), { load: Number(m[2]) / 1e6, heap: Number(m[3]) });
}
const f1 = (x) => (x === undefined ? "-" : x.toFixed(1));
const f0 = (x) => (x === undefined ? "-" : Math.round(x).toLocaleString("en-US"));
console.log(`texts: ordinary ${node.bytes.ordinary} bytes, all ${node.bytes.all} bytes; node ${node.node}\n`);
console.log("| family | text | Go MB/s | JS MB/s | Rust MB/s | Go ÷ JS | Go ÷ Rust |");
console.log("|---|---|---|---|---|---|---|");
for (const [f, n] of Object.entries(node.families)) {
  const g = go[f] || {};
  for (const k of ["ordinary", "all"]) {
    const js = n.js["mb_per_s_" + k], rs = n.rust["mb_per_s_" + k];
    console.log(`| ${f} | ${k} | ${f1(g[k])} | ${f1(js)} | ${f1(rs)} | ${(g[k] / js).toFixed(1)} | ${(g[k] / rs).toFixed(2)} |`);
  }
}
console.log("\n| family | Go load ms | JS load ms | Rust load ms | Go heap MB | JS heap MB |");
console.log("|---|---|---|---|---|---|");
for (const [f, n] of Object.entries(node.families)) {
  const g = go[f] || {};
  console.log(`| ${f} | ${f0(g.load)} | ${f0(n.js.load_ms)} | ${f0(n.rust.load_ms)} | ${f1(g.heap)} | ${f1(n.js.heap_mb)} |`);
}
