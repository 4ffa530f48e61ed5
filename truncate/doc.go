// Package truncate holds what a host passes to, and gets back from, the
// decision of which blocks enter a rendered context: the [Counter] that
// counts tokens, the [Scoring] weights that rank blocks inside a section,
// and the errors for required blocks that do not fit ([ErrBudgetTooSmall],
// [*RequiredError]).
//
// The decision itself — eligibility, ranking, per-section caps, the cut of
// partial blocks and the budget — is the engine's machinery and lives in
// contextasm/internal/assemble; package contextasm runs it. What it decided is told in
// the vocabulary of package outcome. These few types stay public, in their
// own small package rather than in contextasm, so that both the engine and
// its internal assembler can speak them without an import cycle, and so a
// host that brings its own Counter depends on nothing heavier.
package truncate
