package main

import (
	"errors"
	"fmt"
	"io"
	"os"

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
	in, err := loadOptional(inf.template, inf.memories)
	if err != nil {
		return err
	}
	warnDeclarations(stderr, "validate", in.decls)
	if in.tpl != nil {
		fmt.Fprintf(stdout, "ok: template %s: %d sections, budget %d, %s, %s\n", inf.template, in.tpl.NumSections(), in.tpl.Budget(), in.tpl.Encoding(), in.tpl.Fingerprint())
		// Blocks no section takes are legal, but worth a word.
		for _, d := range in.decls {
			if _, ok := in.tpl.SectionFor(d.MemoryType); !ok {
				fmt.Fprintf(stdout, "note: %q (%s) has no section in this template and will be reported as no_section\n", d.RequestID, d.MemoryType)
			}
		}
	}
	if len(inf.memories) > 0 {
		fmt.Fprintf(stdout, "ok: %d declarations in %d file(s)\n", len(in.decls), len(inf.memories))
	}
	return nil
}

// loadOptional is loadInputs for validate, where either side may be absent.
func loadOptional(tplPath string, memories []string) (*inputs, error) {
	if tplPath != "" {
		if len(memories) == 0 {
			tpl, err := template.LoadFile(tplPath)
			if err != nil {
				return nil, err
			}
			return &inputs{tpl: tpl}, nil
		}
		return loadInputs(tplPath, memories, 0)
	}
	in, err := loadInputs("", memories, 0)
	return in, err
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
