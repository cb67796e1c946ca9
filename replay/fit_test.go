package replay_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// windowTrace is 10 s of trace: each second s a new 1 MiB object k<s> is
// written on Tier-1 and the one before deleted, and a cold object c<s> of
// 2 MiB is read on Tier-2; request s (of user 1) holds second s's rows and
// a last read of k<s> 0.9 s later.
func windowTrace() []schema.Record {
	var recs []schema.Record
	for s := range 10 {
		at := time.Duration(s) * time.Second
		req := uint64(s + 1)
		k := fmt.Sprint("k", s)
		recs = append(recs,
			schema.Record{Time: at, Op: schema.OpWrite, Size: 1 << 20, Tier: schema.TierCPU, Key: []byte(k), Phase: schema.PhasePrefill, Request: req, User: 1},
			schema.Record{Time: at, Op: schema.OpRead, Size: 2 << 20, Tier: schema.TierNVMe, Key: []byte(fmt.Sprint("c", s)), Phase: schema.PhaseDecode, Request: req, User: 1})
		if s > 0 {
			recs = append(recs, schema.Record{Time: at, Op: schema.OpDelete, Size: 1 << 20, Tier: schema.TierCPU, Key: []byte(fmt.Sprint("k", s-1)), Phase: schema.PhaseEvict, Request: req, User: 1})
		}
		recs = append(recs, schema.Record{Time: at + 900*time.Millisecond, Op: schema.OpRead, Size: 1 << 20, Tier: schema.TierCPU, Key: []byte(k), Phase: schema.PhaseDecode, Request: req, User: 1})
	}
	return recs
}

// TestPlanWindow: with --duration at a pace, the plan covers only the rows
// the window can reach (their objects, cold objects, peaks and bytes),
// and the whole trace otherwise, exactly as before.
func TestPlanWindow(t *testing.T) {
	const mib = 1 << 20
	src := memTrace(t, windowTrace())
	tests := []struct {
		name       string
		duration   time.Duration
		speed      float64
		closed     bool
		window     time.Duration
		cold       int
		objects    int64
		nvmePeak   int64
		ramWritten int64
	}{
		{"whole trace", 0, 1, false, 0, 10, 20, 20 * mib, 10 * mib},
		{"speed max reaches everything", 3 * time.Second, 0, false, 0, 10, 20, 20 * mib, 10 * mib},
		// Rows before 2.5 s: seconds 0, 1 and 2.
		{"open loop", 2500 * time.Millisecond, 1, false, 2500 * time.Millisecond, 3, 6, 6 * mib, 3 * mib},
		// 1 s at twice the pace reaches 2 s of trace: seconds 0 and 1.
		{"faster", time.Second, 2, false, 2 * time.Second, 2, 4, 4 * mib, 2 * mib},
		// A closed loop releases whole requests: request 3 starts at 2 s,
		// within the window, and has all its rows.
		{"closed loop", 2100 * time.Millisecond, 1, true, 2100 * time.Millisecond, 3, 6, 6 * mib, 3 * mib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", "nvme"}
			cfg.Duration, cfg.Speed, cfg.ClosedLoop = tt.duration, tt.speed, tt.closed
			plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
			if err != nil {
				t.Fatal(err)
			}
			if plan.Window != tt.window || len(plan.Cold) != tt.cold || plan.Objects != tt.objects ||
				plan.Peak["nvme"] != tt.nvmePeak || plan.Written["ram"] != tt.ramWritten {
				t.Errorf("window %v, %d cold, %d objects, nvme peak %d, ram written %d; want %v, %d, %d, %d, %d",
					plan.Window, len(plan.Cold), plan.Objects, plan.Peak["nvme"], plan.Written["ram"],
					tt.window, tt.cold, tt.objects, tt.nvmePeak, tt.ramWritten)
			}
			// The trace itself is counted whole, whatever the window.
			if plan.Rows != int64(len(windowTrace())) || len(plan.Users) != 1 {
				t.Errorf("%d rows, %d users; want %d and 1", plan.Rows, len(plan.Users), len(windowTrace()))
			}
			// The RAM tier holds two objects at once: a write before the
			// delete of the one before.
			if plan.Peak["ram"] != 2*mib {
				t.Errorf("ram peak %d, want 2 MiB", plan.Peak["ram"])
			}
		})
	}
}

// TestPlanWindowReplays: a window's plan sizes a replay that runs: the
// backends sized at its peaks hold what the window releases.
func TestPlanWindowReplays(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Duration, cfg.Speed = 300*time.Millisecond, 10 // 3 s of trace
	var recs []schema.Record
	for _, r := range windowTrace() {
		if r.Tier == schema.TierCPU {
			recs = append(recs, r)
		}
	}
	src := memTrace(t, recs)
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Peak["ram"] != 2<<20 {
		t.Fatalf("ram peak %d, want 2 MiB", plan.Peak["ram"])
	}
	res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src},
		map[string]backend.Backend{"ram": newRAM(t, plan.Peak["ram"])}, replay.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replay.CapacityEvictions != 0 || res.Replay.RowsDone == 0 {
		t.Errorf("%d evictions, %d rows done; want none and some", res.Replay.CapacityEvictions, res.Replay.RowsDone)
	}
}

// bigTrace is a trace of objects too big and too fast for any machine: a
// 64 TiB object written on Tier-2 and read back, and a 1 GiB one on
// Tier-1, in 10 s of trace, with 1000 small objects on Tier-2 beside.
func bigTrace() []schema.Record {
	recs := []schema.Record{
		{Time: 0, Op: schema.OpWrite, Size: 64 << 40, Tier: schema.TierNVMe, Key: []byte("huge"), Phase: schema.PhasePrefill},
		{Time: 0, Op: schema.OpWrite, Size: 1 << 30, Tier: schema.TierCPU, Key: []byte("big"), Phase: schema.PhasePrefill},
	}
	for i := range 1000 {
		recs = append(recs, schema.Record{Time: time.Duration(i) * time.Millisecond, Op: schema.OpWrite, Size: 4096,
			Tier: schema.TierNVMe, Key: []byte(fmt.Sprint("s", i)), Phase: schema.PhasePrefill})
	}
	return append(recs,
		schema.Record{Time: 10 * time.Second, Op: schema.OpRead, Size: 64 << 40, Tier: schema.TierNVMe, Key: []byte("huge"), Phase: schema.PhaseDecode},
		schema.Record{Time: 10 * time.Second, Op: schema.OpRead, Size: 1 << 30, Tier: schema.TierCPU, Key: []byte("big"), Phase: schema.PhaseDecode})
}

// TestAdvise: the plan finds the largest 1/2^k at which the replay fits
// the machine's memory, its disk and the rates assumed, and says what
// keeps it from starting where it cannot.
func TestAdvise(t *testing.T) {
	const gib = 1 << 30
	machine := replay.Machine{MemAvailable: 16 * gib, MemTotal: 16 * gib, Disk: "/mnt/nvme", DiskFree: 100 * gib}
	tests := []struct {
		name     string
		speed    float64
		machine  replay.Machine
		runs     bool
		scale    float64 // --fit's; 0: none
		blocker  string
		capacity bool
	}{
		// At --speed max only the space counts: 64 TiB live, and as
		// much again for the largest object, into 50 GiB is 1/4096
		// (32 GiB), with the 1000 objects' pages beside.
		{"space", 0, machine, false, 1.0 / 4096, "live on the NVMe tier at its peak", false},
		// At the trace's pace, 128 TiB moved in 10 s on a disk assumed
		// to serve 1 GB/s: at most 0.5 GB/s, so 1/2^15.
		{"bandwidth", 1, machine, false, 1.0 / (1 << 15), "/mnt/nvme has 100.00 GiB free", false},
		// A disk too small for the 1000 objects' pages, even scaled:
		// --capacity bounds it.
		{"capacity", 0, replay.Machine{MemAvailable: 16 * gib, MemTotal: 16 * gib, Disk: "/small", DiskFree: 4 << 20}, false, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := replay.DefaultConfig()
			cfg.Speed = tt.speed
			plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{memTrace(t, bigTrace())})
			if err != nil {
				t.Fatal(err)
			}
			a := replay.Advise(plan, &cfg, replay.Sizing{}, tt.machine)
			if a.Runs != tt.runs || a.Fits {
				t.Errorf("runs %v, fits %v; want %v, false", a.Runs, a.Fits, tt.runs)
			}
			if tt.blocker != "" && !strings.Contains(strings.Join(a.Blockers, "\n"), tt.blocker) {
				t.Errorf("blockers %q, want %q", a.Blockers, tt.blocker)
			}
			if a.Fit == nil {
				t.Fatalf("no fit; options %v", a.Options)
			}
			if tt.scale != 0 && a.Fit.Scale != tt.scale {
				t.Errorf("--fit scale %s, want %s (%v)", replay.FormatScale(a.Fit.Scale), replay.FormatScale(tt.scale), a.Fit.Flags)
			}
			if (a.Fit.Capacity > 0) != tt.capacity {
				t.Errorf("--fit %v: capacity %d", a.Fit.Flags, a.Fit.Capacity)
			}
			if a.Options[0].Option != strings.Join(a.Fit.Flags, " ") {
				t.Errorf("first option %q, want --fit's %v", a.Options[0].Option, a.Fit.Flags)
			}
			// What --fit applies fits, planned exactly again.
			fitted := cfg
			fitted.SizeScale, fitted.Capacity = a.Fit.Scale, a.Fit.Capacity
			p2, err := replay.Prepare(context.Background(), &fitted, []replay.Source{memTrace(t, bigTrace())})
			if err != nil {
				t.Fatal(err)
			}
			if a2 := replay.Advise(p2, &fitted, replay.Sizing{}, tt.machine); !a2.Fits {
				t.Errorf("%v does not fit: %q %q", a.Fit.Flags, a2.Blockers, a2.Problems)
			}
			// The scale above it does not.
			if a.Fit.Capacity == 0 {
				above := cfg
				above.SizeScale = a.Fit.Scale * 2
				p3, err := replay.Prepare(context.Background(), &above, []replay.Source{memTrace(t, bigTrace())})
				if err != nil {
					t.Fatal(err)
				}
				if a3 := replay.Advise(p3, &above, replay.Sizing{}, tt.machine); a3.Fits {
					t.Errorf("--size-scale %s fits too", replay.FormatScale(above.SizeScale))
				}
			}
		})
	}
}

// TestAdviseClosedLoop: a closed loop's users wait for their storage, so
// the bandwidth the trace's pace asks is its most, not a problem: only
// the space is fitted.
func TestAdviseClosedLoop(t *testing.T) {
	const gib = 1 << 30
	recs := bigTrace()
	for i := range recs {
		recs[i].Request, recs[i].User = uint64(i+1), 1
	}
	cfg := replay.DefaultConfig()
	cfg.ClosedLoop = true
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{memTrace(t, recs)})
	if err != nil {
		t.Fatal(err)
	}
	a := replay.Advise(plan, &cfg, replay.Sizing{}, replay.Machine{MemAvailable: 16 * gib, MemTotal: 16 * gib, Disk: "/d", DiskFree: 100 * gib})
	if a.Fit == nil || a.Fit.Scale != 1.0/4096 || strings.Contains(strings.Join(a.Problems, "\n"), "bandwidth") {
		t.Errorf("fit %+v, problems %q: want the space's 1/4096 and no bandwidth problem", a.Fit, a.Problems)
	}
	open := cfg
	open.ClosedLoop = false
	if a := replay.Advise(plan, &open, replay.Sizing{}, a.Machine); !strings.Contains(strings.Join(a.Problems, "\n"), "bandwidth") ||
		!strings.Contains(a.Options[len(a.Options)-2].Option, "--closed-loop") {
		t.Errorf("open loop: problems %q, options %v: want a bandwidth problem and --closed-loop among the options", a.Problems, a.Options)
	}
}

// TestAdviseFits: a trace that fits needs nothing.
func TestAdviseFits(t *testing.T) {
	cfg := replay.DefaultConfig()
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{memTrace(t, windowTrace())})
	if err != nil {
		t.Fatal(err)
	}
	a := replay.Advise(plan, &cfg, replay.Sizing{}, replay.Machine{MemAvailable: 8 << 30, MemTotal: 8 << 30, Disk: "/d", DiskFree: 1 << 40})
	if !a.Runs || !a.Fits || a.Fit != nil || len(a.Options) != 0 || len(a.Problems) != 0 {
		t.Errorf("advice %+v: want it to fit as it is", a)
	}
	if r := a.Needs.Backends[0]; r.Backend != "ram" || r.Peak != 2<<20 || r.Written != 10<<20 || r.Read != 10<<20 || r.Rate < 2e6 || r.Rate > 3e6 {
		t.Errorf("ram need %+v: want a 2 MiB peak, 10 MiB written and read in 9.9 s", r)
	}
}

func TestFormatScale(t *testing.T) {
	for s, want := range map[float64]string{1: "1", 0.5: "1/2", 1.0 / 4096: "1/4096", 0.3: "0.3"} {
		if got := replay.FormatScale(s); got != want {
			t.Errorf("FormatScale(%v) = %q, want %q", s, got, want)
		}
	}
	// One unit in one table: GB/s and GB, decimal, never MB/s beside GB/s.
	for r, want := range map[float64]string{276e6: "0.276 GB/s", 1.13e12: "1130 GB/s", 4e9: "4.00 GB/s", 12: "0.0000000120 GB/s",
		0: "0 GB/s", 999.6e9: "1000 GB/s", 9.996e9: "10.00 GB/s"} {
		if got := replay.FormatRate(r); got != want {
			t.Errorf("FormatRate(%v) = %q, want %q", r, got, want)
		}
	}
	for n, want := range map[int64]string{10 << 20: "0.0105 GB", 1 << 30: "1.07 GB", 12_345_678_901: "12.3 GB", 0: "0 GB"} {
		if got := replay.FormatData(n); got != want {
			t.Errorf("FormatData(%v) = %q, want %q", n, got, want)
		}
	}
}

// TestAdviseFullDisk: a disk with no space left (0 bytes free) blocks a
// replay that needs any; a disk whose free space is unknown (-1) is not
// taken for either.
func TestAdviseFullDisk(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.Speed = 0
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{memTrace(t, bigTrace())})
	if err != nil {
		t.Fatal(err)
	}
	full := replay.Machine{MemAvailable: 1 << 40, MemTotal: 1 << 40, Disk: "/full", DiskFree: 0}
	if a := replay.Advise(plan, &cfg, replay.Sizing{}, full); a.Runs || !strings.Contains(strings.Join(a.Blockers, "\n"), "/full has 0 B free") {
		t.Errorf("a full disk: runs %v, blockers %q", a.Runs, a.Blockers)
	}
	unknown := full
	unknown.DiskFree = -1
	if a := replay.Advise(plan, &cfg, replay.Sizing{}, unknown); strings.Contains(strings.Join(a.Blockers, "\n"), "/full") {
		t.Errorf("a disk of unknown space: blockers %q", a.Blockers)
	}
}

// TestAdviseObjectStore: the s3 backend has an assumed rate, as RAM and
// disk do: a Tier-2 mapped to s3 whose pace asks 0.2 GB/s (2 GB in 10 s)
// asks more than the share of the 0.25 GB/s assumed, and --fit scales
// it down to what the rate serves; the same trace on nvme fits. Before,
// an s3 tier had no rate, and --fit replayed an object-tier trace at full
// size, hours on a local server.
func TestAdviseObjectStore(t *testing.T) {
	recs := []schema.Record{
		{Time: 0, Op: schema.OpWrite, Size: 1 << 30, Tier: schema.TierNVMe, Key: []byte("a"), Phase: schema.PhasePrefill},
		{Time: 10 * time.Second, Op: schema.OpRead, Size: 1 << 30, Tier: schema.TierNVMe, Key: []byte("a"), Phase: schema.PhaseDecode},
	}
	machine := replay.Machine{MemAvailable: 64 << 30, MemTotal: 64 << 30, Disk: "/d", DiskFree: 1 << 40}
	for _, tc := range []struct {
		backend string
		fits    bool
	}{{"nvme", true}, {"s3", false}} {
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", tc.backend}
		plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{memTrace(t, recs)})
		if err != nil {
			t.Fatal(err)
		}
		a := replay.Advise(plan, &cfg, replay.Sizing{}, machine)
		if a.Fits != tc.fits || a.AssumedObjectRate != replay.AssumedObjectRate {
			t.Errorf("%s: fits %v, problems %q; want fits %v", tc.backend, a.Fits, a.Problems, tc.fits)
		}
		if !tc.fits && (a.Fit == nil || a.Fit.Scale > 0.5 || !strings.Contains(strings.Join(a.Problems, "\n"), "s3")) {
			t.Errorf("%s: fit %+v, problems %q; want the rate named and a smaller --size-scale", tc.backend, a.Fit, a.Problems)
		}
	}
}

// TestWindowPlan: a capacity search plans the whole trace once, and each
// probe its own window (replay.WindowPlan): 1 s at twice the pace reaches
// 2 s of trace, its 2 cold objects and their peak; a window past the
// trace's end is the whole plan itself, not read again.
func TestWindowPlan(t *testing.T) {
	const mib = 1 << 20
	src := memTrace(t, windowTrace())
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", "nvme"}
	whole, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Duration, cfg.Speed = time.Second, 2
	probe, err := replay.WindowPlan(context.Background(), &cfg, []replay.Source{src}, whole)
	if err != nil {
		t.Fatal(err)
	}
	if probe == whole || probe.Window != 2*time.Second || len(probe.Cold) != 2 || probe.Peak["nvme"] != 4*mib {
		t.Errorf("the probe's plan: window %v, %d cold, nvme peak %d; want 2 s, 2, 4 MiB", probe.Window, len(probe.Cold), probe.Peak["nvme"])
	}
	if again, err := replay.WindowPlan(context.Background(), &cfg, []replay.Source{src}, probe); err != nil || again != probe {
		t.Errorf("planning the probe's plan again: %v; want the same plan", err)
	}
	cfg.Speed = 100 // 100 s of trace: past its end
	if p, err := replay.WindowPlan(context.Background(), &cfg, []replay.Source{src}, whole); err != nil || p != whole {
		t.Errorf("a window past the trace's end: %v; want the whole plan", err)
	}
}

// TestBoundBelowLargestObject: a --capacity or a --ram-budget below the
// largest object of its tier cannot run (no eviction makes room for the
// object: the run stopped at its write, exit 1, after --plan said "It
// fits" and --fit applied nothing): the plan names it as a blocker, and
// --fit's scale is the largest at which the object fits the bound. A
// bound of a page or less holds no object at any scale, and I/O buffers
// beyond the memory do not shrink with the scale: their blockers name the
// flag to change, not "or lower --size-scale", and there is no --fit
// (kvreplay --ram-budget 1 said "lower --size-scale" and then "no
// --size-scale makes it fit").
func TestBoundBelowLargestObject(t *testing.T) {
	const mib = 1 << 20
	src := memTrace(t, windowTrace()) // Tier-2's objects 2 MiB, Tier-1's 1 MiB
	m := replay.Machine{MemAvailable: 1 << 40, MemTotal: 1 << 40, DiskFree: 1 << 40}
	for _, tc := range []struct {
		name     string
		capacity int64
		budget   int64
		blocker  string
		scale    float64
	}{
		// At 1/2 the 2 MiB object is planned at 1 MiB: --capacity 1 MiB
		// holds it (evicting all else), as the 512 KiB arena holds the
		// 1 MiB RAM object's half.
		{"capacity", mib, 0, "capacity: --capacity 1.00 MiB is less than the largest object of Tier-2's backend, nvme, 2.00 MiB at --size-scale 1, which no eviction makes room for: raise --capacity to 2.00 MiB at least", 0.5},
		{"ram budget", 0, mib / 2, "ram: --ram-budget 512.00 KiB is less than the RAM tier's largest object, 1.00 MiB at --size-scale 1, which no eviction makes room for: raise --ram-budget to 1.00 MiB at least", 0.5},
		{"capacity holds it", 2 * mib, 0, "", 0},
		// The arena is a page at least, and at 1/256 the 1 MiB object is
		// planned at a page: a smaller scale helps (kvreplay ran at it).
		{"ram budget of a byte", 0, 1, "ram: --ram-budget 1 B is less than the RAM tier's largest object, 1.00 MiB at --size-scale 1, which no eviction makes room for: raise --ram-budget to 1.00 MiB at least", 1.0 / 256},
		{"capacity of a page", 4096, 0, "capacity: --capacity 4.00 KiB is less than the largest object of Tier-2's backend, nvme, 2.00 MiB at --size-scale 1, which no eviction makes room for: raise --capacity to 2.00 MiB at least", 1.0 / 512},
		// Below a page no scale helps: an object is planned at a page.
		{"capacity below a page", 1000, 0, "capacity: --capacity 1000 B is less than the largest object of Tier-2's backend, nvme, 2.00 MiB at --size-scale 1, which no eviction makes room for: raise --capacity to 2.00 MiB at least (a smaller --size-scale does not help: at any scale an object is planned at a page at least, 4.00 KiB, and --capacity 1000 B holds 1000 B)", 0},
		{"I/O buffers", 0, 0, "the I/O buffers alone, --queue-depth 4096 x --block-size 1.00 GiB = 4.00 TiB at any --size-scale, are more than that: lower --queue-depth or --block-size", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", "nvme"}
			cfg.Speed, cfg.Capacity = 0, tc.capacity
			if tc.name == "I/O buffers" {
				cfg.QueueDepth, cfg.BlockSize = 4096, 1<<30
			}
			plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
			if err != nil {
				t.Fatal(err)
			}
			a := replay.Advise(plan, &cfg, replay.Sizing{RAMBudget: tc.budget}, m)
			blockers := strings.Join(a.Blockers, "\n")
			if tc.blocker == "" {
				if !a.Runs {
					t.Errorf("blockers:\n%s\nwant none", blockers)
				}
				return
			}
			if tc.scale == 0 {
				if a.Runs || !strings.Contains(blockers, tc.blocker) || strings.Contains(blockers, "lower --size-scale") || a.Fit != nil {
					t.Errorf("runs %v, blockers:\n%s\nfit %+v; want the flag to change named, no --size-scale, no fit", a.Runs, blockers, a.Fit)
				}
				return
			}
			if a.Runs || !strings.Contains(blockers, tc.blocker+", or lower --size-scale") || a.Fit == nil || a.Fit.Scale != tc.scale {
				t.Errorf("runs %v, blockers:\n%s\nfit %+v; want the bound named, --fit at %g", a.Runs, blockers, a.Fit, tc.scale)
			}
		})
	}
}

// TestAdviseObjectRequests: an object store serves requests, not only
// bytes: a Tier-2 on s3 whose pace asks 600 small writes a second (6000
// of 4 KiB in 10 s, 2.4 MB/s: nothing of the bandwidth assumed) asks more
// than the share of the 800 requests/s assumed of 16 in flight, and no
// size scale lowers a request count, so --fit slows the pace to what they
// fit (--speed 0.666), which the plan offers too. With 64 requests in
// flight (--s3-concurrency 64) it fits, and on nvme it always did. Before,
// --fit sized an s3 tier by its bytes alone, and a fitted replay of the
// README's trace on a local S3 server fell 41 s behind its schedule.
func TestAdviseObjectRequests(t *testing.T) {
	var recs []schema.Record
	for i := range 6000 {
		recs = append(recs, schema.Record{Time: time.Duration(i) * 10 * time.Second / 6000, Op: schema.OpWrite, Size: 4096,
			Tier: schema.TierNVMe, Key: []byte(fmt.Sprint("k", i)), Phase: schema.PhasePrefill})
	}
	for _, tc := range []struct {
		backend  string
		inFlight int
		fits     bool
	}{{"s3", 0, false}, {"s3", 16, false}, {"s3", 64, true}, {"nvme", 0, true}} {
		name := fmt.Sprintf("%s, %d in flight", tc.backend, tc.inFlight)
		cfg := replay.DefaultConfig()
		cfg.Speed = 1
		cfg.TierMap = [schema.NumTiers]string{"", "ram", tc.backend}
		plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{memTrace(t, recs)})
		if err != nil {
			t.Fatal(err)
		}
		if plan.Ops[tc.backend] != 6000 {
			t.Fatalf("%s: %d operations planned, want 6000", name, plan.Ops[tc.backend])
		}
		m := replay.Machine{MemAvailable: 64 << 30, MemTotal: 64 << 30, Disk: "/d", DiskFree: 1 << 40, ObjectRequests: tc.inFlight}
		a := replay.Advise(plan, &cfg, replay.Sizing{}, m)
		problems := strings.Join(a.Problems, "\n")
		if a.Fits != tc.fits || a.Fits != !strings.Contains(problems, "requests:") {
			t.Errorf("%s: fits %v, problems %q; want fits %v", name, a.Fits, a.Problems, tc.fits)
		}
		if tc.fits {
			continue
		}
		if !strings.Contains(problems, "600 operations/s of the s3 tier") || !strings.Contains(problems, "800/s assumed") {
			t.Errorf("%s: problems %q, want the 600 operations/s asked and the 800/s assumed", name, a.Problems)
		}
		// No size scale lowers a request count: --fit slows the pace.
		if a.Fit == nil || a.Fit.Speed != 0.666 || a.Fit.Scale != 1 || strings.Join(a.Fit.Flags, " ") != "--speed 0.666" {
			t.Errorf("%s: --fit %+v, want --speed 0.666 alone", name, a.Fit)
		}
		var speed string
		for _, o := range a.Options {
			if strings.HasPrefix(o.Option, "--speed ") {
				speed = o.Option
			}
			if strings.HasPrefix(o.Option, "--duration") || strings.HasPrefix(o.Option, "--size-scale") {
				t.Errorf("%s: option %q, which changes no request rate", name, o.Option)
			}
		}
		if speed != "--speed 0.666" {
			t.Errorf("%s: options %+v, want --speed 0.666", name, a.Options)
		}
	}
	// Unpaced (--speed max), the plan's time is the requests' at the
	// assumed rate: 6000 at 800/s.
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", "s3"}
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{memTrace(t, recs)})
	if err != nil {
		t.Fatal(err)
	}
	if d := plan.AssumedTime(replay.Machine{}); d != 7500*time.Millisecond {
		t.Errorf("assumed time %v, want 7.5 s", d)
	}
}

// TestPlanOpsCountsDeletes: an object store's DELETE is a request as its
// PUT and GET are: the plan's operations count a backend's Delete rows
// with its reads and writes (2 writes, a read and 2 deletes: 5).
func TestPlanOpsCountsDeletes(t *testing.T) {
	row := func(op schema.Op, key string) schema.Record {
		return schema.Record{Op: op, Size: 4096, Tier: schema.TierNVMe, Key: []byte(key), Phase: schema.PhasePrefill}
	}
	recs := []schema.Record{row(schema.OpWrite, "a"), row(schema.OpWrite, "b"), row(schema.OpRead, "a"), row(schema.OpDelete, "a"), row(schema.OpDelete, "b")}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", "s3"}
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{memTrace(t, recs)})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Ops["s3"] != 5 {
		t.Errorf("%d operations planned, want 5", plan.Ops["s3"])
	}
}

// TestAdviseCountsMultipartRequests: the s3 tier writes an object above its
// part size in a multipart upload, create, a PUT of each part and
// complete: 100 writes of 6 MiB in 10 s with parts of 5 MiB are 400
// requests, 40 a second, over the share of the 50 a second assumed of one
// in flight (--s3-concurrency 1), though their 10 rows a second and
// 63 MB/s are within it. Counted one a row, as before, they fit.
func TestAdviseCountsMultipartRequests(t *testing.T) {
	var recs []schema.Record
	for i := range 100 {
		recs = append(recs, schema.Record{Time: time.Duration(i) * 100 * time.Millisecond, Op: schema.OpWrite, Size: 6 << 20,
			Tier: schema.TierNVMe, Key: []byte(fmt.Sprint("k", i)), Phase: schema.PhasePrefill})
	}
	for _, tc := range []struct {
		part int64
		ops  int64
		fits bool
	}{{0, 100, true}, {5 << 20, 400, false}, {8 << 20, 100, true}} {
		cfg := replay.DefaultConfig()
		cfg.Speed, cfg.S3PartSize = 1, tc.part
		cfg.TierMap = [schema.NumTiers]string{"", "ram", "s3"}
		plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{memTrace(t, recs)})
		if err != nil {
			t.Fatal(err)
		}
		m := replay.Machine{MemAvailable: 64 << 30, MemTotal: 64 << 30, Disk: "/d", DiskFree: 1 << 40, ObjectRequests: 1}
		a := replay.Advise(plan, &cfg, replay.Sizing{}, m)
		if plan.Ops["s3"] != tc.ops || a.Fits != tc.fits {
			t.Errorf("parts of %d bytes: %d requests planned, fits %v (%q); want %d, fits %v", tc.part, plan.Ops["s3"], a.Fits, a.Problems, tc.ops, tc.fits)
		}
	}
}
