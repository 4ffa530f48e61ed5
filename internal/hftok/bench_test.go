package hftok

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// corpusText is the corpus as one text, the input of the counting
// benchmarks (bench/README.md reports them beside the JS reference): all
// of it, or only its ordinary texts (not the long runs of one character,
// which no piece cache helps). testdata/ref/bench.js reads the same.
func corpusText(tb testing.TB, ordinary bool) string {
	var b strings.Builder
	for _, c := range corpus(tb) {
		if ordinary && longRun(c.Name) {
			continue
		}
		b.WriteString(c.Text)
		b.WriteString("\n")
	}
	return b.String()
}

func longRun(name string) bool {
	switch name {
	case "cjk_long", "whitespace_runs", "long_number":
		return true
	}
	return strings.HasPrefix(name, "repeat_")
}

func BenchmarkCount(b *testing.B) {
	benchCount(b, corpusText(b, false))
}

func BenchmarkCountOrdinary(b *testing.B) {
	benchCount(b, corpusText(b, true))
}

func benchCount(b *testing.B, text string) {
	for _, fam := range families {
		b.Run(fam, func(b *testing.B) {
			tok := loadFamily(b, fam)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				tok.Count(text)
			}
		})
	}
}

// BenchmarkLoad reports the time to load each vocabulary and the heap it
// holds once loaded (heap-MB).
func BenchmarkLoad(b *testing.B) {
	for _, fam := range families {
		b.Run(fam, func(b *testing.B) {
			p := familyFile(b, fam)
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			var heap uint64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				tok, err := Parse(data, p)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap = after.HeapAlloc - before.HeapAlloc
				runtime.KeepAlive(tok)
			}
			b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
		})
	}
}
