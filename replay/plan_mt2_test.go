package replay_test

import (
	"context"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// Tests written from mutation testing: each pins a rule of the plan that a
// one-token change of the code broke without another test failing.

// planOf is the plan of cfg (Tier-2 on nvme unless cfg maps it) over one
// trace of recs per element of traces.
func planOf(t *testing.T, cfg replay.Config, traces ...[]schema.Record) *replay.Plan {
	t.Helper()
	if cfg.TierMap[schema.TierNVMe] == "" {
		cfg.TierMap = [schema.NumTiers]string{"", "ram", "nvme"}
	}
	var srcs []replay.Source
	for _, recs := range traces {
		srcs = append(srcs, memTrace(t, recs))
	}
	plan, err := replay.Prepare(context.Background(), &cfg, srcs)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func nvmeRec(at time.Duration, op schema.Op, key string, size int64) schema.Record {
	return schema.Record{Time: at, Op: op, Size: size, Tier: schema.TierNVMe, Key: []byte(key), Phase: schema.PhasePrefill}
}

// TestPlanRoundsObjectsUp: an object of 100 bytes takes a whole block of
// the plan's alignment, in the peak and the largest object.
func TestPlanRoundsObjectsUp(t *testing.T) {
	plan := planOf(t, replay.DefaultConfig(), []schema.Record{nvmeRec(0, schema.OpWrite, "a", 100)})
	if plan.Peak["nvme"] != 4096 || plan.MaxObjectOf["nvme"] != 4096 {
		t.Errorf("peak %d, largest object %d; want 4096 each", plan.Peak["nvme"], plan.MaxObjectOf["nvme"])
	}
}

// TestPlanReachIsEachKeysMost: Reach adds the most bytes each key had on
// the tier, not its last size.
func TestPlanReachIsEachKeysMost(t *testing.T) {
	plan := planOf(t, replay.DefaultConfig(), []schema.Record{
		nvmeRec(0, schema.OpWrite, "a", 8192),
		nvmeRec(time.Second, schema.OpDelete, "a", 8192),
		nvmeRec(2*time.Second, schema.OpWrite, "b", 4096),
		nvmeRec(3*time.Second, schema.OpWrite, "a", 4096),
	})
	if got := plan.Reach["nvme"]; got != 12288 {
		t.Errorf("reach %d, want 12288 (a's 8 KiB and b's 4 KiB)", got)
	}
}

// TestPlanFromSidecarsScalesAndAdds: without a prescan, the peaks of the
// sidecars are scaled by --size-scale and added over the traces.
func TestPlanFromSidecarsScalesAndAdds(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", "nvme"}
	cfg.SizeScale = 0.25
	meta := &trace.Meta{PeakLiveBytes: map[string]int64{"Tier-2": 8 << 20}}
	src := replay.Source{Name: "pipe", Meta: meta, Open: func() (*trace.Reader, error) { t.Fatal("read"); return nil, nil }}
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src, src})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.FromMeta || plan.Peak["nvme"] != 4<<20 {
		t.Errorf("from sidecars %v, peak %d; want 4 MiB (2 x 8 MiB x 1/4)", plan.FromMeta, plan.Peak["nvme"])
	}
}

// TestPlanSidecarWithoutPeaks: a sidecar that has no peak_live_bytes
// says nothing of what its trace keeps live: the plan is empty, as a
// pipe's without one, not a peak of 0 (which sized the RAM arena at its
// 1 MiB floor, and the run stopped at its first larger object).
func TestPlanSidecarWithoutPeaks(t *testing.T) {
	cfg := replay.DefaultConfig()
	src := replay.Source{Name: "pipe", Meta: &trace.Meta{}, Open: func() (*trace.Reader, error) { t.Fatal("read"); return nil, nil }}
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	if plan.FromMeta || len(plan.Peak) != 0 {
		t.Errorf("from sidecars %v, peaks %v; want no plan", plan.FromMeta, plan.Peak)
	}
}

// TestPlanCapacityCapsPeakAndReach: with --capacity, the NVMe tier's
// planned peak and reach are at most the capacity.
func TestPlanCapacityCapsPeakAndReach(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.Capacity = 1 << 20
	var recs []schema.Record
	for i, k := range []string{"a", "b", "c", "d"} {
		recs = append(recs, nvmeRec(time.Duration(i)*time.Second, schema.OpWrite, k, 1<<20))
	}
	plan := planOf(t, cfg, recs)
	if plan.Peak["nvme"] != 1<<20 || plan.Reach["nvme"] != 1<<20 {
		t.Errorf("peak %d, reach %d; want the 1 MiB capacity", plan.Peak["nvme"], plan.Reach["nvme"])
	}
}

// TestPlanWindowStaysClosed: past a row beyond the window, an open loop
// releases nothing more, even a row whose own time lies within it.
func TestPlanWindowStaysClosed(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.Duration, cfg.Speed = 5*time.Second, 1
	plan := planOf(t, cfg, []schema.Record{
		nvmeRec(0, schema.OpWrite, "a", 4096),
		nvmeRec(10*time.Second, schema.OpWrite, "b", 4096),
		nvmeRec(time.Second, schema.OpWrite, "c", 4096),
	})
	if plan.WindowRows != 1 {
		t.Errorf("%d rows in the window, want 1", plan.WindowRows)
	}
}

// TestPlanClosedLoopRequestsWhole: a closed loop plans a request that
// starts in the window with all its rows, the later ones too.
func TestPlanClosedLoopRequestsWhole(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.Duration, cfg.Speed, cfg.ClosedLoop = 2*time.Second, 1, true
	r := func(at time.Duration, key string, req uint64) schema.Record {
		rec := nvmeRec(at, schema.OpWrite, key, 4096)
		rec.Request, rec.User = req, 1
		return rec
	}
	plan := planOf(t, cfg, []schema.Record{r(0, "a", 1), r(3*time.Second, "b", 1), r(4*time.Second, "c", 2)})
	if plan.WindowRows != 2 {
		t.Errorf("%d rows in the window, want 2 (request 1 whole, request 2 not)", plan.WindowRows)
	}
}

// TestPlanSpanAndObjects: the span counts from the first row, and the
// objects of several traces add up.
func TestPlanSpanAndObjects(t *testing.T) {
	plan := planOf(t, replay.DefaultConfig(),
		[]schema.Record{nvmeRec(5*time.Second, schema.OpWrite, "a", 4096), nvmeRec(7*time.Second, schema.OpWrite, "b", 4096)},
		[]schema.Record{nvmeRec(5*time.Second, schema.OpWrite, "a", 4096), nvmeRec(6*time.Second, schema.OpWrite, "c", 4096), nvmeRec(6*time.Second, schema.OpWrite, "d", 4096)})
	if plan.Span != 2*time.Second || plan.Objects != 5 {
		t.Errorf("span %v, %d objects; want 2s, 5", plan.Span, plan.Objects)
	}
}

// TestWindowAndExtentEdges: a window under a nanosecond is one, not the
// whole trace; the extent file leaves a quarter of the peak and eight of
// the largest objects for fragmentation.
func TestWindowAndExtentEdges(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.Duration, cfg.Speed = 1, 0.5
	if w := replay.WindowOf(&cfg); w != 1 {
		t.Errorf("WindowOf(1 ns at 0.5) = %v, want 1ns", w)
	}
	const peak, big = 400 << 20, 8 << 20
	if got := replay.ExtentBytes(peak, big); got < peak+peak/4+8*big {
		t.Errorf("ExtentBytes(%d, %d) = %d, want at least %d", peak, big, got, peak+peak/4+8*big)
	}
}

// TestPlanSampleLeftOutRows: in the plan of a closed loop of --users 1
// (user 1 replayed, user 2 left out), a left-out request's Delete of a key
// the replayed user wrote is replayed (the trace's LRU freeing it), so
// the peak is one object beside the cold j; and a key the left-out user only read (a
// lookup allocates no key) is a plain cold object of the sample, not one
// a left-out user wrote.
func TestPlanSampleLeftOutRows(t *testing.T) {
	const mib = 1 << 20
	user := func(r schema.Record, u uint64) schema.Record { r.User = u; return r }
	recs := []schema.Record{
		user(rec(0, schema.OpWrite, mib, schema.TierCPU, "k", schema.PhasePrefill, 1), 1),
		user(rec(time.Millisecond, schema.OpRead, 4096, schema.TierCPU, "j", schema.PhaseDecode, 2), 2),
		user(rec(2*time.Millisecond, schema.OpDelete, mib, schema.TierCPU, "k", schema.PhaseDecode, 2), 2),
		user(rec(3*time.Millisecond, schema.OpWrite, mib, schema.TierCPU, "m", schema.PhasePrefill, 3), 1),
		user(rec(4*time.Millisecond, schema.OpDelete, mib, schema.TierCPU, "m", schema.PhaseDecode, 3), 1),
		user(rec(5*time.Millisecond, schema.OpRead, 4096, schema.TierCPU, "j", schema.PhaseDecode, 4), 1),
	}
	cfg := closedConfig()
	cfg.Users = 1
	plan := prepare(t, &cfg, memTrace(t, recs))
	if len(plan.Users) != 2 {
		t.Fatalf("users %v, want 2", plan.Users)
	}
	if plan.Peak["ram"] != mib+4096 {
		t.Errorf("ram peak %d, want 1 MiB and 4 KiB (k deleted by user 2's request before m; j, cold, live from the start)", plan.Peak["ram"])
	}
	if len(plan.Cold) != 1 || plan.Cold[0].LeftOut || plan.LeftOut != 0 {
		t.Errorf("cold %+v, %d left out; want j alone, not left out", plan.Cold, plan.LeftOut)
	}
}
