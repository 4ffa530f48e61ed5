// Package fingerprint owns the protocol header that opens every rendered
// context, the canonical hashing behind it, and the neutralisation that keeps
// block content from posing as a header or a section boundary.
//
// The header is
//
//	[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:<16 lowercase hex>]
//
// where the hex is the start of SHA-256 over the template's canonical JSON
// ([Canonical]: sorted keys, no insignificant whitespace, defaults filled in
// by the caller). The fingerprint is a compatibility promise: the same
// template must hash the same in every release, which a known-answer test
// pins down.
//
// # Neutralisation
//
// [Neutralize] breaks every occurrence of a protected string (a header
// opening, a section delimiter) by inserting U+2060 WORD JOINER after its
// first character. The text still reads the same to a person and almost the
// same to a model, but no longer matches the delimiter byte for byte, so a
// block cannot close its section early or open a forged one. The word joiner
// is invisible, is not whitespace (so tokenizers do not split on it the way
// they split on spaces) and, unlike U+200B, is not stripped by common text
// normalisers.
package fingerprint
