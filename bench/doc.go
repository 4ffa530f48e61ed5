// Package bench holds contextasm's benchmarks and the synthetic workloads
// they run: multilingual memory blocks (English, Chinese, Portuguese, code,
// JSON) of the four memory types under a four-section template with caps.
//
// [Generate] is deterministic for a seed, so the CLI timing, the Go
// benchmarks and the peer comparison all see the same blocks; the
// genworkload command writes them to disk (template.json, memories.jsonl).
//
// Run the benchmarks with
//
//	go test -run '^$' -bench . ./bench
//
// and report them as ratios against a baseline measured in the same run:
// the machines this project runs on are shared and noisy.
package bench
