// The README's example runs against the real server, and the package
// installs from the repository into a project of its own.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { binary, keys, pkg, startServer, type Served } from "./server.js";

const bin = binary();

describe("example", { skip: bin === undefined }, () => {
  let server: Served;
  before(async () => { server = await startServer(bin!); });
  after(async () => { assert.equal(await server.stop(), 0); });

  it("runs", () => {
    const run = spawnSync(process.execPath, [join(pkg, "examples", "quickstart.mjs")], { cwd: pkg, encoding: "utf8",
      env: { ...process.env, CONTEXTASM_URL: server.url, CONTEXTASM_API_KEY: keys.support } });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /trust of refund-policy: 0\.50 -> 0\.55/);
    assert.match(run.stdout, /refundable\./);
  });
});

it("installs with npm install ./clients/typescript", () => {
  const dir = mkdtempSync(join(tmpdir(), "contextasm-install-"));
  try {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "host", version: "1.0.0", type: "module", private: true }));
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const inst = spawnSync(npm, ["install", "--offline", "--no-audit", "--no-fund", pkg], { cwd: dir, encoding: "utf8" });
    assert.equal(inst.status, 0, inst.stdout + inst.stderr);
    writeFileSync(join(dir, "main.mjs"), 'import { Client, DEFAULT_URL } from "contextasm"; import { contextasmMiddleware } from "contextasm/ai-sdk";\n' +
      'const m = contextasmMiddleware({ client: new Client(), template: "t", session: "s" });\n' +
      'console.log(DEFAULT_URL, m.specificationVersion, typeof m.transformParams);\n');
    const run = spawnSync(process.execPath, ["main.mjs"], { cwd: dir, encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), "http://127.0.0.1:7411 v3 function");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
