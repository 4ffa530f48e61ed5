package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/template"
)

// The flags several commands share are defined here once, so that their
// names, help and checks cannot differ between commands.

// inputFlags name what to assemble: a template and memories files.
type inputFlags struct {
	template string
	// fallback are the templates of -t given again, in preference order,
	// when chain allows it (render's fallback chain).
	fallback []string
	chain    bool
	memories stringsFlag
}

func (f *inputFlags) register(fs *flag.FlagSet) {
	help := "template file (JSON)"
	if f.chain {
		help = "template file (JSON); give it again for fallbacks, in preference order: the first accepted (--accept) whose required blocks fit is used"
	}
	fs.Var(templateFlag{f}, "t", help)
	fs.Var(&f.memories, "m", "memories file (JSONL); repeatable")
}

// templateFlag is -t: the template, then with chain its fallbacks.
type templateFlag struct{ f *inputFlags }

func (t templateFlag) String() string {
	if t.f == nil {
		return ""
	}
	return strings.Join(append([]string{t.f.template}, t.f.fallback...), ",")
}

func (t templateFlag) Set(v string) error {
	switch {
	case v == "":
		return fmt.Errorf("empty template path")
	case t.f.template == "":
		t.f.template = v
	case t.f.chain:
		t.f.fallback = append(t.f.fallback, v)
	default:
		return fmt.Errorf("given twice (%s, %s): only render takes more than one template, as a fallback chain", t.f.template, v)
	}
	return nil
}

// acceptFlag is --accept: the protocol versions ("v1.2") and fingerprints
// ("fp:sha256:…") the model side accepts, repeatable or separated by
// commas; contextasm.Request.Accept checks each.
type acceptFlag []string

func (a *acceptFlag) String() string { return strings.Join(*a, ",") }

func (a *acceptFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return fmt.Errorf("empty entry in %q: give versions and fingerprints separated by commas, e.g. --accept v1.2,fp:sha256:0123456789abcdef", v)
		}
		*a = append(*a, s)
	}
	return nil
}

// requestFlags say who asks and when: the request an assembly is for.
type requestFlags struct {
	now     string
	session string
	user    string
	roles   rolesFlag
	// listHidden lists other tenants' excluded blocks by id (a trusted
	// debugging mode; see contextasm.Request.ListHidden).
	listHidden bool
}

func (f *requestFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.now, "now", "", "the instant to judge expiry and staleness at (RFC 3339; default: the current time)")
	fs.StringVar(&f.session, "session", "", "session id of the request")
	fs.StringVar(&f.user, "user", "", "user id of the request")
	fs.Var(&f.roles, "role", "a role the request holds; repeatable, or several separated by commas (--role a,b)")
	fs.BoolVar(&f.listHidden, "list-hidden", false, "trusted debugging: list blocks of other sessions, users and roles by id instead of counting them (never for output a tenant sees)")
}

// instant returns --now, or the current time when it is not given. cmd
// prefixes the error.
func (f *requestFlags) instant(cmd string) (time.Time, error) {
	if f.now == "" {
		return time.Now().UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, f.now)
	if err != nil {
		return time.Time{}, usagef("%s: --now %q is not an RFC 3339 time: give a date, a time and a zone, e.g. --now 2026-11-30T09:00:00Z or --now 2026-11-30T10:00:00+01:00", cmd, f.now)
	}
	return t, nil
}

// request returns the engine request the flags describe.
func (f *requestFlags) request(tpl *template.Template, now time.Time) contextasm.Request {
	return contextasm.Request{Template: tpl, Now: now, SessionID: f.session, UserID: f.user, Roles: f.roles, ListHidden: f.listHidden}
}

// rolesFlag collects --role: repeatable, and "a,b" is two roles (a role
// cannot contain a comma); an empty role is an error.
type rolesFlag []string

func (r *rolesFlag) String() string { return strings.Join(*r, ",") }

func (r *rolesFlag) Set(v string) error {
	for _, role := range strings.Split(v, ",") {
		role = strings.TrimSpace(role)
		if role == "" {
			return fmt.Errorf("empty role in %q: give role names separated by commas, e.g. --role loan-agent,credit-officer", v)
		}
		*r = append(*r, role)
	}
	return nil
}

// budgetFlag is --budget: unset is 0, and a given value must be positive.
type budgetFlag int

func (b *budgetFlag) String() string { return strconv.Itoa(int(*b)) }

func (b *budgetFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return fmt.Errorf("must be a positive number of tokens (got %q)", v)
	}
	*b = budgetFlag(n)
	return nil
}

// warnDeclarations warns about declarations that are valid but will not do
// what they seem to: violation_patterns without break_on_violation are
// never checked.
func warnDeclarations(stderr io.Writer, cmd string, decls []declare.Declaration) {
	for i := range decls {
		d := &decls[i]
		if len(d.ViolationPatterns) > 0 && !d.BreakOnViolation {
			fmt.Fprintf(stderr, "%s: warning: request_id %q: violation_patterns are ignored without \"break_on_violation\": true\n", cmd, d.RequestID)
		}
	}
}

// warnScopes warns when blocks scoped to a session or a user are declared
// but the request names none: they are all excluded, which is rarely meant.
func warnScopes(stderr io.Writer, f *requestFlags, decls []declare.Declaration) {
	var sessions, users int
	for i := range decls {
		switch decls[i].Scope {
		case declare.ScopeSession:
			sessions++
		case declare.ScopeUser:
			users++
		}
	}
	if sessions > 0 && f.session == "" {
		fmt.Fprintf(stderr, "render: warning: %s scoped to a session excluded: no --session given\n", plural(sessions, "block"))
	}
	if users > 0 && f.user == "" {
		fmt.Fprintf(stderr, "render: warning: %s scoped to a user excluded: no --user given\n", plural(users, "block"))
	}
}

// plural is "1 block", "2 blocks".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
