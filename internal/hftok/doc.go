// Package hftok counts and cuts text in the tokens of a Hugging Face
// tokenizer.json file whose model is BPE: the byte-level BPE of Llama 3,
// Qwen 3 and DeepSeek V3, and the byte-fallback BPE of Gemma 3.
//
// It implements the pipeline of the Rust tokenizers library as far as
// those files use it: added tokens are split out first (leftmost-longest,
// before normalization for tokens with "normalized": false, after it for
// the others); then the normalizer (NFC, NFD, NFKC, NFKD, Replace, Prepend,
// Sequence); the pre-tokenizer (Split with a String or Regex pattern and any
// split behavior, ByteLevel, Digits, Metaspace, Sequence); and the BPE model
// with merges ranked by their index, ignore_merges, byte_fallback, unk and
// fuse_unk. Regex patterns run on github.com/dlclark/regexp2, which has the
// look-ahead (`\s+(?!\S)`) Go's regexp lacks, except the exact patterns of
// Llama 3, Qwen 3 and DeepSeek V3, which run on hand-written matchers that
// FuzzFastSplit holds to regexp2. A component the package does not
// implement is a load error naming it, never a silent approximation.
// The post-processor, decoder, truncation and padding do not change which
// tokens a text is made of, so they are ignored: a count is the count of
// the text alone, without the BOS token a post-processor adds.
//
// Counting is never below the library's count, and exact but around
// characters the library may see otherwise than Go's Unicode tables (newer
// than them, or normalized by tables older than the library's): there a
// stretch between sync points counts Factor tokens a byte (unknown.go;
// TestRustDifferential runs the library itself). BPE merges with a
// priority queue, so a piece of n characters costs O(n log n) however
// hostile (a megabyte of one letter, say), and the pre-tokenizer patterns
// of the supported families match in time linear in the match (see
// TestHostileInputs). Other patterns run on regexp2 under a time budget,
// and those that can backtrack exponentially are refused at load
// (regex.go). LoadFile reads at most tokfile.MaxFileBytes.
//
// # Performance
//
// Count allocates only scratch taken from a pool and the rune slice the
// regex engine needs; Cut tokenizes the text a few times.
package hftok
