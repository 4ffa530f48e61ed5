// Package fingerprint owns the protocol header that opens every rendered
// context and the canonical hashing behind it.
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
// Keeping block content from posing as the header or a section boundary
// is internal/delimit's job; the header's opening, [HeaderPrefix], is one
// of the strings it protects.
package fingerprint
