package replay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/null"
	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/sim"
)

// loopTrace is kvtrace --num-users 20 --duration 60 --gpu-mem-gb 0
// --cpu-mem-gb 1: a CPU RAM tier of 1 GiB whose LRU demotes one user's
// objects to NVMe during another user's request.
func loopTrace(t *testing.T) replay.Source {
	cfg := sim.DefaultConfig()
	cfg.NumUsers, cfg.Duration, cfg.GPUMemGB, cfg.CPUMemGB = 20, 60*time.Second, 0, 1
	src, _ := simTrace(t, cfg)
	return src
}

// loopConfig is a closed loop of users users (0: all) at --speed max and
// 1/1024 of the trace's sizes, Tier-1 on ram and Tier-2 on null.
func loopConfig(users int) replay.Config {
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", "null"}
	cfg.ClosedLoop, cfg.Users, cfg.Speed, cfg.SizeScale = true, users, 0, 1.0/1024
	return cfg
}

// prepare plans the replay of src with cfg.
func prepare(t *testing.T, cfg *replay.Config, src replay.Source) *replay.Plan {
	t.Helper()
	plan, err := replay.Prepare(context.Background(), cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestPlanOfUsers plans a closed loop of --users N for the rows it
// replays: the bytes the plan says each backend writes and reads are
// those the run moved, for a sample of the users as for all of them; the
// RAM arena sized for the closed loop (ArenaBytes) evicts nothing, and
// no read is served by another tier than its row's.
// Before, the plan of --users 8 was the whole trace's (every user's
// bytes, objects and peaks): kvreplay --plan sized a run it would not do.
func TestPlanOfUsers(t *testing.T) {
	src := loopTrace(t)
	whole := loopConfig(0)
	all := prepare(t, &whole, src)
	for _, users := range []int{0, 3, 8} {
		cfg := loopConfig(users)
		plan := prepare(t, &cfg, src)
		if users > 0 && (plan.UserLimit != users || plan.Objects >= all.Objects || plan.Written["ram"] >= all.Written["ram"]) {
			t.Errorf("--users %d: plan of %d users, %d objects, %d bytes written on ram; the whole trace's: %d objects, %d bytes",
				users, plan.UserLimit, plan.Objects, plan.Written["ram"], all.Objects, all.Written["ram"])
		}
		if n := plan.UserRows; users > 0 && n >= plan.Rows {
			t.Errorf("--users %d: the plan says the run replays %d of %d rows", users, n, plan.Rows)
		}
		if plan.Rows != all.Rows || len(plan.Users) != len(all.Users) {
			t.Errorf("--users %d: the plan counts %d rows and %d users, want the trace's %d and %d", users, plan.Rows, len(plan.Users), all.Rows, len(all.Users))
		}
		ram := newRAM(t, replay.ArenaBytes(&cfg, plan.Peak["ram"], plan.Reach["ram"], plan.Objects, 1<<34))
		res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src},
			map[string]backend.Backend{"ram": ram, "null": null.New()}, replay.Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Replay.RowsDone != plan.UserRows {
			t.Errorf("--users %d: the run did %d rows, the plan says %d", users, res.Replay.RowsDone, plan.UserRows)
		}
		moved := map[string][2]int64{} // backend: written, read
		for _, c := range res.Cells {
			m := moved[c.Backend]
			switch c.Op {
			case schema.OpWrite.String():
				m[0] += c.LogicalBytes
			case schema.OpRead.String():
				m[1] += c.LogicalBytes
			}
			moved[c.Backend] = m
		}
		for _, b := range []string{"ram", "null"} {
			if got, want := moved[b], [2]int64{plan.Written[b], plan.Read[b]}; got != want {
				t.Errorf("--users %d: %s: the run wrote and read %v bytes, the plan says %v", users, b, got, want)
			}
		}
		// Every read was served by the tier its row names: none read an
		// object where the trace had moved it from (counted as another
		// tier's).
		if w := strings.Join(res.Warnings, "\n"); strings.Contains(w, "reads named a tier") {
			t.Errorf("--users %d: %s", users, w)
		}
		if res.Replay.CapacityEvictions != 0 {
			t.Errorf("--users %d: the closed loop evicted %d objects from a RAM arena of %d bytes (the trace's peak %d, its reach %d)",
				users, res.Replay.CapacityEvictions, ram.Caps().Capacity, plan.Peak["ram"], plan.Reach["ram"])
		}
	}
}

// TestArenaBytes: an open loop's RAM arena is the trace's peak; a closed
// loop's, the most it can keep live (its reach), as much of it as half of
// the memory holds beside the engine's state, never below the peak.
func TestArenaBytes(t *testing.T) {
	open, closed := replay.DefaultConfig(), replay.DefaultConfig()
	closed.ClosedLoop = true
	const mib = 1 << 20
	eng := replay.EngineMemory(&closed, 10)
	for _, tt := range []struct {
		name             string
		cfg              *replay.Config
		peak, reach, mem int64
		want             int64
	}{
		{"open", &open, 4 * mib, 100 * mib, 1 << 40, 4 * mib},
		{"open, tiny", &open, 4096, 4096, 1 << 40, mib},
		{"closed", &closed, 4 * mib, 100 * mib, 1 << 40, 100 * mib},
		{"closed, memory unknown", &closed, 4 * mib, 100 * mib, 0, 4 * mib},
		{"closed, memory short", &closed, 4 * mib, 100 * mib, 2 * (eng + 20*mib), 20 * mib},
		{"closed, no memory", &closed, 4 * mib, 100 * mib, eng, 4 * mib},
		{"closed, reach is peak", &closed, 4 * mib, 4 * mib, 1 << 40, 4 * mib},
	} {
		if got := replay.ArenaBytes(tt.cfg, tt.peak, tt.reach, 10, tt.mem); got != tt.want {
			t.Errorf("%s: ArenaBytes = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestLoopEvictionWarning: a closed loop that outgrows a bounded tier
// says that its order, not the trace's alone, can keep more live than the
// trace's peak, and what to do; an open loop still says the trace does.
func TestLoopEvictionWarning(t *testing.T) {
	recs := replaytest.UserRecords(4, 4, 10*time.Millisecond, 64<<10, schema.TierCPU, schema.QoSBatch)
	for _, closed := range []bool{false, true} {
		cfg := loopConfig(0)
		cfg.ClosedLoop, cfg.SizeScale = closed, 1
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": newRAM(t, 256<<10), "null": null.New()})
		if err != nil {
			t.Fatal(err)
		}
		if res.Replay.CapacityEvictions == 0 {
			t.Fatalf("closed %v: no eviction from 256 KiB of 16 objects of 64 KiB", closed)
		}
		w := strings.Join(res.Warnings, "\n")
		if blamesOrder := strings.Contains(w, "the closed loop kept more live at once than a bounded tier holds (its users' requests ran in another order than the trace's"); blamesOrder != closed ||
			strings.Contains(w, "the trace keeps more live") == closed || !strings.Contains(w, "least recently used objects itself") {
			t.Errorf("closed %v: warnings:\n%s", closed, w)
		}
	}
}

// TestArenaNotes: --plan notes when a closed loop's RAM arena holds less
// than the loop can keep live, what sized it (--ram-budget, the share of
// the memory available, or the trace's peak where that share holds less
// or the memory is not known: it had said the share of the memory held
// an arena of the peak that the memory does not hold), and what keeps it:
// a --ram-budget where the memory holds it, else a smaller --size-scale;
// nothing when it holds it, or for an open loop.
func TestArenaNotes(t *testing.T) {
	src := loopTrace(t)
	cfg := loopConfig(8)
	plan := prepare(t, &cfg, src)
	const mib = 1 << 20
	eng := replay.EngineMemory(&cfg, plan.Objects)
	big := replay.Machine{MemAvailable: 1 << 40, MemTotal: 1 << 40, DiskFree: -1}
	small := replay.Machine{MemAvailable: 2 * eng, MemTotal: 1 << 40, DiskFree: -1}
	unknown := replay.Machine{DiskFree: -1}
	// Half of it holds, beside the engine's state, 1 MiB more than the
	// peak and less than the reach.
	least, reach := max(plan.Peak["ram"], mib), plan.Reach["ram"]
	if reach < least+2*mib {
		t.Fatalf("the trace's RAM reach %d is not 2 MiB above its peak %d: no arena lies between", reach, least)
	}
	some := replay.Machine{MemAvailable: 2 * (eng + (least+mib)&^(mib-1) + mib), MemTotal: 1 << 40, DiskFree: -1}
	open := cfg
	open.ClosedLoop = false
	// At 4x the size the peak passes the arena's least, 1 MiB.
	big4 := cfg
	big4.SizeScale *= 4
	plan4 := prepare(t, &big4, src)
	small4 := replay.Machine{MemAvailable: 2 * replay.EngineMemory(&big4, plan4.Objects), MemTotal: 1 << 40, DiskFree: -1}
	if plan4.Peak["ram"] <= mib {
		t.Fatalf("the RAM peak at 4x the size is %d bytes, within the arena's least", plan4.Peak["ram"])
	}
	for _, tt := range []struct {
		name string
		cfg  *replay.Config
		sz   replay.Sizing
		m    replay.Machine
		want string // "" for no note
	}{
		{"held", &cfg, replay.Sizing{}, big, ""},
		{"budget", &cfg, replay.Sizing{RAMBudget: 1 << 20}, big, "(--ram-budget): past it kvreplay evicts least recently used objects"},
		{"memory", &cfg, replay.Sizing{}, small, "the arena holds 1.00 MiB (its least, 1 MiB, which it never goes below: more than the 0 B that 50 % of the memory available holds beside the engine's state): " +
			"past it kvreplay evicts least recently used objects, counted in the result (a read of one rewrites it untimed first); a smaller --size-scale keeps them"},
		{"memory, larger", &big4, replay.Sizing{}, small4, "(the trace's peak, which it never goes below: more than the 0 B that 50 % of the memory available holds beside the engine's state): past it"},
		{"unknown memory", &cfg, replay.Sizing{}, unknown, "(the trace's peak (1 MiB at least): the memory available is not known): past it"},
		{"some memory", &cfg, replay.Sizing{}, some, "(as much of it as 50 % of the memory available holds): past it"},
		{"open loop", &open, replay.Sizing{RAMBudget: 1 << 20}, big, ""},
	} {
		p := plan
		if tt.cfg == &big4 {
			p = plan4
		}
		a := replay.Advise(p, tt.cfg, tt.sz, tt.m)
		var notes []string // the arena's, not the sample's (TestLeftOutWrittenBeforeClock)
		for _, n := range a.Notes {
			if strings.HasPrefix(n, "ram: ") {
				notes = append(notes, n)
			}
		}
		got := strings.Join(notes, "\n")
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: notes %q, want %q", tt.name, got, tt.want)
		}
	}
}
