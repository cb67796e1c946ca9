package sim

import (
	"context"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// mlperf8B is the MLPerf 8B submission workload of the design's
// performance bar: llama3.1-8b, 150 users, 600 s, generation none, no GPU
// tier, 4 GiB of CPU RAM.
func mlperf8B() Config {
	cfg := DefaultConfig()
	cfg.NumUsers, cfg.Duration, cfg.GenerationMode, cfg.GPUMemGB, cfg.CPUMemGB = 150, 600*time.Second, "none", 0, 4
	cfg.Seed = 42
	return cfg
}

// BenchmarkSimulateMLPerf8B times the simulation alone (rows discarded);
// cmd/kvtrace's benchmark times it with the zstd trace writer.
func BenchmarkSimulateMLPerf8B(b *testing.B) {
	cfg := mlperf8B()
	var rows int64
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), &cfg, func(*schema.Record) error { rows++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
