// Package atomicfile replaces a file's content through a temporary file
// beside it and a rename, so that a reader sees the old file or the new
// one, never half of one, and a crash leaves one of them. The CLI's -o and
// the learned-state file both write this way.
package atomicfile
