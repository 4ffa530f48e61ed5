// Command genworkload writes a synthetic contextasm workload to a folder:
// template.json (four sections with caps) and memories.jsonl (n multilingual
// blocks). It is how the README's 20,000-block CLI timing and the peer
// comparison get their inputs.
//
//	go run ./bench/genworkload -n 20000 -budget 16384 -o /tmp/wl
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/contextasm/contextasm/bench"
)

func main() {
	n := flag.Int("n", 20000, "number of blocks")
	budget := flag.Int("budget", 16384, "template budget, in tokens")
	seed := flag.Uint64("seed", 1, "random seed")
	out := flag.String("o", ".", "output folder")
	flag.Parse()
	if err := write(*out, *n, *budget, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "genworkload:", err)
		os.Exit(1)
	}
}

func write(dir string, n, budget int, seed uint64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "template.json"), bench.TemplateJSON(budget), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "memories.jsonl"))
	if err != nil {
		return err
	}
	if err := bench.WriteJSONL(f, bench.Generate(n, seed)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
