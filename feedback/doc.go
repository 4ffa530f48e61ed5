// Package feedback reads what a model did with a rendered context: which
// blocks it cited (<memory_ref id="…"/> tags, or a provider's structured
// citations), where in its answer it first cited each, how the trust
// policy moves their trust ([Policy], within [Limits] of the work spent
// checking), and which break_on_violation constraints its answer broke
// (docs/feedback.md).
//
// The functions here are pure: [Evaluate] takes the blocks that were in the
// context and the response, and returns a [Result]; package contextasm
// turns it into deltas of the learned state (package learned) and applies
// them to its Engine and its store.
//
// # Parsing references
//
// [ParseRefs] is tolerant: the tag name is matched case-insensitively,
// attributes come in any order with single or double quotes (or none),
// white space may stand anywhere between tokens, the tag may be
// self-closing or followed by </memory_ref>, and a malformed tag is skipped,
// never an error. Ids lose any U+2060 WORD JOINER, which neutralisation may
// have put into an id that imitated a delimiter.
package feedback
