// dist/ is committed, so that `npm install ./clients/typescript` works
// from the repository without a build; it must be what src/ compiles to.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";

import { pkg } from "./server.js";

it("dist/ is src/ compiled", () => {
  const out = join(pkg, ".check-dist");
  rmSync(out, { recursive: true, force: true });
  const tsc = spawnSync(process.execPath, [join(pkg, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json", "--outDir", out],
    { cwd: pkg, encoding: "utf8" });
  assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
  const built = readdirSync(out).sort();
  assert.deepEqual(readdirSync(join(pkg, "dist")).sort(), built, "dist/ holds other files: npm run build");
  for (const f of built) {
    assert.equal(readFileSync(join(pkg, "dist", f), "utf8"), readFileSync(join(out, f), "utf8"), `dist/${f} is stale: npm run build`);
  }
  rmSync(out, { recursive: true, force: true });
});
