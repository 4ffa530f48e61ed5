// Package tokfile names tokenizer files: it tells a Hugging Face
// tokenizer.json from a tiktoken spec, reads the spec, and computes the
// identity a template's fingerprint covers. It reads files but builds no
// tokenizer (package contextasm/internal/tokload does), so a template can name a
// tokenizer without loading one.
//
// A tiktoken spec is a small JSON file that pairs a tiktoken-format rank
// file (one token a line: its bytes in base64, a space, its rank — Llama 3's
// tokenizer.model, an OpenAI .tiktoken file) with the pre-tokenizer pattern
// it was trained with:
//
//	{"format": "tiktoken", "ranks": "tokenizer.model", "pattern": "cl100k_base"}
//
// ranks is relative to the spec's directory. pattern is "cl100k_base" (the
// pattern of cl100k_base and of Llama 3) or "o200k_base".
//
// The identity of a tokenizer.json is the SHA-256 of the file; that of a
// spec is the SHA-256 of "tiktoken", the pattern and the rank file's
// SHA-256, each ended by a newline. Where the files lie never enters it.
//
// Every file is bounded: a regular file of at most MaxFileBytes, refused
// before it is read otherwise (a device, a FIFO, a file too large).
// IdentityIn confines a name to a directory (the template's, for a
// template read from a file): a local path, and its rank file too, with
// symbolic links that leave the directory refused (os.Root).
package tokfile
