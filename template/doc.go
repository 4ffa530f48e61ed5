// Package template owns Dynamic Context Templates: the sections a rendered
// context is made of, which memory types each takes, its token cap, how its
// blocks are written, and the overall budget (SPEC §3).
//
// [LoadFile] and [Parse] read a template's JSON, report every problem at once
// (each naming the file and the field, e.g. "sections[1].render"), fill in
// the defaults and compile it into a [Template]: an immutable value that any
// number of goroutines may use at once, as text/template promises for its
// templates. Compilation also computes the template's fingerprint (package
// fingerprint) from its canonical JSON with defaults filled in, so two files
// that mean the same template hash the same.
//
// # Render strings
//
// A section's render string is applied to each block. Placeholders are
// {content}, {request_id}, {memory_type} and {source_id}; {content} must
// appear exactly once. A brace that does not open a placeholder name
// ([A-Za-z_][A-Za-z0-9_]*) followed by '}' is literal text, so JSON-like
// renders work unescaped; an unknown name such as {title} is a load error.
//
// # Delimiters
//
// A section's delimiters are the literal text that opens a rendered block
// (the render's leading literal) and closes it (the literal right after
// {content}), split into lines and trimmed of surrounding whitespace. Block
// content must not forge them. A delimiter needs protecting when it has at
// least two characters and at least one that is neither a letter, a digit
// nor a space: "【/硬性规则】", "<doc id=\"" and "</doc>" are protected, while
// "- " or "Note" are not — text like that is ordinary prose, and breaking it
// in content would change meaning without protecting anything. Literal text
// between two placeholders (the `">` of `<doc id="{request_id}">`) forges
// nothing without the opening before it, so it is left alone. The protocol
// header's opening is always protected. Every block is checked against the
// delimiters of every section, so no block can pose as the boundary of
// another section.
package template
