// Package bpe counts and cuts text in the tokens of OpenAI's byte-pair
// encodings (o200k_base, cl100k_base).
//
// The vocabularies are the BPE files embedded in
// github.com/pkoukk/tiktoken-go-loader, so nothing is ever downloaded: not
// at run time, not in tests, not in CI. The rest is this package's own:
// the pre-tokenizer (split.go: the encodings' regular expressions matched
// by hand, in one linear pass) and the merge (merge.go: tiktoken's order,
// by a scan for short pieces and a heap for long ones). A vocabulary is
// built once per process and shared by every [Tokenizer] that asks for it.
//
// # The budget promise
//
// Count is never below what OpenAI's tokenizer counts, and equal to it but
// for two documented over-estimates (see [Tokenizer.Count]): pieces longer
// than MaxPieceBytes, and the stretch around a character Go's Unicode
// tables do not know. [LowerBound] is never above the count of any text
// that contains its argument. The tests prove both against the reference
// (OpenAI's tiktoken, its Rust core as WebAssembly from npm, in
// testdata/ref), against tiktoken-go, and by properties over every class
// of character the pre-tokenizers tell apart; see reference_test.go.
//
// # Performance
//
// Counting is linear in the text's length, with BPE on pieces of at most
// MaxPieceBytes (a hostile run cannot stall it), and allocates nothing
// unless a piece is longer than 256 bytes (TestCountAllocs).
// Callers on a hot path still put a cache in front of it, as package
// contextasm does.
package bpe
