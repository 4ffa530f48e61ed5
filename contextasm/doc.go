// Package contextasm is the engine an agent host calls before every model
// call: it holds the memory blocks the host declared, and for each request
// assembles them under a template's sections, caps and budget into one
// deterministic text headed by the template's fingerprint, explaining every
// block it left out.
//
//	eng, err := contextasm.New(contextasm.Config{})
//	decls, err := declare.LoadFile("memories.jsonl")
//	err = eng.Declare(decls...)
//	tpl, err := template.LoadFile("template.json")
//	res, err := eng.Assemble(ctx, contextasm.Request{Template: tpl, Now: now, SessionID: "s1"})
//	// res.Text, res.TotalTokens, res.Fingerprint, res.Sections(), res.Events(), res.Audit()
//
// The Engine owns the block store and the token-count cache; the decisions
// are the internal assembler's (told in package outcome's vocabulary), the formats packages declare and template's, the
// header package fingerprint's. An Engine is safe for concurrent use:
// Declare swaps in a new immutable snapshot of the store, and every
// Assemble works on the snapshot it started with.
//
// # Determinism
//
// The same template, declarations (in any order, unless a section writes
// blocks in order "declared"), request and Now give a byte-identical Result,
// whatever GOMAXPROCS, map order or concurrency. Now is an input; the engine
// never reads the clock.
//
// # Learned state
//
// With Config.State the Engine shares what it learns (trust, heat,
// sessions' decisions) with every Engine using the same store: it keeps a
// local snapshot, which Assemble reads and never waits for, and a
// goroutine sends its deltas and takes in others' (StateOptions; Flush,
// Close). A store out of reach shows as a state_unavailable event, not an
// error. See docs/fleet.md.
//
// # Performance
//
// Token counts are cached by the SHA-256 of the counted text in a bounded
// cache (Config.CacheSize entries), shared by all assemblies: re-assembling
// unchanged blocks calls no tokenizer (the cuts of partial blocks are cached
// too), and a changed block is counted once.
// Ranking needs no counts, so a cold assembly counts only the blocks that
// can still enter their section.
//
// Assembly is incremental: per request shape (template, session, user,
// roles; the last four shapes used) the Engine keeps each section's
// eligible blocks ranked, brings them up to date with the changes of each
// Declare or Forget, and fills sections from them only as far as blocks
// can still enter, so a turn (one block declared, then assembled) costs
// what changed and what is kept, not the store. A Result's Sections,
// Events and Audit, which list every block, are then made on first use by
// assembling the same snapshot from scratch. Chat formats, ListHidden,
// Config.Audit, sections holding grouped blocks or tool calls, and blocks
// that degrade (variants, max_tokens, supersedes, replaces) assemble from
// scratch every time. docs/performance.md has the details.
package contextasm
