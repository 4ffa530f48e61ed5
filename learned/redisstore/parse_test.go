package redisstore

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func lp(s string) string { return strconv.Itoa(len(s)) + ":" + s }

// FuzzParseChange reads log entries as the apply script writes them: a
// well-formed one round-trips, and nothing makes the parser panic.
func FuzzParseChange(f *testing.F) {
	f.Add("t"+lp("a")+lp("550000000")+"s"+lp("k")+lp("1 2026-11-30T09:00:00Z {\"x\":1}")+"d"+lp("gone"), "w1", "3")
	f.Add("t"+lp("é:1")+lp("0"), "w", "1")
	f.Add("s"+lp("k")+lp("2 2026-11-30T09:00:00.5Z "), "w", "9")
	f.Add("t5:a", "w", "1")
	f.Add("x", "", "")
	f.Fuzz(func(t *testing.T, rec, writer, seq string) {
		m := redis.XMessage{ID: "7-0", Values: map[string]any{"w": writer, "s": seq, "c": rec}}
		c, err := parseChange(m)
		if err != nil {
			return
		}
		if c.Version != 7 || c.Writer != writer {
			t.Fatalf("change %+v from %q", c, rec)
		}
		// What parsed re-encodes to records that parse to the same.
		var again string
		for id, tr := range c.Trust {
			again += "t" + lp(id) + lp(strconv.FormatInt(int64(tr*1e9+0.5), 10))
		}
		for key, s := range c.Sessions {
			if s == nil {
				again += "d" + lp(key)
				continue
			}
			again += "s" + lp(key) + lp(strconv.FormatUint(s.Version, 10)+" "+s.Updated.Format(time.RFC3339Nano)+" "+string(s.Data))
		}
		c2, err := parseChange(redis.XMessage{ID: "7-0", Values: map[string]any{"w": writer, "s": seq, "c": again}})
		if err != nil || len(c2.Trust) != len(c.Trust) || len(c2.Sessions) != len(c.Sessions) {
			t.Fatalf("re-encoded %q: %+v, %v; first %+v", again, c2, err, c)
		}
	})
}
