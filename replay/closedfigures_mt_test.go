package replay_test

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
)

// TestClosedLoopStorageTime: a closed loop's storage time, the
// denominator of the reference's storage throughput, is the sum of its
// requests' storage latencies: on the bubble's clock every operation
// takes 2 ms, so each request takes at least that, and the total is the
// users' requests times their mean latency; each user's own figures are
// its requests' (mean of at least 2 ms, requests over the run's wall
// time). (A mutation-testing gap: halving the storage time, or dropping
// a user's latencies, went unnoticed.)
func TestClosedLoopStorageTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const op = 2 * time.Millisecond
		cfg := closedConfig()
		res, err := runReplay(t, cfg, memTrace(t, userTrace(2, 5, 0)), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 64<<20), op)})
		if err != nil {
			t.Fatal(err)
		}
		cl := res.ClosedLoop
		if cl == nil || cl.RequestsCompleted != 10 || len(cl.PerUser) != 2 {
			t.Fatalf("closed_loop %+v", cl)
		}
		if least := float64(cl.RequestsCompleted) * op.Seconds(); cl.StorageIOS < least {
			t.Errorf("storage time %v s below %d requests of at least %v", cl.StorageIOS, cl.RequestsCompleted, op)
		}
		var sum float64
		for _, u := range cl.PerUser {
			if u.MeanMS < 2 || u.P95MS < 2 || u.Requests != 5 {
				t.Errorf("user %+v: want 5 requests of at least 2 ms", u)
			}
			if want := float64(u.Requests) / res.WallS; math.Abs(u.RequestsPerSecond-want) > 1e-9*want {
				t.Errorf("user %d: %v requests/s, want %d over %v s", u.User, u.RequestsPerSecond, u.Requests, res.WallS)
			}
			sum += float64(u.Requests) * u.MeanMS / 1000
		}
		if math.Abs(cl.StorageIOS-sum) > 0.002*sum {
			t.Errorf("storage time %v s, want the users' requests times their mean latency, %v s", cl.StorageIOS, sum)
		}
	})
}
