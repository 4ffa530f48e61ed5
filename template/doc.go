// Package template owns Dynamic Context Templates: the sections a rendered
// context is made of, which memory types each takes, its token cap, how its
// blocks are written, and the overall budget (docs/templates.md).
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
// Every literal of a section's render string and its separator is a
// delimiter that block content must not forge, so that no block can close
// its block or section early or open a forged one (package internal/delimit
// owns the rule and the neutralisation). Each literal is split into lines,
// each line trimmed of white space: a line of two or more characters
// ("</doc>", "\">", "---", "Note") is protected as it is; a single
// character is protected together with what always stands beside it — the
// line break or separator character at a block's edge ("\n-" for the bullet
// of "- {content}"), or the white space around it in the literal (" | " for
// that separator). A single character with nothing fixed beside it (the ":"
// of "{request_id}:{content}") cannot be protected, and the template is
// refused, naming the field and the literal. White space alone delimits
// nothing. The protocol header's opening is always protected. Every value is
// checked against the delimiters of every section, so no block can pose as
// the boundary of another section.
//
// Protecting a common word or markup ("end", "\">") breaks it wherever
// content holds it, with an invisible joiner: choose distinctive literals.
package template
