// Starts the real server for a test file: `contextasm serve` on a free
// loopback port, the binary from CONTEXTASM_BIN or built from the
// repository with go (once, into build-test/). Without either the tests
// are skipped, loudly; under CI=true they fail.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url)); // build-test/test
export const pkg = resolve(here, "../..");
export const root = resolve(pkg, "../..");
export const templates = join(pkg, "test", "testdata", "templates");

export const keys = { support: "ts-support-key-00001", all: "ts-everything-key-002", other: "ts-other-tenant-key03" };
const keysDoc = JSON.stringify({ keys: [
  { key: keys.support, tenant: "acme", roles: ["support"] },
  { key: keys.all, tenant: "acme", roles: ["*"] },
  { key: keys.other, tenant: "beta", roles: ["support"] },
] });

/** The server binary, or undefined (the caller skips) outside CI. */
export function binary(): string | undefined {
  if (process.env.CONTEXTASM_BIN) return process.env.CONTEXTASM_BIN;
  const out = join(pkg, "build-test", "contextasm");
  if (existsSync(out)) return out;
  const go = spawnSync("go", ["build", "-o", out, "./cmd/contextasm"], { cwd: root, stdio: "inherit" });
  if (go.error || go.status !== 0) {
    const msg = "neither CONTEXTASM_BIN nor go: the client's tests need the real server";
    if (process.env.CI === "true") throw new Error(msg);
    console.error(`\n*** ${msg}: SKIPPED ***`);
    return undefined;
  }
  return out;
}

export interface Served {
  url: string;
  proc: ChildProcess;
  stop(): Promise<number | null>;
}

/** Starts serve with the tests' keys and templates; extra flags after. */
export async function startServer(bin: string, ...args: string[]): Promise<Served> {
  const proc = spawn(bin, ["serve", "--listen", "127.0.0.1:0", "--templates", templates, ...args],
    { env: { ...process.env, CONTEXTASM_KEYS: keysDoc }, stdio: ["ignore", "ignore", "pipe"] });
  const lines = createInterface({ input: proc.stderr! });
  const url = await new Promise<string>((ok, fail) => {
    lines.on("line", (l) => {
      const m = /listening on (\S+)/.exec(l);
      if (m?.[1]) ok(m[1]);
    });
    proc.on("exit", (code) => fail(new Error(`serve exited with ${code} before listening`)));
  });
  return {
    url, proc,
    stop: () => new Promise((ok) => {
      proc.on("exit", (code) => ok(code));
      proc.kill("SIGTERM");
    }),
  };
}
