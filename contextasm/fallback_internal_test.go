package contextasm

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseAccept: Request.Accept is read without panicking; what it
// accepts is a version of digits and dots or a well-formed fingerprint,
// kept as given; what it refuses is ErrInvalid naming the entry.
func FuzzParseAccept(f *testing.F) {
	for _, s := range []string{"v1.2", "fp:sha256:0123456789abcdef", "1.2", "v", "v1..2", "fp:", "fp:sha256:0123456789ABCDEF", "v1.2.3.4", "v٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := parseAccept([]string{"v1.2", s})
		if err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "Request.Accept[1]") {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		switch {
		case strings.HasPrefix(s, "fp:"):
			if len(a.fingerprints) != 1 || "fp:"+a.fingerprints[0] != s || !wellFormedFingerprint(a.fingerprints[0]) {
				t.Fatalf("%q read as %+v", s, a)
			}
		default:
			if len(a.versions) != 2 || "v"+a.versions[1] != s || strings.Trim(a.versions[1], "0123456789.") != "" ||
				strings.Contains(a.versions[1], "..") || strings.HasPrefix(a.versions[1], ".") || strings.HasSuffix(a.versions[1], ".") {
				t.Fatalf("%q read as %+v", s, a)
			}
		}
	})
}
