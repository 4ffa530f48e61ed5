// Package strictjson checks the object keys of a JSON document against the
// Go type it decodes into, for what encoding/json lets through silently:
//
//   - a key given twice in one object (encoding/json keeps the last value,
//     so "scope":"session" … "scope":"global" loads global);
//   - a key that names a field only up to case or Unicode folding
//     ("SCOPE", "ſcope"), which encoding/json also accepts, so that a
//     second spelling can override the first;
//   - a key that names no field at all, with the nearest known field as a
//     suggestion ("sematic_weight" → "semantic_weight", "source_id" →
//     "provenance.source_id").
//
// Field names are exact: the json tag's name, case included. [Schema.Check]
// reports every such key with its path ("sections[1].render") and byte
// offset, so a caller can name the file, line and field. It does not decode
// values or check their types; callers decode with encoding/json once the
// keys are clean.
//
// The rest helps name what encoding/json would only call an "invalid
// character": [Text] recognises a byte-order mark and UTF-16 or UTF-32
// text, [DecodeMessage] phrases a type error in JSON's terms, and
// [Offsets] places every value of a document, for line numbers.
//
// Packages declare and template use it; it has no state and is safe for
// concurrent use.
//
// # Performance
//
// Check scans the document once and does not allocate for a document
// whose keys are clean and unescaped; a [Schema] is built once per type.
package strictjson
