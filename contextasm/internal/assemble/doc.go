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
// # Passes
//
// One function, decide (assemble.go), runs the passes of an assembly in
// order; each has a file of its own and keeps its state apart (a run is
// what they hand on; an Assembler's per-section state is a section):
//
//  1. Eligibility (eligible.go): expired, out_of_scope, access_denied,
//     audience, no_section and superseded exclusions, each an event (the
//     hidden reasons only counted); stale blocks stay, with a notice.
//     Then conflicts (conflict.go): of the eligible blocks sharing a
//     conflict_key one enters, the others are excluded (conflict); two
//     required ones fail the assembly ([outcome.ErrConflict]).
//  2. Scoring (score.go): each eligible block's [truncate.Scoring] score
//     at now (for history blocks it weighs recency).
//  3. Planning units (group.go, summary.go): the blocks decided together:
//     a group, an assistant turn with the tool results that answer its
//     calls, a summary with the turns it replaces. A unit with a required
//     member is required whole, so this comes before the ranking.
//  4. Ranking (rank.go), per section in priority order: required blocks
//     first, then score descending, then, among history blocks of equal
//     score, newer last_modified and later declaration first; then
//     request_id ascending. A section that follows its previous decision
//     takes its incumbents out of rank order by the margin (sticky.go).
//  5. Filling (fill.go), in the same section order: one loop takes the
//     candidates in order under the section's max_tokens, counting a
//     block's rendered text plus the separator before it; what a
//     candidate is (a replacement, a unit, a required block, an
//     incumbent, any other block) decides how it is taken. fill "stop"
//     ends the section at the first misfit, without counting what
//     follows; "skip" goes on with smaller blocks. partial cuts the first
//     misfit at a token boundary when at least min_partial_tokens of room
//     remain. A block that does not fit whole may enter as a smaller form
//     (degrade.go).
//  6. The budget cut (budget.go): while the estimate exceeds the budget,
//     the lowest-ranked block of the lowest-priority section goes (or is
//     degraded first, or a summary stands in for it); a section the cut
//     made shed goes down to its slack.
//  7. Writing (write.go): the final text is rendered and counted by the
//     same Counter, and blocks keep going in the same order until that
//     exact count fits: sums of parts are only an estimate, because BPE
//     merges across joins.
//  8. Messages (chatmode.go): in a chat format, the kept history blocks
//     become messages in reading order.
//  9. Explaining (explain.go, candidates.go, prefix.go): each section's
//     rows and the events that complete them, the runs of history a host
//     may summarise, and the prompt-cache figures (prefix, breakpoints, the
//     decision the next call follows).
//
// Required blocks are never dropped or cut; when they do not fit, assembly
// fails with [truncate.ErrBudgetTooSmall] and a [*truncate.RequiredError]
// that lists them.
//
// # Groups and chat formats
//
// In step 3, the blocks of a section that share a group, and an
// assistant turn with the tool results that answer its calls, become
// units (group.go): a unit with a tool result whose call is not eligible,
// or a call whose result is not, is excluded (orphan); the others are
// decided whole in step 5 when their best-ranked member comes up, never
// cut, and dropped whole by steps 6 and 7. With [Request.Chat] set,
// every history block is a message of its own (chatmode.go): it counts as the chat APIs
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
// time ([Index.Refresh]): history scored by recency alone is kept in
// lanes whose order holds at every now (lanes.go), so that re-ranking
// sorts only the few entries whose order may move.
// [Assembler.AssembleIndexed] runs the same
// passes as AssembleRefs from the ranking on, the ranking being a walk
// that pulls candidates from the index in the same order, passing over
// the blocks the fill would drop without counting them (turn.go), so a
// turn's work is what changed and what is kept. Its
// Output leaves out the rows and events that list every block: the caller
// makes them with AssembleRefs when asked. TestIndexedEqualsFull holds the
// two to the same output on random runs.
//
// # Degrading before dropping
//
// Blocks may be written in a shorter form (a variant; content clipped to
// its max_tokens), be superseded by an eligible block (excluded before
// ranking), or, for a summary, stand in for the turns it replaces
// (summary.go): step 5 writes a block that does not fit as its richest
// variant that does, and decides a summary with its turns; step 6
// degrades a block, or lets a summary stand in, before it drops one. An
// assembly that weighed a summary or a smaller form is made again plain,
// and the plain one is taken when it represents more blocks
// (degrade.go). In step 9, a conversation's result lists the runs of
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
