// Package jsonx owns the JSON appenders the encoders share: strings and
// numbers and times written byte for byte as encoding/json writes them
// (with HTML escaping off), into a caller's buffer, without reflection.
// Package chat writes request bodies with them, package contextasm its
// conversations' decisions, package learned its file store's log lines;
// their differential tests, and this package's, hold them to
// encoding/json.
package jsonx
