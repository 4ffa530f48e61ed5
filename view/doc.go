// Package view shows people why an assembly decided what it did: the
// answer to "why did the agent forget X?".
//
// It works on [outcome.Dump] values, the JSON shape of `contextasm render
// --format json` (docs/dump.md), so it can explain an assembly that just ran
// (res.Dump()) as well as one read back from a file. It depends on that wire
// format only, not on the engine. One function arranges a dump into the
// explanation every view shows (each block's rank, status and reasons, the
// exclusions grouped by reason, the percentages, what each reason means);
// the writers only lay it out, so the report and the page cannot drift
// apart:
//
//   - [WriteReport] writes a report for a terminal: the budget, each
//     section's bar (used tokens against its cap, and its share of the
//     budget), every block with its status, tokens, score and reason, the
//     exclusions grouped by reason, and what each reason means. Lines fit
//     [ReportOptions].Width columns (80 by default), East Asian wide
//     characters counted as two; colour is the caller's choice.
//   - [WriteHTML] writes one self-contained HTML page: the same facts with
//     a stacked bar per section, filters by status and reason, and the
//     rendered text with each block's span linked to its row. The page
//     loads nothing (its Content Security Policy forbids it) and escapes
//     everything the dump holds: block text is untrusted.
//   - [Diff] compares two dumps ("what changed between turn 5 and turn
//     6?"): blocks that appeared, disappeared, were left out, newly cut,
//     came back or changed rank, with their reasons, and the token shift
//     per section. [WriteDiff] writes it for a terminal; its JSON is the
//     [DiffResult] struct.
//
// A host writes the page of any assembly with
//
//	d := res.Dump()
//	err := view.WriteHTML(w, &d)
//
// and reads a dump from a file with [ReadDump].
//
// The command-line program uses this package for `render --format
// report|html`, `demo --format report|html` and `diff`. Nothing here is on
// the assembly's hot path: views allocate freely.
package view
