package jsonx

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// encodingJSON is what encoding/json writes for v with HTML escaping off.
func encodingJSON(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

var texts = []string{"", "plain", `quote " and \ backslash`, "<b>&amp;</b>", "tab\tnew\nline\rcr\b\f", "\x00\x01\x1f\x7f",
	"é 源 😀", "\u2028\u2029", "bad \xff utf-8 \xe6\x97", "twelve bytes<", "exactly8", "0123456\""}

func TestAppendStringAsEncodingJSON(t *testing.T) {
	for _, s := range texts {
		if got, want := AppendString([]byte("x"), s), append([]byte("x"), encodingJSON(t, s)...); !bytes.Equal(got, want) {
			t.Errorf("%q: %s, encoding/json %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range texts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), encodingJSON(t, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: %s, encoding/json %s", s, got, want)
		}
	})
}

var floats = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1.0 / 3, 123456789, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 1.5e300, -2.5e-10, math.SmallestNonzeroFloat64, math.MaxFloat64}

func TestAppendFloatAsEncodingJSON(t *testing.T) {
	for _, f := range floats {
		got, ok := AppendFloat([]byte("x"), f)
		if want := append([]byte("x"), encodingJSON(t, f)...); !ok || !bytes.Equal(got, want) {
			t.Errorf("%v: %s (%v), encoding/json %s", f, got, ok, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got, ok := AppendFloat([]byte("x"), f); ok || string(got) != "x" {
			t.Errorf("%v: %q, %v; want nothing appended, false", f, got, ok)
		}
	}
}

func FuzzAppendFloat(f *testing.F) {
	for _, v := range floats {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		got, ok := AppendFloat(nil, v)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if ok {
				t.Fatalf("%v: %s, want false", v, got)
			}
			return
		}
		if want := encodingJSON(t, v); !ok || !bytes.Equal(got, want) {
			t.Fatalf("%v: %s, encoding/json %s", v, got, want)
		}
	})
}

func TestAppendTimeAsEncodingJSON(t *testing.T) {
	for _, v := range []time.Time{{}, time.Date(2026, 12, 7, 17, 30, 1, 5, time.UTC), time.Date(1, 2, 3, 4, 5, 6, 700, time.FixedZone("", -3600*5-1800))} {
		got, err := AppendTime([]byte("x"), v)
		if want := append([]byte("x"), encodingJSON(t, v)...); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%v: %s (%v), encoding/json %s", v, got, err, want)
		}
	}
	if _, err := AppendTime(nil, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)); err == nil {
		t.Error("year 10000: no error")
	}
}
