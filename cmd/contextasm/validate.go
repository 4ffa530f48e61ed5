package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/fingerprint"
	"github.com/contextasm/contextasm/template"
)

func runValidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", stdout)
	var inf inputFlags
	inf.register(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if inf.template == "" && len(inf.memories) == 0 {
		return usagef("validate: give -t TEMPLATE, -m MEMORIES, or both")
	}
	var tpl *template.Template
	var errs []error
	if inf.template != "" {
		var err error
		if tpl, err = template.LoadFile(inf.template); err != nil {
			errs = append(errs, err)
		}
	}
	var v validation
	if len(inf.memories) > 0 {
		if err := v.memories(inf.memories, tpl); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, w := range v.warnings {
		fmt.Fprintln(stderr, w)
	}
	if tpl != nil {
		fmt.Fprintf(stdout, "ok: template %s: %d sections, budget %d, %s, %s\n", inf.template, tpl.NumSections(), tpl.Budget(), tpl.Encoding(), tpl.Fingerprint())
		for _, n := range v.notes {
			fmt.Fprintln(stdout, n)
		}
	}
	if len(inf.memories) > 0 {
		fmt.Fprintf(stdout, "ok: %d declarations in %d file(s)\n", v.n, len(inf.memories))
	}
	return nil
}

// validateBatchLines is how many declarations validate decodes at a time.
const validateBatchLines = 4096

// validation is what validate has to say of memories files, gathered as
// they are read and said only once all of them are valid.
type validation struct {
	n        int
	warnings []string // for stderr
	notes    []string // for stdout, after the template's line
}

// memories checks the files as one set, streamed (declare.StreamFiles):
// validate holds a batch of declarations at a time, not the set, so its
// memory is the loader's index of request_ids, not the declarations (a
// million of them used to take 1.9 GB). A set whose declarations refer to
// each other (tool calls, supersedes, replaces) is loaded whole, as render
// loads it.
func (v *validation) memories(paths []string, tpl *template.Template) error {
	cfg := declare.Config{MaxBlocks: contextasm.DefaultMaxBlocks}
	err := cfg.StreamFiles(paths, validateBatchLines, func(batch []declare.Declaration) error {
		v.check(batch, tpl)
		return nil
	})
	if !errors.Is(err, declare.ErrReferences) {
		return err
	}
	*v = validation{}
	all, err := cfg.LoadFiles(paths...)
	if err != nil {
		return err
	}
	v.check(all, tpl)
	return nil
}

// check notes what is legal but worth a word: violation patterns that are
// never checked, and blocks no section of the template takes.
func (v *validation) check(decls []declare.Declaration, tpl *template.Template) {
	v.n += len(decls)
	var w strings.Builder
	warnDeclarations(&w, "validate", decls)
	if w.Len() > 0 {
		v.warnings = append(v.warnings, strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")...)
	}
	if tpl == nil {
		return
	}
	for i := range decls {
		d := &decls[i]
		if _, ok := tpl.SectionFor(d.MemoryType); !ok {
			v.notes = append(v.notes, fmt.Sprintf("note: %q (%s) has no section in this template and will be reported as no_section", d.RequestID, d.MemoryType))
		}
	}
}

func runVerify(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("verify", stdout)
	tplPath := fs.String("t", "", "template file (JSON)")
	var budgetV budgetFlag
	fs.Var(&budgetV, "budget", "the budget the rendering was made with, if render --budget overrode the template's")
	budget := (*int)(&budgetV)
	if err := fs.Parse(args); err != nil {
		return parseError(fs, err)
	}
	if fs.NArg() > 1 {
		return usagef("verify: want one RENDERED.txt (or - or nothing for stdin), got %q (see contextasm verify --help)", fs.Args())
	}
	if *tplPath == "" {
		return usagef("verify: -t TEMPLATE is required (see contextasm verify --help)")
	}
	tpl, err := template.LoadFile(*tplPath)
	if err != nil {
		return err
	}
	if *budget != 0 {
		if tpl, err = tpl.WithBudget(*budget); err != nil {
			return err
		}
	}
	name := fs.Arg(0)
	var text []byte
	if name == "" || name == "-" {
		name = "stdin"
		text, err = io.ReadAll(stdin)
	} else {
		text, err = os.ReadFile(name)
	}
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if err := fingerprint.Verify(string(text), tpl.Fingerprint()); err != nil {
		var me *fingerprint.MismatchError
		switch {
		case !errors.As(err, &me):
			return fmt.Errorf("verify: %s: %w", name, err)
		case me.Version != me.WantVersion:
			return &withMessage{fmt.Sprintf("verify: %s: the rendering speaks protocol v%s, this release v%s", name, me.Version, me.WantVersion), err}
		}
		budgetNote := fmt.Sprintf("its budget %d", tpl.Budget())
		if *budget == 0 {
			budgetNote += " (for a render made with --budget, give verify the same --budget)"
		}
		return &withMessage{fmt.Sprintf("verify: %s: the rendering has fingerprint %s, %s has %s: the template or %s differs",
			name, me.Fingerprint, *tplPath, me.WantFingerprint, budgetNote), err}
	}
	fmt.Fprintf(stdout, "ok: %s carries protocol v%s and fingerprint %s of %s\n", name, fingerprint.ProtocolVersion, tpl.Fingerprint(), *tplPath)
	return nil
}

// withMessage is an error that says msg and wraps err, for a message that
// already tells everything err would.
type withMessage struct {
	msg string
	err error
}

func (e *withMessage) Error() string { return e.msg }
func (e *withMessage) Unwrap() error { return e.err }
