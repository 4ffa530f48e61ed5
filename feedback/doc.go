// Package feedback reads what a model did with a rendered context and turns
// it into learning: which blocks it cited (<memory_ref id="…"/> tags), where
// in its answer it first cited each, how trust should move, which
// break_on_violation constraints its answer broke, and per-block heat
// counters. It also owns the learned state (trust, heat, sessions'
// decisions), the batches of deltas that change it ([Batch]: applied once
// each, every key atomically, so that writers sharing a state never
// overwrite each other) and the embedded store, [FileStore]: one file,
// locked across processes and replaced atomically, so that a crash never
// leaves a torn or lost state file (docs/feedback.md, docs/fleet.md).
//
// The functions here are pure: [Evaluate] takes the blocks that were in the
// context and the response, and returns a [Result]; package contextasm
// applies it to its Engine and its state.
//
// # Parsing references
//
// [ParseRefs] is tolerant: the tag name is matched case-insensitively,
// attributes come in any order with single or double quotes (or none),
// white space may stand anywhere between tokens, the tag may be
// self-closing or followed by </memory_ref>, and a malformed tag is skipped,
// never an error. Ids lose any U+2060 WORD JOINER, which neutralisation may
// have put into an id that imitated a delimiter.
//
// # Heat
//
// A block is "hot and truncated" ([Heat.HotTruncated]) when the model cites
// it at least twice, in at least half of the renders that included it, and
// the block was cut or dropped in at least a quarter of the renders that
// considered it: a candidate for a larger section cap.
package feedback
