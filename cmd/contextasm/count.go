package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/tokfile"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// countLine is one input's count in `count --format json`, one object a
// line.
type countLine struct {
	File        string                    `json:"file,omitempty"`
	Encoding    string                    `json:"encoding"`
	Tokens      int                       `json:"tokens"`
	Approximate *contextasm.Approximation `json:"approximate,omitempty"`
}

// runCount prints the token count of each file (stdin without files) in an
// encoding or a tokenizer file.
func runCount(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	flags := newFlags("count", stdout)
	encoding := flags.String("encoding", template.DefaultEncoding, "encoding: o200k_base, cl100k_base or approx:FAMILY")
	tokenizer := flags.String("tokenizer", "", "tokenizer file: a tokenizer.json or a tiktoken spec (instead of --encoding)")
	usagePath := flags.String("usage", "", "usage file (JSON, feedback --usage): what an approx: encoding learned from reported usage")
	format := flags.String("format", "text", "output format: text or json (one object a line)")
	if err := flags.Parse(args); err != nil {
		return parseError(flags, err)
	}
	if *format != "text" && *format != "json" {
		return usagef("count: --format must be text or json (got %q)", *format)
	}
	enc, label := *encoding, *encoding
	if *tokenizer != "" {
		explicit := false
		flags.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "encoding" })
		if explicit {
			return usagef("count: give --encoding or --tokenizer, not both")
		}
		id, err := tokfile.Identity(*tokenizer)
		if err != nil {
			return fmt.Errorf("count: --tokenizer: %w", err)
		}
		enc, label = *tokenizer, id
	}
	usage, err := readUsage(*usagePath)
	if err != nil {
		return err
	}
	cfg := contextasm.Config{Encoding: enc, Usage: usage}
	eng, err := contextasm.New(cfg)
	if err != nil {
		return err
	}
	files := flags.Args()
	inputs := files
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	enc2 := json.NewEncoder(stdout)
	for _, name := range inputs {
		var data []byte
		if name == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			return fmt.Errorf("count: %w", err)
		}
		n, approx, err := eng.Count(enc, string(data))
		if err != nil {
			return err
		}
		if *format == "json" {
			line := countLine{Encoding: label, Tokens: n, Approximate: approx}
			if name != "-" {
				line.File = name
			}
			if err := enc2.Encode(line); err != nil {
				return err
			}
			continue
		}
		switch {
		case len(files) == 0:
			fmt.Fprintf(stdout, "%d\n", n)
		default:
			fmt.Fprintf(stdout, "%d\t%s\n", n, name)
		}
	}
	if approx := approxNote(eng, enc); *format == "text" && approx != "" {
		fmt.Fprintln(stderr, approx)
	}
	return nil
}

// approxNote says how an approximate encoding counted, for a reader of the
// text output.
func approxNote(eng *contextasm.Engine, enc string) string {
	if !strings.HasPrefix(enc, template.ApproxPrefix) {
		return ""
	}
	_, a, err := eng.Count(enc, "")
	if err != nil || a == nil {
		return ""
	}
	if a.Basis == outcome.BasisBytes {
		return fmt.Sprintf("count: %s is approximate: one token per byte until usage is reported (feedback --input-tokens)", enc)
	}
	return fmt.Sprintf("count: %s is approximate: o200k_base x %.4f, the largest ratio of %d reported usage(s)", enc, a.Ratio, a.Reports)
}

// withTokenizer applies --tokenizer (when given) to a template.
func withTokenizer(tpl *template.Template, file string) (*template.Template, error) {
	if file == "" {
		return tpl, nil
	}
	out, err := tpl.WithTokenizer(file)
	if err != nil {
		return nil, fmt.Errorf("--tokenizer: %w", err)
	}
	return out, nil
}

// engineEncoding is what an Engine preloads for a template: its tokenizer
// file, or its encoding.
func engineEncoding(tpl *template.Template) string {
	if f := tpl.TokenizerFile(); f != "" {
		return f
	}
	return tpl.Encoding()
}

// reportUsage records in the usage file the input tokens a provider
// reported for the call that sent a render of an approximate encoding
// (feedback --input-tokens), and prints the margin learned.
func reportUsage(path string, dump *contextasm.Dump, inputTokens int, stdout io.Writer) error {
	family, ok := strings.CutPrefix(dump.Encoding, template.ApproxPrefix)
	if !ok {
		return usagef("feedback: --input-tokens: the render's encoding %q is exact; only approx: encodings learn from usage", dump.Encoding)
	}
	o200k, err := bpe.Load(bpe.O200kBase)
	if err != nil {
		return err
	}
	log, err := readUsage(path)
	if err != nil {
		return err
	}
	if err := log.Observe(family, o200k.Count(dump.Text), inputTokens); err != nil {
		return usagef("feedback: --input-tokens: %v", err)
	}
	data, err := json.MarshalIndent(log, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, append(data, '\n')); err != nil {
		return err
	}
	ratio, n := log.Ratio(family)
	fmt.Fprintf(stdout, "%s: o200k_base x %.4f (the largest of %d reported usage(s))\n", dump.Encoding, ratio, n)
	return nil
}

// readUsage reads a usage file (--usage); a missing file is an empty log.
func readUsage(path string) (learned.UsageLog, error) {
	log := learned.UsageLog{}
	if path == "" {
		return log, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return log, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--usage: %w", err)
	}
	if err := json.Unmarshal(data, &log); err != nil {
		return nil, fmt.Errorf("--usage: %s: %v", path, err)
	}
	return log, nil
}
