package replay_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// tierOf returns res's totals of tier, failing when it has none.
func tierOf(t *testing.T, res *schema.Result, tier schema.Tier) schema.TierTotals {
	t.Helper()
	for _, tt := range res.Tiers {
		if tt.Tier == tier.String() {
			return tt
		}
	}
	t.Fatalf("no %s totals in %+v", tier, res.Tiers)
	return schema.TierTotals{}
}

// The tests of rates run in synctest bubbles (pacing_test.go): the delays
// and the busy times are the bubble's clock's, exact at any load.

// TestDeviceRateStaysWhenAnotherTierIsSlow replays one trace twice, the
// second time with the NVMe tier slowed down (a latency decorator, as a
// throttled disk): the run takes longer, so the RAM tier's offered load
// (bytes over the run) falls, but its device rate (bytes over the time it
// was busy) stays, since nothing slowed the RAM tier itself. Its busy time
// is the union of its reads' and writes' intervals: they ran one after
// another, so the tier's is their sum, not the longest of its cells'.
func TestDeviceRateStaysWhenAnotherTierIsSlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const size = 256 << 10
		var recs []schema.Record
		// Request 1: RAM writes, then reads, one after another; requests 2 to
		// 5: NVMe writes, four at a time, as many as the queue depth, beside
		// request 1. Both tiers' blocks go to psync engines (a decorated
		// backend hides the file descriptor io_uring needs, as a kernel without
		// io_uring does): the slow disk's blocks must not hold the RAM tier's.
		for i := range 20 {
			recs = append(recs, rec(0, schema.OpWrite, size, schema.TierCPU, fmt.Sprint("r", i), schema.PhasePrefill, 1))
		}
		for i := range 20 {
			recs = append(recs, rec(0, schema.OpRead, size, schema.TierCPU, fmt.Sprint("r", i), schema.PhaseDecode, 1))
		}
		for i := range 32 {
			recs = append(recs, rec(0, schema.OpWrite, size, schema.TierNVMe, fmt.Sprint("n", i), schema.PhasePrefill, uint64(2+i%4)))
		}
		run := func(nvmeDelay time.Duration) *schema.Result {
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", "slow"}
			cfg.Speed, cfg.QueueDepth = 0, 4
			res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{
				"ram":  fault.Delay(newRAM(t, 16<<20), 10*time.Millisecond),
				"slow": fault.Delay(newRAM(t, 16<<20), nvmeDelay),
			})
			if err != nil || res.Replay.RowsDone != int64(len(recs)) {
				t.Fatalf("%v; %d of %d rows", err, res.Replay.RowsDone, len(recs))
			}
			return res
		}
		// On the bubble's clock the runs take 0.4 s (RAM's 40 operations of
		// 10 ms in sequence) and 1.2 s (8 rounds of 4 NVMe writes of
		// 150 ms): the device rates are the same, the offered load falls
		// to a third.
		fast, slow := run(0), run(150*time.Millisecond)
		if fast.WallS != 0.4 || slow.WallS != 1.2 {
			t.Fatalf("the runs took %.3f s and, with the slow NVMe tier, %.3f s; want 0.4 and 1.2", fast.WallS, slow.WallS)
		}
		f, s := tierOf(t, fast, schema.TierCPU), tierOf(t, slow, schema.TierCPU)
		for _, x := range []struct {
			name         string
			fast, slow   float64
			lo, hi       float64
			offeredFalls bool
		}{
			{"read device rate", f.ReadDeviceBps, s.ReadDeviceBps, 0.999, 1.001, false},
			{"write device rate", f.WriteDeviceBps, s.WriteDeviceBps, 0.999, 1.001, false},
			{"read offered load", f.ReadOfferedBps, s.ReadOfferedBps, 0.33, 0.34, true},
			{"write offered load", f.WriteOfferedBps, s.WriteOfferedBps, 0.33, 0.34, true},
		} {
			if x.fast <= 0 || x.slow <= 0 {
				t.Errorf("RAM %s: %g and %g bytes/s: not measured", x.name, x.fast, x.slow)
				continue
			}
			if r := x.slow / x.fast; r < x.lo || r > x.hi {
				t.Errorf("RAM %s with a slow NVMe tier is %.2fx the fast run's (%.0f vs %.0f bytes/s), want %.2f to %.2f",
					x.name, r, x.slow, x.fast, x.lo, x.hi)
			}
		}
		for _, tt := range []schema.TierTotals{f, s} {
			// 20 reads and 20 writes of 10 ms each, one after another.
			if tt.ReadBusyS < 0.19 || tt.WriteBusyS < 0.19 {
				t.Errorf("RAM busy: reads %.3f s, writes %.3f s, want 0.2 s each at least", tt.ReadBusyS, tt.WriteBusyS)
			}
			if sum := tt.ReadBusyS + tt.WriteBusyS; tt.BusyS < 0.95*sum || tt.BusyS > sum*1.001 {
				t.Errorf("RAM busy %.3f s, want the union of reads' %.3f s and writes' %.3f s that never overlapped",
					tt.BusyS, tt.ReadBusyS, tt.WriteBusyS)
			}
			if want := float64(tt.ReadBytes) / tt.ReadBusyS; tt.ReadDeviceBps != want {
				t.Errorf("RAM read device rate %g, want read bytes over read busy time %g", tt.ReadDeviceBps, want)
			}
		}
		// The document says so under its keys: a tier's (and a cell's)
		// bandwidth is the device rate, the same in both runs; the offered
		// load, which fell, has its own name.
		for _, res := range []*schema.Result{fast, slow} {
			tier, cell := documentRates(t, res, schema.TierCPU)
			if want := tier["read_bytes"] / tier["read_busy_s"]; tier["read_bandwidth_bytes_per_s"] != want ||
				tier["write_bandwidth_bytes_per_s"] != tier["write_bytes"]/tier["write_busy_s"] {
				t.Errorf("RAM tier in the document: read_bandwidth_bytes_per_s %g, want read bytes over read busy time %g (%v)",
					tier["read_bandwidth_bytes_per_s"], want, tier)
			}
			if want := tier["read_bytes"] / res.WallS; tier["read_offered_bytes_per_s"] != want {
				t.Errorf("RAM tier in the document: read_offered_bytes_per_s %g, want read bytes over the run %g", tier["read_offered_bytes_per_s"], want)
			}
			if want := cell["logical_bytes"] / cell["busy_s"]; cell["bandwidth_bytes_per_s"] != want || cell["offered_bytes_per_s"] != cell["logical_bytes"]/res.WallS {
				t.Errorf("RAM read cell in the document: bandwidth_bytes_per_s %g, want %g over its busy time; %v", cell["bandwidth_bytes_per_s"], want, cell)
			}
		}
		ft, _ := documentRates(t, fast, schema.TierCPU)
		st, _ := documentRates(t, slow, schema.TierCPU)
		if r := st["read_bandwidth_bytes_per_s"] / ft["read_bandwidth_bytes_per_s"]; r < 0.999 || r > 1.001 {
			t.Errorf("the document's RAM read_bandwidth_bytes_per_s with a slow NVMe tier is %.2fx the fast run's", r)
		}
	})
}

// documentRates encodes res as kvreplay writes it and returns the numbers
// of its tier's totals and of its tier's first Read cell, by key.
func documentRates(t *testing.T, res *schema.Result, tier schema.Tier) (tt, cell map[string]float64) {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Tiers, Cells []map[string]any }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	numbers := func(m map[string]any) map[string]float64 {
		out := map[string]float64{}
		for k, v := range m {
			if f, ok := v.(float64); ok {
				out[k] = f
			}
		}
		return out
	}
	for _, m := range doc.Tiers {
		if m["tier"] == tier.String() && tt == nil {
			tt = numbers(m)
		}
	}
	for _, m := range doc.Cells {
		if m["tier"] == tier.String() && m["op"] == schema.OpRead.String() && cell == nil {
			cell = numbers(m)
		}
	}
	if tt == nil || cell == nil {
		t.Fatalf("no %s totals or read cell in %s", tier, b)
	}
	return tt, cell
}

// TestTierBusyCountsConcurrentOperationsOnce: ten reads that run at once
// keep the tier busy for about one read's time, not ten.
func TestTierBusyCountsConcurrentOperationsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const size, delay = 64 << 10, 50 * time.Millisecond
		var recs []schema.Record
		for i := range 10 {
			recs = append(recs, rec(0, schema.OpWrite, size, schema.TierCPU, fmt.Sprint("k", i), schema.PhasePrefill, uint64(i+1)))
		}
		for i := range 10 {
			recs = append(recs, rec(time.Second, schema.OpRead, size, schema.TierCPU, fmt.Sprint("k", i), schema.PhaseDecode, uint64(i+11)))
		}
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed = 10 // the reads start together, after the writes
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), delay)})
		if err != nil {
			t.Fatal(err)
		}
		tt := tierOf(t, res, schema.TierCPU)
		if tt.ReadBusyS < delay.Seconds() || tt.ReadBusyS > 5*delay.Seconds() {
			t.Errorf("ten concurrent reads of %v each kept the tier busy %.3f s, want about %v (their union, not their sum)", delay, tt.ReadBusyS, delay)
		}
		if tt.BusyS > tt.ReadBusyS+tt.WriteBusyS+1e-9 || tt.BusyS < tt.ReadBusyS {
			t.Errorf("busy %.3f s, reads %.3f s, writes %.3f s", tt.BusyS, tt.ReadBusyS, tt.WriteBusyS)
		}
	})
}
