// The hand-written types against docs/openapi.json, the API's source of
// truth: read with the TypeScript compiler, each interface of
// src/types.ts names exactly its schema's fields, and a response's
// required fields are the schema's.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";

import ts from "typescript";

import { pkg, root } from "./server.js";

const spec = JSON.parse(readFileSync(join(root, "docs", "openapi.json"), "utf8")) as {
  components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
};

function interfaces(): Map<string, { fields: Set<string>; required: Set<string>; open: boolean }> {
  const file = join(pkg, "src", "types.ts");
  const src = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  const out = new Map<string, { fields: Set<string>; required: Set<string>; open: boolean }>();
  src.forEachChild((node) => {
    if (!ts.isInterfaceDeclaration(node)) return;
    const fields = new Set<string>();
    const required = new Set<string>();
    let open = false;
    for (const m of node.members) {
      if (ts.isIndexSignatureDeclaration(m)) open = true;
      if (!ts.isPropertySignature(m)) continue;
      const name = m.name.getText(src);
      fields.add(name);
      if (!m.questionToken) required.add(name);
    }
    out.set(node.name.text, { fields, required, open });
  });
  return out;
}

const sorted = (s: Iterable<string>) => [...s].sort();

it("every interface names its schema's fields", () => {
  const types = interfaces();
  assert.ok(types.size >= 25, `only ${types.size} interfaces read`);
  for (const [name, t] of types) {
    const schema = spec.components.schemas[name];
    assert.ok(schema, `docs/openapi.json has no schema ${name}`);
    assert.deepEqual(sorted(t.fields), sorted(Object.keys(schema.properties ?? {})), name);
  }
});

it("every schema has its interface", () => {
  const types = interfaces();
  for (const name of Object.keys(spec.components.schemas)) {
    assert.ok(types.has(name) || name === "Error", `src/types.ts has no interface ${name}`);
  }
});

it("a type's required fields are its schema's", () => {
  for (const [name, t] of interfaces()) {
    assert.deepEqual(sorted(t.required), sorted(spec.components.schemas[name]?.required ?? []), name);
  }
});
