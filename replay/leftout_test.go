package replay_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// TestLeftOutWrittenBeforeClock: a closed loop of --users 1 replays user
// 2, who reads x, an object that user 1 (left out) wrote. x is cold for
// the sample: the plan lists it with the cold objects, its peak counts it
// live from the start, and the run writes it before the clock, so that
// no write at all reaches the backend once the clock started (user 2's
// rows are reads and a delete). Before, the plan left x out of the cold
// objects and the run wrote it, untimed, inside the measured window, when
// user 2's read first came, sharing the device with the timed operations.
// On a RAM tier that holds x only when made at its read (1.5 MiB: the
// peak is z and x, 2 MiB, live from the start, 1 MiB when x is made at
// its read), the run falls back to that, and says so.
func TestLeftOutWrittenBeforeClock(t *testing.T) {
	const mib = 1 << 20
	user := func(r schema.Record, u uint64) schema.Record { r.User = u; return r }
	recs := []schema.Record{
		user(rec(0, schema.OpRead, mib, schema.TierCPU, "z", schema.PhaseDecode, 1), 2),
		user(rec(500*time.Microsecond, schema.OpDelete, mib, schema.TierCPU, "z", schema.PhaseEvict, 1), 2),
		user(rec(time.Millisecond, schema.OpWrite, mib, schema.TierCPU, "x", schema.PhasePrefill, 2), 1),
		user(rec(2*time.Millisecond, schema.OpRead, mib, schema.TierCPU, "x", schema.PhaseDecode, 3), 2),
	}
	cfg := closedConfig()
	cfg.Users = 1
	src := memTrace(t, recs)
	plan := prepare(t, &cfg, src)
	var cold []string
	for _, c := range plan.Cold {
		cold = append(cold, fmt.Sprintf("%s:%v", c.Key, c.LeftOut))
	}
	if got := strings.Join(cold, " "); got != "z:false x:true" || plan.LeftOut != 1 || plan.LeftOutBytes != mib {
		t.Errorf("cold objects %q, %d left out (%d bytes); want z, then x left out, 1 MiB", got, plan.LeftOut, plan.LeftOutBytes)
	}
	if plan.Peak["ram"] != 2*mib || plan.PeakLeftOut["ram"] != 2*mib || plan.PeakLazy["ram"] != mib {
		t.Errorf("peaks: %d, %d with x before the clock, %d with x made when read; want 2 MiB, 2 MiB, 1 MiB",
			plan.Peak["ram"], plan.PeakLeftOut["ram"], plan.PeakLazy["ram"])
	}
	a := replay.Advise(plan, &cfg, replay.Sizing{}, replay.Machine{MemAvailable: 1 << 40, MemTotal: 1 << 40, DiskFree: -1})
	if n := strings.Join(a.Notes, "\n"); !strings.Contains(n, "--users 1: 1 objects (0.00105 GB) that users left out wrote") || !strings.Contains(n, "ram 1.00 MiB") {
		t.Errorf("--plan's notes:\n%s", n)
	}
	for _, tc := range []struct {
		arena  int64
		before bool // x written before the clock
	}{
		{4 * mib, true},
		{3 * mib / 2, false},
	} {
		t.Run(fmt.Sprint("arena ", tc.arena), func(t *testing.T) {
			ram := fault.Record(newRAM(t, tc.arena))
			clockAt := -1 // the calls the backend saw when the clock started
			hooks := replay.Hooks{Ready: func() error { clockAt = len(ram.Log()); return nil }}
			res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": ram}, hooks)
			if err != nil {
				t.Fatal(err)
			}
			log := ram.Log()
			var after []string
			for _, c := range log[clockAt:] {
				if c.Op == fault.OpWrite {
					after = append(after, c.Key)
				}
			}
			reads := 0
			for _, c := range res.Cells {
				if c.Op == "Read" {
					reads += int(c.Ops)
				}
			}
			w := strings.Join(res.Warnings, "\n")
			warnedBefore := strings.Contains(w, "--users 1: 1 objects (0.00105 GB) that users left out wrote and the replayed users read were written untimed before the clock")
			warnedLazy := strings.Contains(w, "--users 1: 1 objects (0.00105 GB) that users left out wrote and the replayed users read were written untimed when first read, "+
				"inside the measured window, beside the timed operations, not before the clock (ram holds 1.50 MiB, less than the 2.00 MiB the trace keeps live with them)")
			if tc.before && (len(after) > 0 || !warnedBefore || warnedLazy) {
				t.Errorf("writes after the clock started: %v; warnings:\n%s", after, w)
			}
			if !tc.before && (len(after) != 1 || !strings.HasSuffix(after[0], "_x") || warnedBefore || !warnedLazy) {
				t.Errorf("writes after the clock started: %v, want x's; warnings:\n%s", after, w)
			}
			if reads != 2 || res.Replay.ColdPrepared != 2 || res.Replay.CapacityEvictions != 0 {
				t.Errorf("%d reads measured, %d cold objects written, %d evictions; want 2, 2 (z and x), none", reads, res.Replay.ColdPrepared, res.Replay.CapacityEvictions)
			}
		})
	}
}

// TestLeftOutDemotionNotPrepared: a replayed user's request that carries
// the trace's LRU demoting an object a left-out user wrote (an Evict Read
// of x on Tier-1 and its Evict Write to Tier-2) does not make x cold for
// the sample: x was live on Tier-1 only until the demotion, and written
// before the clock every such object would be live there at once (on
// kvtrace's MLPerf 8B trace at 1/4096, --users 10: 19,543 objects, 3.08
// GiB on a RAM tier whose peak is 824 KiB). x is made when the demotion
// reads it, and the peak is z's alone, then x's two copies during the
// move; the result says that x was written inside the measured window.
// Before, x was a cold object, live from the start beside z.
func TestLeftOutDemotionNotPrepared(t *testing.T) {
	const mib = 1 << 20
	user := func(r schema.Record, u uint64) schema.Record { r.User = u; return r }
	recs := []schema.Record{
		user(rec(0, schema.OpRead, mib, schema.TierCPU, "z", schema.PhaseDecode, 1), 2),
		user(rec(500*time.Microsecond, schema.OpDelete, mib, schema.TierCPU, "z", schema.PhaseEvict, 1), 2),
		user(rec(time.Millisecond, schema.OpWrite, mib, schema.TierCPU, "x", schema.PhasePrefill, 2), 1),
		user(rec(2*time.Millisecond, schema.OpRead, mib, schema.TierCPU, "x", schema.PhaseEvict, 3), 2),
		user(rec(2*time.Millisecond, schema.OpWrite, mib, schema.TierNVMe, "x", schema.PhaseEvict, 3), 2),
	}
	cfg := closedConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", "ram"}
	cfg.Users = 1
	src := memTrace(t, recs)
	plan := prepare(t, &cfg, src)
	var cold []string
	for _, c := range plan.Cold {
		cold = append(cold, fmt.Sprintf("%s:%v", c.Key, c.LeftOut))
	}
	if got := strings.Join(cold, " "); got != "z:false" || plan.LeftOut != 0 || plan.PeakLeftOut != nil {
		t.Errorf("cold objects %q, %d left out, peaks with them %v; want z alone, none left out", got, plan.LeftOut, plan.PeakLeftOut)
	}
	if plan.Peak["ram"] != 2*mib {
		t.Errorf("RAM peak %d, want 2 MiB (x's two copies while it moves)", plan.Peak["ram"])
	}
	ram := fault.Record(newRAM(t, 4*mib))
	clockAt := -1 // the calls the backend saw when the clock started
	hooks := replay.Hooks{Ready: func() error { clockAt = len(ram.Log()); return nil }}
	res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": ram}, hooks)
	if err != nil {
		t.Fatal(err)
	}
	// x's write inside the window is said, with why.
	if w := strings.Join(res.Warnings, "\n"); strings.Contains(w, "before the clock, with the trace's cold objects") ||
		!strings.Contains(w, "1 objects (0.00105 GB) read where the replay did not have them were written untimed when first read, inside the measured window") ||
		!strings.Contains(w, "under --users 1 they include objects that users left out wrote and a replayed request's demotion (an Evict read) moved") {
		t.Errorf("warnings:\n%s", w)
	}
	var before []string
	for _, c := range ram.Log()[:clockAt] {
		if c.Op == fault.OpWrite {
			before = append(before, c.Key)
		}
	}
	var evictions int64
	for _, c := range res.Cells {
		if c.Phase == "Evict" && c.Op != "Delete" {
			evictions += c.Ops
		}
	}
	if len(before) != 1 || !strings.HasSuffix(before[0], "_z") || evictions != 2 {
		t.Errorf("written before the clock: %v, want z alone; %d demotion rows measured, want 2", before, evictions)
	}
}
