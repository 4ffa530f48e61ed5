// Package bpe counts and cuts text in the tokens of OpenAI's byte-pair
// encodings (o200k_base, cl100k_base).
//
// It adapts github.com/pkoukk/tiktoken-go, fed by the BPE files embedded in
// github.com/pkoukk/tiktoken-go-loader, so nothing is ever downloaded: not at
// run time, not in tests, not in CI. An encoding costs about 0.4 s and 24 MB
// to build, so each one is built once per process and shared by every
// [Tokenizer] that asks for it.
//
// # Performance
//
// Counting allocates (the underlying encoder builds rune and token slices);
// callers on a hot path put a cache in front of it, as package contextasm
// does.
package bpe
