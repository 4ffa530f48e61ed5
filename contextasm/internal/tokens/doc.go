// Package tokens is an Engine's token counting: the tokenizers it loads
// (the built-in encodings, tokenizer files by identity, the host's own
// Counter), the caches in front of them — whole counts and cuts by text
// hash and encoding (each encoding under a cache tag of its own), and the
// cut plans of partial blocks — and the approximate counter of models
// without a local tokenizer, with the usage it learns its margin from
// (docs/tokenizers.md, docs/performance.md).
//
// Counting the same text twice in one encoding tokenizes it once: an
// assembly that keeps a block turn after turn pays for its count on the
// first turn only.
package tokens
