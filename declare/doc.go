// Package declare owns memory declarations: the blocks of text an agent host
// offers to its model, with the metadata contextasm ranks and filters them by.
//
// A [Declaration] is one JSON object (docs/declarations.md). Files hold one declaration a
// line (JSONL); blank lines and lines starting with '#' are ignored.
// [LoadFile], [LoadFiles] and [Config.Load] validate every line and report
// every problem of a file at once, each naming the file, line, request_id
// and field; a set of files loads whole or not at all. Keys are exact: a
// key given twice, or in another case ("SCOPE"), is refused, where
// encoding/json would keep the last value; an unknown key is named with
// the nearest field ("source_id" → "provenance.source_id"). Files are
// UTF-8, a byte-order mark allowed; a UTF-16 file is named as such. The
// input is read as a stream and reading stops at the first declaration
// past [Config.MaxBlocks], so memory stays bounded whatever the input.
//
// History blocks may carry their place in a chat (docs/chat.md): a role
// (user, assistant or tool), an assistant turn's tool calls, the call a
// tool result answers, and a group they are kept or dropped with. A tool
// result must answer a call declared in the same session: [Config.Load]
// checks it within a file, [Config.LoadFiles] across files, and the engine
// against its store.
//
// Validation uses one long-lived go-playground validator for the field
// rules, plus the checks a struct tag cannot express (UTF-8, content size,
// regular expressions, time windows).
//
// Declarations are plain values. The engine (package contextasm) copies them
// into its store; nothing here keeps state between calls.
package declare
