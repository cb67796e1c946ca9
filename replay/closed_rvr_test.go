package replay_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// TestUsersBeyondTrace: a closed loop of --users 3 of a trace of 1 user
// replays that user, and the result says that it replayed 1, not 3, in a
// warning; before, only closed_loop.users (1 beside user_limit 3) did.
// --users 1 of it says nothing.
func TestUsersBeyondTrace(t *testing.T) {
	src := memTrace(t, windowTrace())
	for _, n := range []int{3, 1} {
		cfg := closedConfig()
		cfg.TierMap[2] = "ram"
		cfg.Users = n
		res, err := runReplay(t, cfg, src, map[string]backend.Backend{"ram": newRAM(t, 64<<20)})
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(res.Warnings, "\n")
		warned := strings.Contains(w, "--users 3: the traces have 1 user: it was replayed, not 3")
		if res.ClosedLoop == nil || res.ClosedLoop.Users != 1 || warned != (n == 3) {
			t.Errorf("--users %d: warnings:\n%s", n, w)
		}
	}
}

// TestClosedLoopDiskNote: a closed loop whose NVMe tier may keep more
// live than --dir has free (4 objects of 1 MiB written and deleted in
// turn by 2 users: 1 MiB at the trace's peak, up to 4 MiB in the loop's
// order) gets a note naming both figures and a --capacity that bounds
// it; it had none, while the RAM tier's arena had one, and such a loop
// stopped when the disk filled. An open loop, a --capacity or room for
// it says nothing.
func TestClosedLoopDiskNote(t *testing.T) {
	const mib = 1 << 20
	user := func(r schema.Record, u uint64) schema.Record { r.User = u; return r }
	var recs []schema.Record
	for i := range 4 {
		at := time.Duration(i) * time.Second
		k := fmt.Sprint("k", i)
		recs = append(recs,
			user(rec(at, schema.OpWrite, mib, schema.TierNVMe, k, schema.PhasePrefill, uint64(i+1)), uint64(i%2+1)),
			user(rec(at+time.Millisecond, schema.OpDelete, mib, schema.TierNVMe, k, schema.PhaseEvict, uint64(i+1)), uint64(i%2+1)))
	}
	src := memTrace(t, recs)
	for _, tc := range []struct {
		name     string
		closed   bool
		capacity int64
		free     int64
		note     bool
	}{
		{"closed loop", true, 0, 3 * mib, true},
		{"room for it", true, 0, 64 * mib, false},
		{"open loop", false, 0, 3 * mib, false},
		{"capacity", true, 2 * mib, 3 * mib, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", "nvme"}
			cfg.ClosedLoop, cfg.Capacity, cfg.Speed = tc.closed, tc.capacity, 0
			plan := prepare(t, &cfg, src)
			a := replay.Advise(plan, &cfg, replay.Sizing{}, replay.Machine{MemAvailable: 1 << 40, MemTotal: 1 << 40, Disk: "/d", DiskFree: tc.free})
			n := strings.Join(a.Notes, "\n")
			want := "nvme: a closed loop releases the users' requests in another order than the trace's, so it may keep up to 4.00 MiB live on the NVMe tier, more than the trace's peak of 1.00 MiB, and /d has 3.00 MiB free"
			if strings.Contains(n, want) != tc.note {
				t.Errorf("notes:\n%s\nwant the disk's: %v", n, tc.note)
			}
		})
	}
}
