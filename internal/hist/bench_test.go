package hist

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// BenchmarkRecord times recording into a Histogram; the bar is well under
// 100 ns.
func BenchmarkRecord(b *testing.B) {
	h := New()
	d := 137 * time.Microsecond
	for b.Loop() {
		h.Record(d)
		d += 7 * time.Microsecond
		if d > time.Second {
			d = time.Microsecond
		}
	}
}

// BenchmarkConcurrentRecord times Concurrent.Record from one goroutine
// (uncontended) and, with -cpu N, from N goroutines at once.
func BenchmarkConcurrentRecord(b *testing.B) {
	b.Run("uncontended", func(b *testing.B) {
		c := NewConcurrent()
		for b.Loop() {
			c.Record(137 * time.Microsecond)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		c := NewConcurrent()
		b.RunParallel(func(pb *testing.PB) {
			d := 137 * time.Microsecond
			for pb.Next() {
				c.Record(d)
				d += time.Microsecond
			}
		})
	})
}

// BenchmarkLatency times rendering (percentiles and encoding) a histogram
// of a wide distribution.
func BenchmarkLatency(b *testing.B) {
	h := New()
	for v := int64(1); v < 10_000_000; v = v*11/10 + 1 {
		h.Record(us(v))
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = h.Latency()
	}
}

// BenchmarkMergeLatencies times kvreport's merge: decoding and adding 100
// encoded histograms.
func BenchmarkMergeLatencies(b *testing.B) {
	h := New()
	for v := int64(1); v < 10_000_000; v = v*11/10 + 1 {
		h.Record(us(v))
	}
	ls := make([]schema.Latency, 100)
	for i := range ls {
		ls[i] = h.Latency()
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MergeLatencies(ls...); err != nil {
			b.Fatal(err)
		}
	}
}
