package pattern

import "regexp/syntax"

// Size returns the number of instructions of expr's compiled program, as
// package regexp compiles it (Perl flags, simplified).
func Size(expr string) (int, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, err
	}
	return len(prog.Inst), nil
}
