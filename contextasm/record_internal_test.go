package contextasm

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/contextasm/contextasm/contextasm/internal/assemble"
)

// recordJSON is what encoding/json writes for r with HTML escaping off:
// what appendRecord must write.
func recordJSON(t testing.TB, r recorded) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

var recordTexts = []string{"", "HISTORY", "mem-00042", "<b>&</b>", "quote \" \\", "tab\tline\n", "源 é", "\u2028", "bad \xff", "0123456789abcdef"}

// randomRecord is a record with every field set or left out at random.
func randomRecord(rng *rand.Rand) recorded {
	text := func() string { return recordTexts[rng.IntN(len(recordTexts))] }
	d := &assemble.Decision{Version: rng.IntN(3), Now: time.Date(2026, 12, 7, 16, rng.IntN(60), 5, rng.IntN(3)*500_000_000, time.UTC).In(time.FixedZone("", 3600*(rng.IntN(5)-2))), Query: text()}
	if rng.IntN(5) > 0 {
		d.Sections = []assemble.SectionDecision{}
	}
	for range rng.IntN(4) {
		s := assemble.SectionDecision{Name: text()}
		if rng.IntN(3) == 0 {
			f := []float64{0, -0.25, 1.0 / 3, 1e-9, 2.5e22}[rng.IntN(5)]
			s.Floor = &f
		}
		for range rng.IntN(4) {
			s.Blocks = append(s.Blocks, assemble.WrittenBlock{ID: text(), Key: text(), Span: text(), Cut: rng.IntN(3) * 17, Message: rng.IntN(2) == 0,
				Variant: rng.IntN(3), Cleared: rng.IntN(2) == 0, Recalled: rng.IntN(2) == 0})
		}
		d.Sections = append(d.Sections, s)
	}
	r := recorded{Decision: d}
	switch rng.IntN(3) {
	case 0:
		r.Tools = []string{}
	case 1:
		r.Tools = []string{text(), text()}
	}
	return r
}

// TestRecordAsJSON: appendRecord writes what encoding/json writes (HTML
// escaping off) for every shape of record, and a JSON reader reads the
// decision back.
func TestRecordAsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		r := randomRecord(rng)
		got, err := appendRecord([]byte("x"), r)
		if err != nil {
			t.Fatal(err)
		}
		if want := append([]byte("x"), recordJSON(t, r)...); !bytes.Equal(got, want) {
			t.Fatalf("record %d:\n%s\nencoding/json:\n%s", i, got, want)
		}
		var back assemble.Decision
		if err := json.Unmarshal(got[1:], &back); err != nil || back.Version != r.Version || !back.Now.Equal(r.Now) || len(back.Sections) != len(r.Sections) {
			t.Fatalf("record %d read back as %+v (%v)", i, back, err)
		}
	}
}

// TestRecordErrors: what JSON cannot hold is an error, as encoding/json
// has it, not a damaged record.
func TestRecordErrors(t *testing.T) {
	nan := math.NaN()
	for name, d := range map[string]*assemble.Decision{
		"a NaN floor":   {Sections: []assemble.SectionDecision{{Name: "S", Floor: &nan}}},
		"year 10000":    {Now: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"year before 0": {Now: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, err := appendRecord(nil, recorded{Decision: d}); err == nil {
			t.Errorf("%s: no error", name)
		}
		if _, err := json.Marshal(recorded{Decision: d}); err == nil {
			t.Errorf("%s: encoding/json has no error either: the test is wrong", name)
		}
	}
}

func FuzzRecordAsJSON(f *testing.F) {
	f.Add(uint64(1), "HISTORY", "mem-1", "<&>", int64(0), uint64(0))
	f.Add(uint64(7), "\xff", "\u2029", "", int64(1765124705123456789), math.Float64bits(1e-7))
	f.Fuzz(func(t *testing.T, seed uint64, name, id, span string, unixNano int64, floor uint64) {
		r := randomRecord(rand.New(rand.NewPCG(seed, 3)))
		r.Now = time.Unix(0, unixNano).UTC()
		fl := math.Float64frombits(floor)
		r.Sections = append(r.Sections, assemble.SectionDecision{Name: name, Floor: &fl, Blocks: []assemble.WrittenBlock{{ID: id, Key: name, Span: span}}})
		got, err := appendRecord(nil, r)
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if werr := enc.Encode(r); (err != nil) != (werr != nil) {
			t.Fatalf("error %v, encoding/json's %v", err, werr)
		} else if err == nil && !bytes.Equal(got, bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
			t.Fatalf("%s\nencoding/json:\n%s", got, want.Bytes())
		}
	})
}
