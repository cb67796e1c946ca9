package replay_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/replay/nvme"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// The tests of this file close gaps that mutation testing found in a
// replay's result figures: each fails on a small change to the code under
// it (named in its comment) that the rest of the package's tests let
// through.

// TestTimelineBytesAreLogical: the per-second timeline's read and write
// bytes of a tier add up to the tier's logical bytes, each in its own
// column: on a direct-I/O backend that moves whole 4 KiB blocks, where a
// 1000-byte object moves 4096 bytes, physical bytes in the timeline, or
// writes counted as reads, show.
func TestTimelineBytesAreLogical(t *testing.T) {
	nb, err := nvme.New(filepath.Join(t.TempDir(), "nvme"), nvme.Options{Direct: true, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	var recs []schema.Record
	for i := range 8 {
		k := fmt.Sprint("k", i)
		recs = append(recs, rec(0, schema.OpWrite, 1000, schema.TierNVMe, k, schema.PhasePrefill, uint64(i+1)),
			rec(0, schema.OpRead, 1000, schema.TierNVMe, k, schema.PhaseDecode, uint64(i+1)))
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "nvme"}
	cfg.Speed = 0
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"nvme": nb})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Tiers, func(tt schema.TierTotals) bool { return tt.Tier == "Tier-2" })
	if i < 0 {
		t.Fatalf("no Tier-2 in %+v", res.Tiers)
	}
	tier := res.Tiers[i]
	if tier.ReadBytes != 8000 || tier.WriteBytes != 8000 || tier.PhysicalReadBytes == tier.ReadBytes {
		t.Fatalf("test setup: Tier-2 %+v: want 8000 logical bytes each way, more physical", tier)
	}
	var read, written, ops int64
	for _, s := range res.Timeline {
		read += s.ReadBytes[schema.TierNVMe]
		written += s.WriteBytes[schema.TierNVMe]
		ops += s.Ops[schema.TierNVMe]
	}
	if read != tier.ReadBytes || written != tier.WriteBytes || ops != 16 {
		t.Errorf("timeline: %d bytes read, %d written, %d ops; want %d, %d, 16", read, written, ops, tier.ReadBytes, tier.WriteBytes)
	}
}

// TestResultRecordsSpeed: the result says the speed it ran at, which
// decides whether storage_health judges lag (--speed max does not: its
// rows are not released on a schedule, so a backlog is no failure).
func TestResultRecordsSpeed(t *testing.T) {
	recs := writes(4, time.Millisecond)
	for _, speed := range []float64{0, 1000} {
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed = speed
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": newRAM(t, 16<<20)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Replay.Speed != speed {
			t.Errorf("--speed %g: result says %g", speed, res.Replay.Speed)
		}
		lagJudged := slices.ContainsFunc(res.Summary.StorageHealth.Criteria, func(c schema.Criterion) bool {
			return strings.HasPrefix(c.Name, results.ScheduleCriterion)
		})
		if lagJudged != (speed > 0) {
			t.Errorf("--speed %g: lag judged %v", speed, lagJudged)
		}
	}
}

// TestEmptyTraceSaysNothingMeasured: a trace with no rows gives a result
// that says it measured nothing, not a silent NO DATA.
func TestEmptyTraceSaysNothingMeasured(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Speed = 0
	res, err := runReplay(t, cfg, memTrace(t, nil), map[string]backend.Backend{"ram": newRAM(t, 16<<20)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, "NOTHING MEASURED") }) {
		t.Errorf("warnings %q: want NOTHING MEASURED", res.Warnings)
	}
	if res.Summary.StorageHealth.OverallStatus != results.HealthNoData {
		t.Errorf("storage_health %s, want NO_DATA", res.Summary.StorageHealth.OverallStatus)
	}
}

// TestTimelineLagP99: each second's lag figure is the P99 of the lags of
// the rows issued in it: with one second of distinct lags (40 rows 1 ms
// apart on one worker with 10 ms operations), it is the run's lag P99,
// apart from the P95.
func TestTimelineLagP99(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := writes(40, time.Millisecond)
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed, cfg.Workers, cfg.QueueDepth = 1, 1, 1
		slow := fault.Delay(newRAM(t, 16<<20), 10*time.Millisecond)
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": slow})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Timeline) != 1 || res.Lag.P99US == res.Lag.P95US {
			t.Fatalf("test setup: %d seconds, lag p95 %v p99 %v", len(res.Timeline), res.Lag.P95US, res.Lag.P99US)
		}
		if got := res.Timeline[0].LagP99US; got != res.Lag.P99US {
			t.Errorf("second 0 lag p99 %v us, want the run's %v (p95 %v)", got, res.Lag.P99US, res.Lag.P95US)
		}
	})
}

// TestStorageTokensFromSidecar: the KV tokens a run moved through Tier-2
// come from the trace's sidecar (bytes per token over its tensor
// parallelism) when the configuration gives none: 64 KiB written and 64
// KiB read at 1024 bytes per token over TP 2 (512 a rank) are 256 tokens.
func TestStorageTokensFromSidecar(t *testing.T) {
	recs := []schema.Record{
		rec(0, schema.OpWrite, 64<<10, schema.TierNVMe, "K", schema.PhasePrefill, 1),
		rec(0, schema.OpRead, 64<<10, schema.TierNVMe, "K", schema.PhaseDecode, 2),
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
	cfg.Speed = 0
	src := memTrace(t, recs)
	src.Meta = &trace.Meta{FormatVersion: trace.FormatVersion, Tool: "kvtrace", BytesPerToken: 1024, TensorParallel: 2,
		Counts: trace.MetaCounts{Rows: int64(len(recs))}}
	res, err := runReplay(t, cfg, src, map[string]backend.Backend{"ram": newRAM(t, 16<<20)})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Summary.StorageKVTokensPerSec
	if got == nil {
		t.Fatalf("storage_kv_tokens_per_sec not measured: %q", res.Summary.NotMeasured[results.NotMeasuredKVTokens])
	}
	if want := 256 / res.WallS; *got != want {
		t.Errorf("storage_kv_tokens_per_sec %v, want 256 tokens over %v s = %v", *got, res.WallS, want)
	}
}

// TestStorageTokensTracesDisagree: traces whose sidecars give the same
// bytes per token but another tensor parallelism do not say how many
// tokens a byte is: the figure is not measured, not one trace's taken
// for both.
func TestStorageTokensTracesDisagree(t *testing.T) {
	var srcs []replay.Source
	for i, tp := range []int{1, 2} {
		recs := []schema.Record{
			rec(0, schema.OpWrite, 64<<10, schema.TierNVMe, fmt.Sprint("K", i), schema.PhasePrefill, 1),
			rec(0, schema.OpRead, 64<<10, schema.TierNVMe, fmt.Sprint("K", i), schema.PhaseDecode, 2),
		}
		src := memTrace(t, recs)
		src.Name = fmt.Sprint("trace", i)
		src.Meta = &trace.Meta{FormatVersion: trace.FormatVersion, Tool: "kvtrace", BytesPerToken: 1024, TensorParallel: tp,
			Counts: trace.MetaCounts{Rows: int64(len(recs))}}
		srcs = append(srcs, src)
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
	cfg.Speed = 0
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	plan, err := replay.Prepare(context.Background(), &cfg, srcs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), &cfg, plan, srcs, map[string]backend.Backend{"ram": newRAM(t, 16<<20)}, replay.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Summary.StorageKVTokensPerSec; got != nil {
		t.Errorf("storage_kv_tokens_per_sec %v from traces of TP 1 and 2, want not measured", *got)
	}
	if _, ok := res.Summary.NotMeasured[results.NotMeasuredKVTokens]; !ok {
		t.Errorf("not measured %q: want %s named", res.Summary.NotMeasured, results.NotMeasuredKVTokens)
	}
}
