package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/outcome"
	"github.com/contextasm/contextasm/template"
)

// renderOptions are render's flags.
type renderOptions struct {
	inputFlags
	requestFlags
	budget    budgetFlag
	audit     string
	state     string
	format    string
	output    string
	tokenizer string
	usage     string
	fresh     bool
	accept    acceptFlag
	tools     toolsFlag
	query     queryFlags
	sources   sourceOptions
}

func (o *renderOptions) register(fs *flag.FlagSet) {
	o.inputFlags.chain = true
	o.inputFlags.register(fs)
	fs.Var(&o.accept, "accept", "protocol versions and template fingerprints the model side accepts (v1.2,fp:sha256:…): a template -t names that is not accepted is skipped")
	fs.Var(&o.budget, "budget", "override the template's budget, in tokens (positive)")
	o.requestFlags.register(fs)
	fs.StringVar(&o.audit, "audit", "", "append the assembly's audit record to this JSONL file")
	fs.StringVar(&o.state, "state", "", "learned state (trust, heat, conversations' decisions): a file, or redis://[user:pass@]host:port/db?prefix=NAME; read for ranking, updated with this render's heat and decisions")
	fs.BoolVar(&o.fresh, "fresh", false, "decide from scratch, not following the previous render of this session, user and template (with --state)")
	o.query.register(fs)
	o.tools.register(fs)
	fs.StringVar(&o.format, "format", "text", "output format: text, json, report (why each block is in or out), html (the same as one page), or openai, anthropic or responses (a chat API's request body)")
	fs.StringVar(&o.output, "o", "", "write the output to this file instead of stdout")
	fs.StringVar(&o.usage, "usage", "", "usage file (feedback --usage): what an approx: encoding learned from reported usage")
	fs.StringVar(&o.tokenizer, "tokenizer", "", "count with this tokenizer file (tokenizer.json or tiktoken spec) instead of the template's encoding")
	o.sources.register(fs)
}

func runRender(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o renderOptions
	fs := newFlags("render", stdout)
	o.register(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if o.template == "" || (len(o.memories) == 0 && !o.sources.any()) {
		return usagef("render: -t TEMPLATE and at least one -m MEMORIES (or a source: --mcp, --mcp-url, --files) are required")
	}
	if !validFormat(o.format) {
		return usagef("render: --format must be text, json, report, html, openai, anthropic or responses (got %q)", o.format)
	}
	now, err := o.instant("render")
	if err != nil {
		return err
	}
	in, err := loadInputs(o.template, o.memories, int(o.budget))
	if err != nil {
		return err
	}
	if in.tools, err = o.tools.load(); err != nil {
		return err
	}
	warnDeclarations(stderr, "render", in.decls)
	warnScopes(stderr, &o.requestFlags, in.decls)
	if o.sources.any() {
		o.sources.stderr = stderr
		in.sources = &o.sources
	}
	if in.tpl, err = withTokenizer(in.tpl, o.tokenizer); err != nil {
		return err
	}
	fallback, err := loadFallback(o.fallback, int(o.budget), o.tokenizer)
	if err != nil {
		return err
	}
	cfg := contextasm.Config{Encoding: engineEncoding(in.tpl)}
	if cfg.Usage, err = readUsage(o.usage); err != nil {
		return err
	}
	if o.state != "" {
		store, err := openState(o.state)
		if err != nil {
			return err
		}
		defer store.Close()
		cfg.State = store
		// A one-shot render is no replica: its blocks stay its own.
		cfg.StateOptions = contextasm.StateOptions{LocalGlobal: true, Timeout: stateTimeout}
		in.warn = stderr
	}
	var auditFile *os.File
	if o.audit != "" {
		auditFile, err = os.OpenFile(o.audit, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("render: --audit: %w", err)
		}
		defer auditFile.Close()
		cfg.Audit = slog.New(slog.NewJSONHandler(auditFile, nil))
	}
	req := o.request(in.tpl, now)
	req.Format = chatFormat(o.format)
	req.Fresh = o.fresh
	req.Fallback, req.Accept = fallback, o.accept
	if err := o.query.apply(&req, "render"); err != nil {
		return err
	}
	res, err := assemble(ctx, cfg, in, req)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := writeResult(&out, res, o.format, toStdout(o.output) && useColor(stdout)); err != nil {
		return err
	}
	return writeOutput(stdout, o.output, out.Bytes())
}

// inputs are a loaded template and declarations.
type inputs struct {
	tpl   *template.Template
	decls []declare.Declaration
	// sources, when set, collect into the engine before it assembles
	// (--mcp, --mcp-url, --files; see sources.go).
	sources *sourceOptions
	// warn, when set, is told that the learned state could not be stored.
	warn io.Writer
	// files are the memories files' SHA-256 hashes, for the audit record.
	files []outcome.Input
	// tools are the tool definitions of --tools.
	tools []declare.Tool
}

// loadInputs loads the template and every memories file, reporting every
// problem of every file (not only the first).
func loadInputs(tplPath string, memPaths []string, budget int) (*inputs, error) {
	var (
		errs []error
		tpl  *template.Template
		err  error
	)
	if tplPath != "" {
		tpl, err = template.LoadFile(tplPath)
		if err != nil {
			errs = append(errs, err)
		} else if budget != 0 {
			if tpl, err = tpl.WithBudget(budget); err != nil {
				errs = append(errs, fmt.Errorf("--budget: %w", err))
			}
		}
	}
	// The files are one set: a tool result may answer a call of another
	// file, and a request_id may not be declared in two. Loading stops at
	// the engine's block bound rather than after reading everything.
	var all []declare.Declaration
	var files []outcome.Input
	if len(memPaths) > 0 {
		if all, err = (declare.Config{MaxBlocks: contextasm.DefaultMaxBlocks}).LoadFiles(memPaths...); err != nil {
			errs = append(errs, err)
		}
		// The audit record names the version of each file: hashed as read
		// right after loading it, streamed.
		sums, err := hashFiles(memPaths)
		if err != nil {
			errs = append(errs, err)
		}
		for i, sum := range sums {
			files = append(files, outcome.Input{Name: "file:" + memPaths[i], SHA256: hex.EncodeToString(sum[:])})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &inputs{tpl: tpl, decls: all, files: files}, nil
}

// loadFallback loads the templates of -t after the first, each with
// --budget and --tokenizer as the first, reporting every problem.
func loadFallback(paths []string, budget int, tokenizer string) ([]*template.Template, error) {
	var (
		tpls []*template.Template
		errs []error
	)
	for _, p := range paths {
		tpl, err := template.LoadFile(p)
		if err == nil && budget != 0 {
			if tpl, err = tpl.WithBudget(budget); err != nil {
				err = fmt.Errorf("--budget: %w", err)
			}
		}
		if err == nil {
			tpl, err = withTokenizer(tpl, tokenizer)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		tpls = append(tpls, tpl)
	}
	return tpls, errors.Join(errs...)
}

// assemble runs one assembly over the inputs.
func assemble(ctx context.Context, cfg contextasm.Config, in *inputs, req contextasm.Request) (*contextasm.Result, error) {
	eng, err := contextasm.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := eng.Declare(in.decls...); err != nil {
		return nil, err
	}
	if err := eng.DeclareTools(in.tools...); err != nil {
		return nil, err
	}
	for _, f := range in.files {
		eng.SetInput(f.Name, f.SHA256)
	}
	if in.sources != nil {
		stop, err := in.sources.start(ctx, eng)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	res, err := eng.Assemble(ctx, req)
	if err != nil {
		eng.Close()
		return nil, err
	}
	// What this render kept, cut and dropped counts in the learned state's
	// heat (a no-op without --state). A store out of reach does not stop
	// the render: the result says state_unavailable.
	if err := eng.Close(); err != nil {
		if !errors.Is(err, learned.ErrUnavailable) || in.warn == nil {
			return nil, err
		}
		fmt.Fprintf(in.warn, "render: warning: this render's heat was not stored: %v\n", err)
	}
	return res, nil
}

// writeResult writes res in format; color asks for colour in a report.
func writeResult(w io.Writer, res *contextasm.Result, format string, color bool) error {
	switch format {
	case "report", "html":
		return writeView(w, res, format, color)
	case "openai", "anthropic", "responses":
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, res.Body(), "", "  "); err != nil {
			return err
		}
		pretty.WriteByte('\n')
		_, err := w.Write(pretty.Bytes())
		return err
	case "json":
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(res.Dump())
	default:
		_, err := io.WriteString(w, res.Text) // it ends with a newline
		return err
	}
}

// chatFormat returns the chat format an output format asks to assemble
// for, or zero for the text format's assembly.
func chatFormat(format string) chat.Format {
	f, _ := chat.ParseFormat(format)
	return f
}
