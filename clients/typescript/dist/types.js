// The API's bodies, as docs/openapi.json describes them (test/openapi.test.ts
// holds each interface to its schema: the same fields, the same required
// ones).
export {};
