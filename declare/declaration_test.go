package declare_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contextasm/contextasm/declare"
)

func TestWeightAndTrustDefaults(t *testing.T) {
	tests := []struct {
		name          string
		weight, trust *float64
		wantW, wantT  float64
	}{
		{"absent means the default", nil, nil, 0.5, 0.5},
		{"explicit zero is zero, not the default", ptr(0.0), ptr(0.0), 0, 0},
		{"explicit values", ptr(0.8), ptr(0.99), 0.8, 0.99},
	}
	for _, tt := range tests {
		d := declare.Declaration{SemanticWeight: tt.weight, TrustScore: tt.trust}
		if got := d.Weight(); got != tt.wantW {
			t.Errorf("%s: Weight() = %v, want %v", tt.name, got, tt.wantW)
		}
		if got := d.Trust(); got != tt.wantT {
			t.Errorf("%s: Trust() = %v, want %v", tt.name, got, tt.wantT)
		}
	}
	if declare.DefaultSemanticWeight != 0.5 || declare.DefaultTrustScore != 0.5 {
		t.Error("the documented defaults are 0.5")
	}

	// The difference between absent and zero survives decoding.
	decls := mustLoad(t, line(`"request_id":"a"`)+"\n"+line(`"request_id":"b","semantic_weight":0,"trust_score":0`))
	if decls[0].Weight() != 0.5 || decls[0].Trust() != 0.5 {
		t.Errorf("absent in JSON: Weight %v, Trust %v, want 0.5, 0.5", decls[0].Weight(), decls[0].Trust())
	}
	if decls[1].Weight() != 0 || decls[1].Trust() != 0 {
		t.Errorf("0 in JSON: Weight %v, Trust %v, want 0, 0", decls[1].Weight(), decls[1].Trust())
	}
}

func TestIsRequired(t *testing.T) {
	tests := []struct {
		required bool
		priority *float64
		want     bool
	}{
		{false, nil, false},
		{true, nil, true},
		{false, ptr(1.0), true}, // MCP priority 1: effectively required
		{false, ptr(0.99), false},
		{false, ptr(0.0), false},
		{true, ptr(0.0), true}, // an explicit required wins over a low priority
	}
	for _, tt := range tests {
		d := declare.Declaration{Required: tt.required, Priority: tt.priority}
		if got := d.IsRequired(); got != tt.want {
			p := "nil"
			if tt.priority != nil {
				p = strconv.FormatFloat(*tt.priority, 'g', -1, 64)
			}
			t.Errorf("required=%v priority=%s: IsRequired() = %v, want %v", tt.required, p, got, tt.want)
		}
	}
}

func TestForAssistant(t *testing.T) {
	tests := []struct {
		audience []string
		want     bool
	}{
		{nil, true},
		{[]string{}, true},
		{[]string{"user"}, false},
		{[]string{"assistant"}, true},
		{[]string{"user", "assistant"}, true},
		{[]string{"assistant", "user"}, true},
	}
	for _, tt := range tests {
		d := declare.Declaration{Audience: tt.audience}
		if got := d.ForAssistant(); got != tt.want {
			t.Errorf("audience %q: ForAssistant() = %v, want %v", tt.audience, got, tt.want)
		}
	}
}

func TestStaleFrom(t *testing.T) {
	until := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	modified := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	week := declare.Duration(168 * time.Hour)
	tests := []struct {
		name     string
		until    *declare.Time
		modified *time.Time
		stale    *declare.Duration
		want     time.Time
		ok       bool
	}{
		{"valid_until minus stale_after", &declare.Time{Time: until}, nil, &week,
			time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), true},
		{"last_modified plus stale_after", nil, &modified, &week,
			time.Date(2026, 11, 8, 12, 0, 0, 0, time.UTC), true},
		{"valid_until wins over last_modified", &declare.Time{Time: until}, &modified, &week,
			time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), true},
		{"no stale_after: never stale", &declare.Time{Time: until}, &modified, nil, time.Time{}, false},
		{"stale_after alone: nothing to count from", nil, nil, &week, time.Time{}, false},
	}
	for _, tt := range tests {
		d := declare.Declaration{ValidUntil: tt.until, LastModified: tt.modified, StaleAfter: tt.stale}
		got, ok := d.StaleFrom()
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("%s: StaleFrom() = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestTimeUnmarshalJSON(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	unix := strconv.FormatInt(at.Unix(), 10)
	tests := []struct {
		in   string
		want time.Time
		tol  time.Duration // allowed error: float seconds are not exact
	}{
		{`"2026-11-30T09:00:00Z"`, at, 0},
		{`"2026-11-30T10:00:00+01:00"`, at, 0},
		{`"2026-11-30T09:00:00.123456789Z"`, at.Add(123456789), 0},
		{unix, at, 0},
		{" " + unix + " ", at, 0},
		{unix + ".5", at.Add(500 * time.Millisecond), 0},
		{unix + ".123", at.Add(123 * time.Millisecond), time.Microsecond},
		{"1.7960292e9", time.Unix(1796029200, 0), 0},
		{"0", time.Unix(0, 0), 0},
		{"-1.5", time.Unix(0, 0).Add(-1500 * time.Millisecond), 0},
		// The range is what RFC 3339 can write back: from year 0000 on.
		{"-62167219200", time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{"1e11", time.Unix(1e11, 0), 0},
	}
	for _, tt := range tests {
		var got declare.Time
		if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
			t.Errorf("Unmarshal(%s): %v", tt.in, err)
			continue
		}
		if diff := got.Sub(tt.want).Abs(); diff > tt.tol {
			t.Errorf("Unmarshal(%s) = %v, want %v (±%v)", tt.in, got.Time, tt.want, tt.tol)
		}
	}

	for _, in := range []string{
		`"tomorrow"`, `"2026-11-30"`, `"2026-11-30 09:00:00Z"`, `""`,
		`true`, `[]`, `{}`, `1e12`, `-1e12`, `1.00000001e11`,
		`-62167219200.5`, `-1e11`, // before year 0000: RFC 3339 cannot write it back
	} {
		var got declare.Time
		err := json.Unmarshal([]byte(in), &got)
		if err == nil {
			t.Errorf("Unmarshal(%s) = %v, want an error", in, got.Time)
		} else if !strings.Contains(err.Error(), "RFC 3339") {
			t.Errorf("Unmarshal(%s): %v, want an error that says what is accepted", in, err)
		}
	}
	// Direct callers are not protected by the JSON grammar.
	var got declare.Time
	if err := got.UnmarshalJSON([]byte("NaN")); err == nil {
		t.Errorf("UnmarshalJSON(NaN) = %v, want an error", got.Time)
	}
}

func TestDurationUnmarshalJSON(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{`"168h"`, 168 * time.Hour},
		{`"1h30m"`, 90 * time.Minute},
		{`"1.5s"`, 1500 * time.Millisecond},
		{`"-1h"`, -time.Hour}, // decodes; Validate rejects it (see TestValidate)
		{`604800`, 168 * time.Hour},
		{`1.5`, 1500 * time.Millisecond},
		{`0.000000001`, time.Nanosecond},
		{`0`, 0},
		{`9e9`, 9e9 * time.Second}, // about 285 years: still fits
	}
	for _, tt := range tests {
		var got declare.Duration
		if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
			t.Errorf("Unmarshal(%s): %v", tt.in, err)
			continue
		}
		if time.Duration(got) != tt.want {
			t.Errorf("Unmarshal(%s) = %v, want %v", tt.in, time.Duration(got), tt.want)
		}
	}

	for _, in := range []string{
		`"a week"`, `"7d"`, `""`, `-5`, `true`, `"168"`,
		`1e10`, // 1e19 ns does not fit an int64: must be refused, not wrapped
		`9.3e9`,
	} {
		var got declare.Duration
		err := json.Unmarshal([]byte(in), &got)
		if err == nil {
			t.Errorf("Unmarshal(%s) = %v, want an error", in, time.Duration(got))
		} else if !strings.Contains(err.Error(), "168h") {
			t.Errorf("Unmarshal(%s): %v, want an error that says what is accepted", in, err)
		}
	}
	var got declare.Duration
	if err := got.UnmarshalJSON([]byte("NaN")); err == nil {
		t.Errorf("UnmarshalJSON(NaN) = %v, want an error", time.Duration(got))
	}
}

func TestTimeAndDurationMarshalRoundTrip(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 30, 9, 0, 0, 123456789, time.UTC),
		time.Date(2026, 11, 30, 10, 0, 0, 0, time.FixedZone("CET", 3600)),
		time.Unix(1796029200, 5e8).UTC(),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), // the extremes Unix seconds may name
		time.Unix(1e11, 0).UTC(),
	} {
		b, err := json.Marshal(declare.Time{Time: tm})
		if err != nil {
			t.Fatal(err)
		}
		// Written as an RFC 3339 string, which is itself accepted input.
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("Marshal(%v) = %s, not a JSON string", tm, b)
		}
		if p, err := time.Parse(time.RFC3339Nano, s); err != nil || !p.Equal(tm) {
			t.Errorf("Marshal(%v) = %s, not the same instant in RFC 3339", tm, b)
		}
		var back declare.Time
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(tm) {
			t.Errorf("round trip of %v via %s = %v, %v", tm, b, back.Time, err)
		}
	}

	for _, d := range []time.Duration{168 * time.Hour, time.Nanosecond, 90*time.Minute + 1500*time.Millisecond} {
		b, err := json.Marshal(declare.Duration(d))
		if err != nil {
			t.Fatal(err)
		}
		if want := strconv.Quote(d.String()); string(b) != want {
			t.Errorf("Marshal(%v) = %s, want %s", d, b, want)
		}
		var back declare.Duration
		if err := json.Unmarshal(b, &back); err != nil || time.Duration(back) != d {
			t.Errorf("round trip of %v via %s = %v, %v", d, b, time.Duration(back), err)
		}
	}

	// Inside a declaration, through the pointer fields.
	d := base()
	d.ValidUntil = &declare.Time{Time: time.Unix(1796029200, 0).UTC()}
	d.StaleAfter = ptr(declare.Duration(24 * time.Hour))
	b, err := json.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"valid_until":"2026-11-30T09:00:00Z"`) || !strings.Contains(string(b), `"stale_after":"24h0m0s"`) {
		t.Errorf("Marshal = %s", b)
	}
}
