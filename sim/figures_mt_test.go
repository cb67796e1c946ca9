package sim

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// The tests of this file close gaps that mutation testing found in the
// figures kvtrace reports beside kv-cache.py's: each fails on a small
// change to the code under it (named in its comment) that the rest of the
// package's tests let through.

// TestStatisticsFromTheTrace: the statistics' totals are the trace's own
// rows: total read bytes are the hits' reads (not the demotions'), total
// write bytes every new object's write, in GiB too; the read/write
// ratio is their quotient; each tier's bandwidth is its own bytes over
// the run; kvbench's bytes by tier are every row's; the throughput is
// tokens over the run; the objects made are the writes of new objects;
// the multi-turn hit rate is its hits over its lookups.
func TestStatisticsFromTheTrace(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumUsers, cfg.Duration, cfg.GenerationMode = 20, 20*time.Second, "none"
	cfg.GPUMemGB, cfg.CPUMemGB, cfg.Seed = 1, 2, 42
	var hitReads, newWrites, newObjects int64
	var rowBytes [schema.NumTiers][schema.NumOps]int64
	res, err := Run(context.Background(), &cfg, func(r *schema.Record) error {
		rowBytes[r.Tier][r.Op] += r.Size
		switch {
		case r.Op == schema.OpRead && r.Phase != schema.PhaseEvict:
			hitReads += r.Size
		case r.Op == schema.OpWrite && r.Phase != schema.PhaseEvict:
			newWrites += r.Size
			newObjects++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c, s, x := res.Summary.CacheStats, res.Summary, res.Kvbench
	if hitReads == 0 || newWrites == 0 || rowBytes[schema.TierGPU][schema.OpRead] == 0 || rowBytes[schema.TierGPU][schema.OpWrite] == 0 ||
		s.MultiTurnStats.CacheHits == 0 {
		t.Fatalf("test setup: reads %d writes %d, GPU rows %v, multi-turn %+v: nothing to check", hitReads, newWrites,
			rowBytes[schema.TierGPU], s.MultiTurnStats)
	}
	const gib = 1 << 30
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	if c.TotalReadBytes != hitReads || c.TotalWriteBytes != newWrites {
		t.Errorf("total bytes read %d written %d, want the trace's %d and %d", c.TotalReadBytes, c.TotalWriteBytes, hitReads, newWrites)
	}
	if !near(c.TotalReadGB, float64(hitReads)/gib) || !near(c.TotalWriteGB, float64(newWrites)/gib) {
		t.Errorf("total GB read %v written %v, want %v and %v GiB", c.TotalReadGB, c.TotalWriteGB, float64(hitReads)/gib, float64(newWrites)/gib)
	}
	if want := float64(hitReads) / float64(newWrites); c.ReadWriteRatio != want {
		t.Errorf("read_write_ratio %v, want %v", c.ReadWriteRatio, want)
	}
	for _, b := range []struct {
		name      string
		got, want float64
	}{
		{"gpu read", c.GPUReadBandwidth, c.GPUReadGB / s.ElapsedTime},
		{"gpu write", c.GPUWriteBandwidth, c.GPUWrittenGB / s.ElapsedTime},
		{"cpu read", c.CPUReadBandwidth, c.CPUReadGB / s.ElapsedTime},
		{"cpu write", c.CPUWriteBandwidth, c.CPUWrittenGB / s.ElapsedTime},
		{"storage read", c.StorageReadBandwidth, c.StorageReadGB / s.ElapsedTime},
		{"storage write", c.StorageWriteBandwidth, c.StorageWrittenGB / s.ElapsedTime},
	} {
		if !near(b.got, b.want) {
			t.Errorf("%s bandwidth %v, want %v", b.name, b.got, b.want)
		}
	}
	if c.GPUReadBandwidth == c.GPUWriteBandwidth {
		t.Fatalf("test setup: GPU read and write bandwidths equal (%v)", c.GPUReadBandwidth)
	}
	for tier := range schema.Tier(schema.NumTiers) {
		if tier > schema.TierNVMe {
			continue
		}
		if w, r := x.TierBytesWritten[tier.String()], x.TierBytesRead[tier.String()]; w != rowBytes[tier][schema.OpWrite] || r != rowBytes[tier][schema.OpRead] {
			t.Errorf("%s bytes written %d read %d, want the rows' %d and %d", tier, w, r, rowBytes[tier][schema.OpWrite], rowBytes[tier][schema.OpRead])
		}
	}
	if want := float64(s.TotalTokens) / s.ElapsedTime; s.AvgThroughput != want || want == 0 {
		t.Errorf("avg throughput %v tokens/s, want %d over %v s", s.AvgThroughput, s.TotalTokens, s.ElapsedTime)
	}
	if x.Objects != newObjects {
		t.Errorf("objects %d, want the %d new objects the trace wrote", x.Objects, newObjects)
	}
	m := s.MultiTurnStats
	if want := float64(m.CacheHits) / float64(m.CacheHits+m.CacheMisses); m.HitRate != want {
		t.Errorf("multi-turn hit rate %v, want %v", m.HitRate, want)
	}
}

// TestStorageTokensOfDemotionsAcrossTP: at TP 2 a demotion to Tier-2
// moves its object's bytes over one rank's bytes per token (bytes per
// token over TP), as the other writes and the reads do.
func TestStorageTokensOfDemotionsAcrossTP(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Model, cfg.NumUsers, cfg.Duration, cfg.GenerationMode = "llama3.1-70b-instruct", 10, 20*time.Second, "none"
	cfg.GPUMemGB, cfg.CPUMemGB, cfg.Seed, cfg.NumGPUs, cfg.TensorParallel = 0, 1, 42, 2, 2
	var bytes, demoted float64
	res, err := Run(context.Background(), &cfg, func(r *schema.Record) error {
		if r.Tier != schema.TierNVMe {
			return nil
		}
		if r.Op == schema.OpWrite || r.Op == schema.OpRead && r.Phase != schema.PhaseEvict {
			bytes += float64(r.Size)
		}
		if r.Op == schema.OpWrite && r.Phase == schema.PhaseEvict {
			demoted += float64(r.Size)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if demoted == 0 {
		t.Fatal("test setup: no demotion to Tier-2")
	}
	perRank := float64(res.Kvbench.BytesPerToken / 2)
	got := res.Summary.CacheStats.StorageTokensProcessed
	if want := bytes / perRank; math.Abs(got-want) > 1e-6*want {
		t.Errorf("storage tokens processed %.1f, want the rows' bytes over %v bytes a rank's token: %.1f", got, perRank, want)
	}
}

// TestQoSMetricsFigures: a class's SLA figures: a request exactly at the
// target is within it; compliance is the share within; 19 of 20 within
// meets the SLA and 18 of 20 does not; the p95 is numpy's linear
// percentile and the mean the mean.
func TestQoSMetricsFigures(t *testing.T) {
	cfg := DefaultConfig()
	e := &engine{cfg: &cfg}
	target := cfg.QoS[0].TargetP95.Seconds()
	mk := func(within, late int) []float64 {
		var v []float64
		for i := range within {
			v = append(v, target*float64(i+1)/float64(within)) // the last exactly at the target
		}
		for i := range late {
			v = append(v, target*2+float64(i))
		}
		return v
	}
	for _, tt := range []struct {
		within, late int
		met          bool
	}{{19, 1, true}, {18, 2, false}, {20, 0, true}} {
		var byQoS [numQoSLevels][]float64
		byQoS[0] = mk(tt.within, tt.late)
		lat := append([]float64(nil), byQoS[0]...)
		q := e.qosMetrics(&byQoS)[cfg.QoS[0].Name]
		n := float64(tt.within + tt.late)
		if q.SLA == nil || q.SLA.Compliance != 1-float64(tt.late)/n || q.SLA.Met != tt.met || q.TotalRequests != int64(n) {
			t.Errorf("%d within, %d late: %+v, want compliance %v, met %v", tt.within, tt.late, q.SLA, 1-float64(tt.late)/n, tt.met)
			continue
		}
		// numpy: position 0.95*(n-1) between order statistics.
		pos := 0.95 * (n - 1)
		lo := int(pos)
		p95 := (lat[lo] + (lat[min(lo+1, len(lat)-1)]-lat[lo])*(pos-float64(lo))) * 1000
		var sum float64
		for _, v := range lat {
			sum += v
		}
		if math.Abs(q.SLA.ActualP95MS-p95) > 1e-9 || math.Abs(q.LatencyMS.P95-p95) > 1e-9 || math.Abs(q.LatencyMS.Mean-sum/n*1000) > 1e-9 {
			t.Errorf("%d within, %d late: p95 %v / %v, mean %v; want %v and %v", tt.within, tt.late, q.SLA.ActualP95MS, q.LatencyMS.P95,
				q.LatencyMS.Mean, p95, sum/n*1000)
		}
	}
}

// TestPercentilesMS: numpy's linear percentiles and the mean, in ms.
func TestPercentilesMS(t *testing.T) {
	p := percentilesMS([]float64{0.004, 0.001, 0.003, 0.002, 0.010})
	// Sorted 1, 2, 3, 4, 10 ms: p50 at position 2, p95 at 3.8, p99 at 3.96.
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"mean", p.Mean, 4}, {"p50", p.P50, 3}, {"p95", p.P95, 4 + 0.8*6}, {"p99", p.P99, 4 + 0.96*6}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s %v ms, want %v", c.name, c.got, c.want)
		}
	}
}

// TestHealthCriteriaWhereSamplesAre: no lookup at all gives no cache hit
// rate criterion (not a rate of 0 that fails); a CPU tier that was only
// written to still has its latency criterion.
func TestHealthCriteriaWhereSamplesAre(t *testing.T) {
	cfg := DefaultConfig()
	e := &engine{cfg: &cfg, cache: &cache{}}
	if got := e.healthCriteria(&CacheStats{}); len(got) != 0 {
		t.Errorf("criteria of a run without samples or lookups: %+v", got)
	}
	e.cache.stats.samples[schema.TierCPU][schema.OpWrite] = 3
	got := e.healthCriteria(&CacheStats{})
	if len(got) != 1 || got[0].Name != "CPU RAM P95 < 150ms" {
		t.Errorf("criteria of a run that only wrote Tier-1: %+v, want the CPU RAM one", got)
	}
}

// TestObjectsCountDeleted: the objects a run made are the new objects it
// wrote, those a bounded last tier deleted included.
func TestObjectsCountDeleted(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumUsers, cfg.Duration, cfg.GenerationMode = 20, 30*time.Second, "none"
	cfg.GPUMemGB, cfg.CPUMemGB, cfg.StorageCapacityGB, cfg.Seed = 0, 0, 20, 42
	var newObjects, deletes int64
	res, err := Run(context.Background(), &cfg, func(r *schema.Record) error {
		switch {
		case r.Op == schema.OpWrite && r.Phase != schema.PhaseEvict:
			newObjects++
		case r.Op == schema.OpDelete:
			deletes++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if deletes == 0 {
		t.Fatal("test setup: nothing deleted")
	}
	if x := res.Kvbench; x.Objects != newObjects || x.Deletes != deletes {
		t.Errorf("objects %d, deletes %d; want the trace's %d new objects and %d deletes", x.Objects, x.Deletes, newObjects, deletes)
	}
}
