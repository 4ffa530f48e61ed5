// Package mcpsource collects memory blocks from outside the host: the
// resources of MCP servers (through the official Go SDK, over stdio or
// streamable HTTP) and the text files of local directories. It is the
// "source" side of the engine: sources feed the engine's in-process
// store asynchronously, and assembly only ever reads that store, so it never
// waits on a network.
//
//	col, err := mcpsource.Start(eng, mcpsource.Config{
//		Servers: []mcpsource.Server{{Name: "docs", Command: []string{"docs-mcp-server"}}},
//		Files:   []mcpsource.Files{{Name: "notes", Dir: "./notes"}},
//	})
//	defer col.Close()
//	_ = col.WaitSynced(ctx) // optional: every source's first sync, or ctx's deadline
//	res, err := eng.Assemble(ctx, req)
//
// # What it owns
//
// [Ingest] maps a listed resource and its read contents to a
// [declare.Declaration] (request_id "mcp:<server>:<uri>", memory type
// external unless configured, annotations as hints, provenance), [Root]
// reads a directory's text files through [os.Root] ("file:<root>:<path>"),
// and a [Collector] keeps a [Sink] (the engine) up to date with both.
// Package declare does not import this package: the SDK stays out of the
// core.
//
// # Choices
//
//   - Priority: a resource without a priority annotation, or with priority
//     0 (the SDK omits a zero priority, so the two cannot be told apart), gets
//     [Server.DefaultPriority], by default none (scored as 0.5). An explicit
//     "least important" is thus read as "no opinion"; the other choice would
//     rank every unannotated resource below every host block.
//   - Trust: blocks are Untrusted unless the server is [Server.Trusted], so
//     a server's priority 1 never makes a block required.
//   - Failures: -32602 and -32002 on a read mean the resource is gone (block
//     dropped, source_unavailable event). Other JSON-RPC errors (-32603) and
//     empty contents are transient: the last good content is kept with
//     valid_until = last good read + [Server.KeepFor], with a
//     source_unavailable event. A transport failure or a request exceeding
//     [Server.RequestTimeout] ends the session: every block is held that way,
//     one source-wide event (request_id "mcp:<name>") says so, and the
//     server is reconnected with doubling backoff. Blobs are skipped with a
//     binary event; a resource over the content limit is not declared
//     (source_unavailable).
//   - Request ids longer than 512 characters are shortened to their first
//     characters plus "~" and 16 hex digits of the URI's SHA-256
//     ([RequestID]).
//   - Only listed resources are collected; resource templates are not.
//   - Bounds (docs/limits.md): a URL server's HTTP responses are cut at
//     [Server.MaxResponseBytes] each (its notification stream, event by
//     event), since the SDK reads a JSON response whole; a cut response
//     ends the session, the resource keeps its last good content with a
//     source_unavailable event, and it is not read again until it changes.
//     Each source holds at most MaxSourceBytes of content. Queued update
//     notifications are bounded by [Server.MaxResources] URIs and 1 MiB;
//     past that they are coalesced into one full re-read, so a flood of
//     unique URIs cannot grow memory.
//
// # Goroutines
//
// Start runs one goroutine per source. An MCP source connects, lists (all
// pages), subscribes where the server offers subscribe and reads each
// resource after subscribing to it, then waits for notifications
// (resources/updated: re-read; list_changed: re-list) and re-syncs fully
// every [Server.ListInterval] anyway, since notifications are hints. Under
// 2026-07-28 a subscription is registered after Subscribe returns, so the
// server's acknowledgement queues one more read. The SDK adds goroutines of
// its own per session (and the stdio subprocess its pipes); the source
// closes its session before it returns. A Files source rescans every
// [Files.ScanInterval]. [Collector.Close] cancels every source and waits for
// its goroutine, so after Close nothing of the package runs.
//
// Each source talks to the Sink from its own goroutine only; sources share
// nothing but the Sink, so a slow or hanging one delays no other.
package mcpsource
