// Command count prints the token count of texts in one of contextasm's
// encodings, with the same tokenizer the engine uses (internal/bpe). The
// peer comparison (bench/peers/run.sh) uses it to check that the peers' own
// counts of their outputs agree with contextasm's.
//
//	go run ./bench/peers/count < text.txt        prints the count of stdin
//	go run ./bench/peers/count a.txt b.txt       prints "count<TAB>file" per file
//
// Texts are counted byte for byte, as the files hold them.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/contextasm/contextasm/internal/bpe"
)

func main() {
	encoding := flag.String("encoding", bpe.O200kBase, "encoding: o200k_base or cl100k_base")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: count [-encoding E] [FILE ...]   (stdin when no FILE)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*encoding, flag.Args(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "count:", err)
		os.Exit(1)
	}
}

func run(encoding string, files []string, stdin io.Reader, stdout io.Writer) error {
	tok, err := bpe.Load(encoding)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, tok.Count(string(b)))
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%d\t%s\n", tok.Count(string(b)), f); err != nil {
			return err
		}
	}
	return nil
}
