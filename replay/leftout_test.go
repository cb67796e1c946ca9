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
	"github.com/kvbench/kvbench/replay/null"
	"github.com/kvbench/kvbench/schema"
)

// TestLeftOutWrittenBeforeClock: a closed loop of --users 1 replays user
// 1, who reads x, an object that user 2 (left out) wrote. x is cold for
// the sample: the plan lists it with the cold objects, its peak counts it
// live from the start, and the run writes it before the clock, so that
// no write at all reaches the backend once the clock started (user 1's
// rows are reads and a delete). Before, the plan left x out of the cold
// objects and the run wrote it, untimed, inside the measured window, when
// user 1's read first came, sharing the device with the timed operations.
// On a RAM tier that holds x only when made at its read (1.5 MiB: the
// peak is z and x, 2 MiB, live from the start, 1 MiB when x is made at
// its read), the run falls back to that, and says so.
func TestLeftOutWrittenBeforeClock(t *testing.T) {
	const mib = 1 << 20
	cfg, src, plan := leftOutSample(t)
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

// TestLeftOutDemoted: a replayed user's request that carries the
// trace's LRU demoting an object a left-out user wrote (an Evict Read of x
// on Tier-1, its Evict Write to Tier-2) makes x cold for the sample, but
// x was live on Tier-1 only until the demotion, and written before the
// clock every such object would be live there at once (on kvtrace's
// MLPerf 8B trace at 1/4096, --users 10: 19,543 objects, 3.08 GiB on a
// RAM tier whose peak is 824 KiB). So Peak, which sizes the tiers, leaves
// x out (z's 1 MiB; 2 MiB with x before the clock), and the run writes x
// before the clock only on a bounded Tier-1 that holds it beside z (3
// MiB); on a smaller one (1.5 MiB), with a warning that says so, and on
// one that is not bounded (the null backend, as a directory of files:
// the space --dir needs is planned from Peak), the demotion makes it,
// and the result says that an object was written inside the measured
// window. Before, Peak counted x live from the start, and an unbounded
// Tier-1 got it before the clock.
func TestLeftOutDemoted(t *testing.T) {
	const mib = 1 << 20
	user := func(r schema.Record, u uint64) schema.Record { r.User = u; return r }
	recs := []schema.Record{
		user(rec(0, schema.OpRead, mib, schema.TierCPU, "z", schema.PhaseDecode, 1), 1),
		user(rec(500*time.Microsecond, schema.OpDelete, mib, schema.TierCPU, "z", schema.PhaseEvict, 1), 1),
		user(rec(time.Millisecond, schema.OpWrite, mib, schema.TierCPU, "x", schema.PhasePrefill, 2), 2),
		user(rec(2*time.Millisecond, schema.OpRead, mib, schema.TierCPU, "x", schema.PhaseEvict, 3), 1),
		user(rec(2*time.Millisecond, schema.OpWrite, mib, schema.TierNVMe, "x", schema.PhaseEvict, 3), 1),
	}
	cfg := closedConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "mem", "disk"}
	cfg.Users = 1
	src := memTrace(t, recs)
	plan := prepare(t, &cfg, src)
	var cold []string
	for _, c := range plan.Cold {
		cold = append(cold, fmt.Sprintf("%s:%v:%v", c.Key, c.LeftOut, c.Demoted))
	}
	if got := strings.Join(cold, " "); got != "z:false:false x:true:true" || plan.LeftOut != 1 || plan.Demoted != 1 || plan.DemotedBytes != mib {
		t.Errorf("cold objects %q, %d left out, %d demoted (%d bytes); want z, then x left out and demoted, 1 MiB", got, plan.LeftOut, plan.Demoted, plan.DemotedBytes)
	}
	if plan.Peak["mem"] != mib || plan.PeakSample["mem"] != mib || plan.PeakLeftOut["mem"] != 2*mib || plan.PeakLazy["mem"] != mib {
		t.Errorf("Tier-1's peaks: %d, %d without x before the clock, %d with it, %d with no left-out object; want 1 MiB, 1 MiB, 2 MiB, 1 MiB",
			plan.Peak["mem"], plan.PeakSample["mem"], plan.PeakLeftOut["mem"], plan.PeakLazy["mem"])
	}
	// The objects that bound Peak at a smaller size scale leave x out as
	// Peak does: z, before the clock, and the most live at once, 1 (it
	// counted x among the objects before the clock, 3).
	if plan.PeakObjects["mem"] != 2 {
		t.Errorf("Tier-1's PeakObjects %d; want 2, z before the clock and one live at once", plan.PeakObjects["mem"])
	}
	a := replay.Advise(plan, &cfg, replay.Sizing{}, replay.Machine{MemAvailable: 1 << 40, MemTotal: 1 << 40, DiskFree: -1})
	if n := strings.Join(a.Notes, "\n"); !strings.Contains(n, "--users 1: 1 objects (0.00105 GB) that users left out wrote and the replayed users' requests demote") ||
		!strings.Contains(n, "(it would take mem 1.00 MiB more)") || strings.Contains(n, "the replayed users read") {
		t.Errorf("--plan's notes:\n%s", n)
	}
	for _, tc := range []struct {
		name   string
		mem    backend.Backend
		before bool // x written before the clock
		warned bool // the bounded tier's warning
	}{
		{"bounded, holds it", newRAM(t, 3*mib), true, false},
		{"bounded, too small", newRAM(t, 3*mib/2), false, true},
		{"not bounded", null.New(), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := fault.Record(tc.mem)
			clockAt := -1 // the calls the backend saw when the clock started
			hooks := replay.Hooks{Ready: func() error { clockAt = len(mem.Log()); return nil }}
			res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"mem": mem, "disk": null.New()}, hooks)
			if err != nil {
				t.Fatal(err)
			}
			var after []string // objects made after the clock started
			for _, c := range mem.Log()[clockAt:] {
				if c.Op == fault.OpOpen && c.Create {
					after = append(after, c.Key)
				}
			}
			if want := !tc.before; (len(after) == 1 && strings.HasSuffix(after[0], "_x")) != want || len(after) > 1 {
				t.Errorf("objects made on Tier-1 after the clock started: %v; want x's: %v", after, want)
			}
			w := strings.Join(res.Warnings, "\n")
			before := strings.Contains(w, "--users 1: 1 objects (0.00105 GB) that users left out wrote and the replayed users read were written untimed before the clock")
			inside := strings.Contains(w, "1 objects (0.00105 GB) read where the replay did not have them were written untimed when first read, inside the measured window")
			bounded := strings.Contains(w, "(mem holds 1.50 MiB, less than the 2.00 MiB the trace keeps live with them)")
			if before != tc.before || inside == tc.before || bounded != tc.warned {
				t.Errorf("warnings:\n%s", w)
			}
			var evictions int64
			for _, c := range res.Cells {
				if c.Phase == "Evict" && c.Op != "Delete" {
					evictions += c.Ops
				}
			}
			if res.Replay.ColdPrepared != 2 || res.Replay.CapacityEvictions != 0 || evictions != 2 {
				t.Errorf("%d cold objects written, %d evictions, %d demotion rows measured; want 2 (z and x), none, 2", res.Replay.ColdPrepared, res.Replay.CapacityEvictions, evictions)
			}
		})
	}
}

// TestLeftOutWarningPeak: a sample of --users 1 that reads x (left out,
// read first by a Decode row) and demotes y (left out, read first by an
// Evict row) on a RAM tier of 1.5 MiB: x does not fit beside z (the
// sample's peak with x before the clock, PeakSample, is 2 MiB), nor y
// (3 MiB with y too, PeakLeftOut). The warning quotes the peak that
// decided, 2 MiB; it quoted PeakLeftOut's 3 MiB, more than the figure
// that kept x from being written before the clock.
func TestLeftOutWarningPeak(t *testing.T) {
	const mib = 1 << 20
	user := func(r schema.Record, u uint64) schema.Record { r.User = u; return r }
	recs := []schema.Record{
		user(rec(0, schema.OpRead, mib, schema.TierCPU, "z", schema.PhaseDecode, 1), 1),
		user(rec(500*time.Microsecond, schema.OpDelete, mib, schema.TierCPU, "z", schema.PhaseEvict, 1), 1),
		user(rec(time.Millisecond, schema.OpWrite, mib, schema.TierCPU, "x", schema.PhasePrefill, 2), 2),
		user(rec(time.Millisecond, schema.OpWrite, mib, schema.TierCPU, "y", schema.PhasePrefill, 2), 2),
		user(rec(2*time.Millisecond, schema.OpRead, mib, schema.TierCPU, "x", schema.PhaseDecode, 3), 1),
		user(rec(3*time.Millisecond, schema.OpRead, mib, schema.TierCPU, "y", schema.PhaseEvict, 4), 1),
		user(rec(3*time.Millisecond, schema.OpWrite, mib, schema.TierNVMe, "y", schema.PhaseEvict, 4), 1),
	}
	cfg := closedConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "mem", "disk"}
	cfg.Users = 1
	src := memTrace(t, recs)
	plan := prepare(t, &cfg, src)
	if plan.PeakSample["mem"] != 2*mib || plan.PeakLeftOut["mem"] != 3*mib {
		t.Fatalf("Tier-1's peaks: %d with x before the clock, %d with x and y; want 2 MiB, 3 MiB", plan.PeakSample["mem"], plan.PeakLeftOut["mem"])
	}
	res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src},
		map[string]backend.Backend{"mem": newRAM(t, 3*mib/2), "disk": null.New()}, replay.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "--users 1: 2 objects (0.00210 GB) that users left out wrote and the replayed users read were written untimed when first read") ||
		!strings.Contains(w, "(mem holds 1.50 MiB, less than the 2.00 MiB the trace keeps live with them)") {
		t.Errorf("warnings:\n%s", w)
	}
}

// leftOutSample is a closed loop of --users 1 over two users' rows: user
// 1 reads z (cold), deletes it, and reads x, which user 2, left out,
// wrote (1 MiB each, on the RAM tier); it returns the config, the trace
// and its plan.
func leftOutSample(t *testing.T) (replay.Config, replay.Source, *replay.Plan) {
	t.Helper()
	const mib = 1 << 20
	user := func(r schema.Record, u uint64) schema.Record { r.User = u; return r }
	recs := []schema.Record{
		user(rec(0, schema.OpRead, mib, schema.TierCPU, "z", schema.PhaseDecode, 1), 1),
		user(rec(500*time.Microsecond, schema.OpDelete, mib, schema.TierCPU, "z", schema.PhaseEvict, 1), 1),
		user(rec(time.Millisecond, schema.OpWrite, mib, schema.TierCPU, "x", schema.PhasePrefill, 2), 2),
		user(rec(2*time.Millisecond, schema.OpRead, mib, schema.TierCPU, "x", schema.PhaseDecode, 3), 1),
	}
	cfg := closedConfig()
	cfg.Users = 1
	src := memTrace(t, recs)
	return cfg, src, prepare(t, &cfg, src)
}
