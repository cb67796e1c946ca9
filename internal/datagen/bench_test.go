package datagen

import (
	"strconv"
	"testing"
)

// BenchmarkFill measures generation per call of Fill; the design's bar is
// 5 GB/s per core (run with -cpu 1).
func BenchmarkFill(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20} {
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			g := New(1)
			p := make([]byte, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var off int64
			for b.Loop() {
				g.Fill(p, "user_12_seq_7", 3, off)
				off += int64(size)
			}
			b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// BenchmarkFillParallel measures Fill from GOMAXPROCS goroutines at once,
// 1 MiB each.
func BenchmarkFillParallel(b *testing.B) {
	g := New(1)
	const size = 1 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		p := make([]byte, size)
		var off int64
		for pb.Next() {
			g.Fill(p, "user_12_seq_7", 3, off)
			off += size
		}
	})
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkVerify measures checking 1 MiB read back.
func BenchmarkVerify(b *testing.B) {
	g := New(1)
	p := make([]byte, 1<<20)
	g.Fill(p, "user_12_seq_7", 3, 0)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := g.Verify(p, "user_12_seq_7", 3, 0); !ok {
			b.Fatal("verify failed")
		}
	}
	b.ReportMetric(float64(len(p))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}
