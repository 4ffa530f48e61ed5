// Package assemble is the engine's machinery that decides which blocks
// enter a rendered context and writes it: eligibility, scoring, ranking,
// per-section caps and the hierarchical cut under the overall budget.
// Package contextasm runs it; hosts see only what it decided (package
// outcome) and the few types they pass in (package assemble).
//
// An [Assembler] takes a compiled template, the engine's blocks, a request
// (who asks, with which roles, and when "now" is) and a [Counter], and
// returns an [Output]: the text, its exact token count, each section's
// blocks with their status, and an [outcome.Event] for every block left out
// or changed. It reads no clock, no map order and no global state, so the same
// inputs give the same bytes.
//
// # Steps
//
//  1. Eligibility: expired, out_of_scope, access_denied, audience and
//     no_section exclusions, each an event; stale blocks stay, with a
//     stale event.
//  2. Ranking inside each section: required blocks first, then [truncate.Scoring]
//     score descending (for history blocks the score weighs recency), then,
//     among history blocks of equal score, newer last_modified and later
//     declaration first; then request_id ascending.
//  3. Filling each section in rank order under its max_tokens, counting a
//     block's rendered text plus the separator before it. fill "stop" ends
//     the section at the first misfit, without counting what follows;
//     "skip" goes on with smaller blocks. partial cuts the first misfit at a
//     token boundary when at least min_partial_tokens of room remain.
//  4. The budget: while the estimate exceeds the budget, the lowest-ranked
//     block of the lowest-priority section goes. Then the final text is
//     rendered and counted by the same Counter, and blocks keep going in the
//     same order until that exact count fits: sums of parts are only an
//     estimate, because BPE merges across joins.
//
// Required blocks are never dropped or cut; when they do not fit, assembly
// fails with [truncate.ErrBudgetTooSmall] and a [*truncate.RequiredError]
// that lists them.
//
// # Groups and chat formats
//
// Between steps 1 and 2, the blocks of a section that share a group, and
// an assistant turn with the tool results that answer its calls, become
// units (group.go): a unit with a tool result whose call is not eligible,
// or a call whose result is not, is excluded (orphan); the others are
// decided whole in step 3 when their best-ranked member comes up, never
// cut, and dropped whole by step 4. With [Request.Chat] set, every history
// block is a message of its own (chatmode.go): it counts as the chat APIs
// count a message, toward its section's cap and the budget, stays out of
// the text, and comes back in [Output.Messages] in reading order; for
// Anthropic, turns before the first user turn go last.
//
// # Incremental assembly
//
// An [Index] keeps, for one template and request shape, each section's
// eligible blocks in rank order at one now, and counts the hidden ones; a
// change of the store moves only the blocks it changes ([Index.Update]), a
// new now re-ranks only the sections whose scores or eligibility move with
// time ([Index.Refresh]). [Assembler.AssembleIndexed] runs the same fill,
// cut and rendering as AssembleRefs on candidates pulled from it in the
// same order, passing over the blocks the fill would drop without counting
// them (turn.go), so a turn's work is what changed and what is kept. Its
// Output leaves out the rows and events that list every block: the caller
// makes them with AssembleRefs when asked. TestIndexedEqualsFull holds the
// two to the same output on random runs.
//
// # Degrading before dropping
//
// Blocks may be written in a shorter form (a variant; content clipped to
// its max_tokens), be superseded by an eligible block (excluded before
// ranking), or, for a summary, stand in for the turns it replaces
// (summary.go): step 3 writes a block that does not fit as its richest
// variant that does, and decides a summary with its turns; step 4
// degrades a block, or lets a summary stand in, before it drops one. An
// assembly that weighed a summary or a smaller form is made again plain,
// and the plain one is taken when it represents more blocks
// (degrade.go). After step 4, a conversation's result lists the runs of
// history dropped for room, for the host to summarise (candidates.go).
//
// # Performance
//
// Ranking a section is allocation-free: [Rank] sorts a caller-owned slice of
// flat [Ranked] values with a comparison function that captures nothing.
// An Assembler reuses its scratch slices across calls; use one per goroutine
// (package contextasm pools them). Token counts come from the Counter, which
// is expected to cache; truncate asks only for what it needs: under fill
// "stop" no block after a section's first misfit is counted.
package assemble
