// Package delimit owns delimiter protection: which literal text of a
// template block content must not forge, and how content is neutralised so
// that it cannot.
//
// A template writes literal text around each block (its section's render
// string) and between blocks (the separator), and the protocol header
// opens every rendering. [Set.AddLiteral] turns each such literal into the
// delimiters to protect, or says which part cannot be protected, so the
// template is refused instead of protected in name only. [Neutralize]
// writes a value (content, an id) with every occurrence of a delimiter
// broken by [Joiner], U+2060 WORD JOINER, after its first character,
// including occurrences that would form across the value's edges with the
// literal text around it; [Crosses] tells when two pieces written back to
// back would form one across the join.
//
// The text still reads the same to a person and almost the same to a
// model, but no longer matches the delimiter byte for byte, so a block
// cannot close its block or section early or open a forged one. The word
// joiner is invisible, is not white space (so tokenizers do not split on
// it the way they split on spaces) and, unlike U+200B, is not stripped by
// common text normalisers. Look-alike delimiters (fullwidth forms,
// zero-width characters inserted by the content itself) are different
// text and pass unchanged by design: protection is byte-exact.
//
// Package template compiles each section's delimiters once; the internal
// assembler breaks delimiters across joins between blocks; package view
// reads the joiners back when it shows a rendering.
//
// # Performance
//
// Neutralize costs time linear in the value's length whatever it contains
// (content full of delimiters must not stall a host), times the number of
// delimiters, and allocates nothing beyond growing dst for up to 16 of
// them. A [Matcher], built once per template, is linear in the value
// however many delimiters there are (a template of 8,000 sections has
// 16,000): past scanMax of them it scans with Aho-Corasick automata, below
// it searches for each, which is faster for a few. Package template builds
// one per template; [Crosses] still takes the list.
package delimit
