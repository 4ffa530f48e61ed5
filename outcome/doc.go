// Package outcome is the vocabulary of what an assembly decided: the
// [Event] that explains each block left out, cut or flagged, its [Kind] and
// [Reason], each block's [Status] and [BlockResult], each section's
// [SectionResult], the JSON [Dump] of `contextasm render --format json`,
// and the [Audit] record.
//
// It is a leaf: it imports only the standard library. Readers of dumps
// (package view) and producers of events (the MCP and file sources in
// declare/mcpsource) depend on this wire format, not on the engine, its
// tokenizer or the assembly algorithm (contextasm/internal/assemble). Package
// contextasm re-exports these types under its own name, so a host needs
// import only that.
//
// Everything here is data: changing a JSON name or a reason's spelling
// changes the dump format, which tools read back, so treat them as a
// compatibility promise.
package outcome
