package learned

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// logTexts are strings a record may hold, escapes and all.
var logTexts = []string{"", "w-1", "mem-00042", "<b>&</b>", "quote \" \\", "tab\tline\n", "源 é", "\u2028", "bad \xff"}

// randomLogRecord is a record with every field set or left out at random;
// its session data is JSON, compact or not, as Validate lets through.
func randomLogRecord(rng *rand.Rand) record {
	text := func() string { return logTexts[rng.IntN(len(logTexts))] }
	at := time.Date(2026, 12, 7, 17, rng.IntN(60), 1, rng.IntN(3)*250_000_000, time.UTC)
	r := record{Rev: rng.Uint64N(1 << 40), Epoch: text(), At: at}
	if rng.IntN(8) == 0 {
		return r // no batch
	}
	b := &Batch{Writer: text(), Seq: rng.Uint64N(1 << 20)}
	for range rng.IntN(3) {
		v := func() float64 { return []float64{0, 1, -0.5, 1.0 / 3, 1e-9, 1e6}[rng.IntN(6)] }
		b.Trust = append(b.Trust, TrustDelta{ID: text(), Base: v(), Add: v(), Floor: v(), Ceiling: v()})
	}
	for range rng.IntN(3) {
		b.Heat = append(b.Heat, HeatDelta{ID: text(), Delete: rng.IntN(3) == 0,
			Heat: Heat{Included: rng.Int64N(9), Dropped: rng.Int64N(9), Cut: rng.Int64N(3), Refs: rng.Int64N(3) - 1, StartRefs: 1 << 40}})
	}
	for range rng.IntN(3) {
		d := SessionDelta{Key: text(), Delete: rng.IntN(3) == 0, Base: rng.Uint64N(3)}
		if rng.IntN(2) == 0 {
			d.Updated = at.Add(-time.Minute).In(time.FixedZone("", 3600))
		}
		d.Data = json.RawMessage([]string{"", `{"v":1,"now":"x<y"}`, "{\"v\": 1,\n \"sections\": [ ]}", `[1,2,"a b"]`}[rng.IntN(4)])
		b.Sessions = append(b.Sessions, d)
	}
	r.Batch = b
	return r
}

// TestRecordAsJSON: a log line's record is what encoding/json writes for
// it (HTML escaping off), and the line reads back as the record.
func TestRecordAsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	read := 0
	for i := range 3000 {
		r := randomLogRecord(rng)
		line, err := encodeRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		if got := line[9:]; !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("record %d:\n%s\nencoding/json:\n%s", i, got, want.Bytes())
		}
		if r.Batch == nil {
			continue
		}
		back, err := decodeLine(line[:len(line)-1])
		if err != nil {
			if r.Batch.Seq == 0 || r.Batch.Writer == "" || r.Rev == 0 || r.Batch.Validate() != nil {
				continue // a record no store writes: decodeLine refuses it
			}
			t.Fatalf("record %d: %v", i, err)
		}
		read++
		if back.Rev != r.Rev || !back.At.Equal(r.At) || !reflect.DeepEqual(len(back.Batch.Sessions), len(r.Batch.Sessions)) {
			t.Fatalf("record %d read back as %+v", i, back)
		}
	}
	if read < 500 {
		t.Errorf("%d records read back: the test reads too few", read)
	}
}

// TestRecordRefusesWhatJSONCannotHold: a NaN trust is an error, not a
// damaged line (Validate refuses it before; encodeRecord on its own too).
func TestRecordRefusesWhatJSONCannotHold(t *testing.T) {
	r := record{Rev: 1, Batch: &Batch{Writer: "w", Seq: 1, Trust: []TrustDelta{{ID: "x", Add: math.NaN()}}}}
	if _, err := encodeRecord(r); err == nil {
		t.Error("a NaN trust encoded")
	}
	r = record{Rev: 1, At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Batch: &Batch{Writer: "w", Seq: 1}}
	if _, err := encodeRecord(r); err == nil {
		t.Error("year 10000 encoded")
	}
}
