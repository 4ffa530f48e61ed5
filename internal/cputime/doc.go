// Package cputime reads the CPU time the process has used, for the
// benchmarks and `contextasm bench`: on a machine shared with other work
// it measures what an operation costs where wall-clock time also counts
// the waiting.
package cputime
