package jsonx

import (
	"math"
	"math/bits"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendString appends s as a JSON string, as encoding/json writes it
// with SetEscapeHTML(false).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// hexDigits are the digits of a \u escape, lower case as encoding/json
// writes them.
const hexDigits = "0123456789abcdef"

// AppendEscaped appends s escaped as the inside of a JSON string, as
// encoding/json escapes it without HTML escaping: '"' and '\\' with a
// backslash, \b \f \n \r \t short, other control characters as \u00XX,
// U+2028 and U+2029 as \u2028 and \u2029 (JavaScript takes them for line
// ends), and each byte that is not part of valid UTF-8 as \ufffd; every
// other byte, '<', '>' and '&' among them, as it is.
func AppendEscaped(dst []byte, s string) []byte {
	start := 0 // s[start:i] is still to copy, as it is
	for i := 0; i < len(s); {
		// Most text is ASCII that needs no escape: pass it eight bytes at
		// a time, up to the first that may need one.
		if i+8 <= len(s) {
			m := special8(load8(s[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			start = i + size
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// special8 returns the high bit of each byte of x, eight bytes of text
// (the first in the lowest byte), that is below ' ', '"', '\\' or 0x80 and
// above, or zero when none is. Each test is the classic one for a byte of
// a word below a bound, (x-n*ones)&^x&high: it says exactly whether there
// is one, and the lowest bit it sets is the first, though a borrow may set
// bits above that; so the lowest bit of the mask is the first byte that
// needs a look, exactly.
func special8(x uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	return (x | (x-ones*' ')&^x | (quote-ones)&^quote | (backslash-ones)&^backslash) & high
}

// load8 returns the first eight bytes of s, the first in the lowest byte
// (one load, where the machine has it).
func load8(s string) uint64 {
	_ = s[7] // one bounds check
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// AppendFloat appends f as encoding/json writes a float64: the shortest
// decimal that reads back as f, in exponent form (its exponent without a
// leading zero) below 1e-6 and from 1e21 on. It reports false, appending
// nothing, for NaN and the infinities, which JSON cannot hold.
func AppendFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json cleans it up
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// AppendTime appends t as encoding/json writes a time.Time: RFC 3339 with
// nanoseconds, quoted; an error for a year outside 0 to 9999, as
// encoding/json's.
func AppendTime(dst []byte, t time.Time) ([]byte, error) {
	dst = append(dst, '"')
	dst, err := t.AppendText(dst)
	if err != nil {
		return nil, err
	}
	return append(dst, '"'), nil
}
