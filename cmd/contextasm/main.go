// Command contextasm renders, explains, validates and verifies the contexts
// the contextasm engine assembles for an agent's model.
//
// Usage:
//
//	contextasm demo                       the built-in example, end to end
//	contextasm render -t T.json -m M.jsonl [flags]
//	contextasm validate -t T.json -m M.jsonl
//	contextasm verify -t T.json RENDERED.txt
//	contextasm diff A.json B.json         what changed between two dumps
//
// Run "contextasm help" for every command and flag. Exit codes: 0 ok;
// 2 invalid input or usage; 3 budget too small for required blocks;
// 4 constraint violation; 5 required blocks in conflict; 6 no template
// of a fallback chain accepted; 7 tool refused (authorize); 1 anything
// else.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/fingerprint"
	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/hftok"
	"github.com/contextasm/contextasm/internal/strictjson"
	"github.com/contextasm/contextasm/internal/tokfile"
	"github.com/contextasm/contextasm/learned"
	"github.com/contextasm/contextasm/learned/redisstore"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/view"
)

// Exit codes (see docs/cli.md).
const (
	exitOK         = 0
	exitFailure    = 1
	exitUsage      = 2
	exitBudget     = 3
	exitViolation  = 4
	exitConflict   = 5
	exitNoTemplate = 6
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `contextasm decides what an AI agent's model sees.

Commands:
  demo [--format text|json|report|html] [-o FILE]
                                         render the built-in loan-compliance example
  render -t T.json -m M.jsonl [-m ...]   assemble and print a context
         [--budget N] [--now RFC3339] [--session ID] [--user ID] [--role R ...]
         [--state S.json|redis://…] [--fresh] [--audit AUDIT.jsonl] [-o FILE] [--tokenizer FILE]
         [--usage U.json]
         [--format text|json|report|html]
                                         report: why each block is in or out, for
                                         a terminal; html: the same as one page
         [--mcp NAME=COMMAND ...] [--mcp-url NAME=URL ...] [--files NAME=DIR ...]
         [--source-timeout 5s]
                                         sources (bench takes them too): MCP servers
                                         over stdio or HTTP, text files under DIR
         [--tools TOOLS.jsonl]           tool definitions a chat format carries
  authorize -t T.json --tools TOOLS.jsonl --tool NAME [--role R ...]
                                         may the request call the tool now (exit 7: refused)
  validate -t T.json -m M.jsonl [-m ...] check inputs, list all problems
  verify -t T.json [--budget N] RENDERED.txt
                                         check a rendering's header fingerprint
  feedback --state S.json|redis://… --render R.json --response OUT.txt
           [--format text|json] [--input-tokens N --usage U.json]
                                         read the model's citations and violations,
                                         move trust, count heat; with --input-tokens,
                                         learn an approx: encoding's margin
  count [--encoding E | --tokenizer FILE] [--usage U.json] [--format text|json] [FILE ...]
                                         token counts of files (stdin without files)
  bench -t T.json -m M.jsonl [--budgets 1024,2048,...] [--runs N] [--now RFC3339]
        [--session ID] [--user ID] [--role R ...] [--format text|json] [--turns N]
                                         per budget: kept/cut/dropped, cold, warm and
                                         per-turn assembly time, allocations, tokenizer calls;
                                         --turns: a conversation's prompt-cache reuse and cost
  heat --state S.json|redis://… [--format text|json]
                                         per block: renders included, dropped, cut,
                                         citations; hot-and-truncated flags
  end-session --state S.json|redis://… --session ID [--format text|json]
                                         release the decisions a session's renders follow
  serve [--listen 127.0.0.1:7411|unix:/path] [--keys KEYS.json] [--templates DIR]
        [--state S.json|redis://…] [--mcp]
                                         the engine as an HTTP/JSON service, with one
                                         engine per tenant (docs/server.md)
  diff A.json B.json [--format text|json]
                                         what changed between two render dumps
                                         (render --format json), and why
  view DUMP.json [--format report|html] [-o FILE]
                                         a saved render dump as the report or the page
  version                                the module version and build information
  help                                   this text; COMMAND --help for one command

Exit codes: 0 ok; 2 invalid input or usage; 3 budget too small for required
blocks; 4 constraint violation; 5 required blocks in conflict; 6 no template
-t names is accepted (--accept); 7 tool refused (authorize); 1 anything else.

--state takes a file or redis://[user:pass@]host:port/db?prefix=NAME
(rediss:// for TLS): hosts sharing one learn together (docs/fleet.md).
`

// commands are the commands run knows, for "did you mean".
var commands = []string{"demo", "render", "authorize", "validate", "verify", "feedback", "heat", "end-session", "bench", "count", "diff", "view", "serve", "help", "version"}

// run is the whole program, minus the process: tests drive it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "demo":
		err = runDemo(ctx, rest, stdout, stderr)
	case "render":
		err = runRender(ctx, rest, stdout, stderr)
	case "authorize":
		err = runAuthorize(ctx, rest, stdout, stderr)
	case "validate":
		err = runValidate(rest, stdout, stderr)
	case "verify":
		err = runVerify(rest, stdin, stdout, stderr)
	case "feedback":
		err = runFeedback(ctx, rest, stdout, stderr)
	case "heat":
		err = runHeat(ctx, rest, stdout, stderr)
	case "end-session":
		err = runEndSession(ctx, rest, stdout, stderr)
	case "bench":
		err = runBench(ctx, rest, stdout, stderr)
	case "count":
		err = runCount(rest, stdin, stdout, stderr)
	case "diff":
		err = runDiff(rest, stdout, stderr)
	case "view":
		err = runView(rest, stdout)
	case "serve":
		err = runServe(ctx, rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "version", "-version", "--version":
		writeVersion(stdout)
		return exitOK
	default:
		msg := fmt.Sprintf("contextasm: unknown command %q", cmd)
		if near := strictjson.Closest(strings.TrimLeft(cmd, "-"), commands); near != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", near)
		}
		fmt.Fprintln(stderr, msg+"; see contextasm help")
		return exitUsage
	}
	return report(err, stderr)
}

// usageError marks errors in how the program was called.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// report prints err (one problem a line) and maps it to an exit code.
func report(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	msg := strings.TrimRight(err.Error(), "\n")
	fmt.Fprintln(stderr, msg)
	var ue *usageError
	switch {
	case errors.As(err, &ue),
		errors.Is(err, declare.ErrInvalid),
		errors.Is(err, template.ErrInvalid),
		errors.Is(err, fingerprint.ErrNoHeader),
		errors.Is(err, contextasm.ErrInvalid),
		errors.Is(err, view.ErrInvalidDump),
		errors.Is(err, os.ErrNotExist):
		return exitUsage
	case errors.Is(err, contextasm.ErrBudgetTooSmall):
		return exitBudget
	case errors.Is(err, contextasm.ErrConflict):
		return exitConflict
	case errors.Is(err, contextasm.ErrNoTemplate):
		return exitNoTemplate
	case errors.Is(err, contextasm.ErrToolRefused), errors.Is(err, contextasm.ErrUnknownTool):
		return exitRefused
	case errors.Is(err, feedback.ErrConstraintViolation):
		return exitViolation
	case errors.Is(err, learned.ErrStateVersion), errors.Is(err, learned.ErrInvalidState), errors.Is(err, feedback.ErrResponseTooLarge),
		errors.Is(err, redisstore.ErrConfig):
		return exitUsage
	case invalidTokenizer(err):
		return exitUsage
	}
	return exitFailure
}

// invalidTokenizer reports whether err is about a tokenizer file that is
// not one: malformed, unsupported, too large, not regular, or outside the
// template's directory (invalid input, exit 2).
func invalidTokenizer(err error) bool {
	for _, target := range []error{hftok.ErrInvalid, hftok.ErrUnsupported, bpe.ErrInvalidRanks,
		tokfile.ErrInvalid, tokfile.ErrTooLarge, tokfile.ErrNotRegular, tokfile.ErrOutside} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// stringsFlag collects a repeatable flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

// parseError maps a flag parsing error: --help passes through (run exits
// 0 after Usage wrote the help), anything else is a usage error that
// points to the help.
func parseError(fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		if out, ok := fs.Output().(*helpOutput); ok {
			out.stdout.Write(out.help.Bytes())
		}
		return err
	}
	return flagError(fs, err)
}

// parse parses args and rejects stray positional arguments beyond want.
func parse(fs *flag.FlagSet, args []string, positional int) error {
	if err := fs.Parse(args); err != nil {
		return parseError(fs, err)
	}
	if fs.NArg() != positional {
		return usagef("%s: want %d argument(s) after the flags, got %d: %q", fs.Name(), positional, fs.NArg(), fs.Args())
	}
	return nil
}
