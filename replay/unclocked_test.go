package replay_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// stalling is a backend whose creation of key's object waits until the
// test lets it go, then fails with context.Canceled, as a request does
// when the run's context ends (a signal).
type stalling struct {
	backend.Backend
	key     string
	opening chan struct{} // closed when the open of key waits
	release chan struct{} // closed by the test: the open fails
	once    sync.Once
}

func (s *stalling) Open(key string, size int64, create bool) (backend.Object, error) {
	if !create || !strings.HasSuffix(key, s.key) {
		return s.Backend.Open(key, size, create)
	}
	s.once.Do(func() { close(s.opening) })
	<-s.release
	return nil, context.Canceled
}

// TestStoppedBeforeClock: a run stopped while it writes the objects it
// prepares before its clock starts (a decode-only trace's cold objects, a
// --users sample's objects that users left out wrote) by a full disk, an
// I/O error or a signal returns its result with the error, as a run
// stopped after its clock started does: marked incomplete, its reason
// naming the phase, nothing measured (no measured window, no cell,
// request or second, storage_health FAIL, not PASS), its traces named and
// its failed operations counted, and the clock never started (Ready is
// not called). Before, it returned no result: kvreplay wrote no document,
// and a launcher or a results pipeline found a missing file, not a failed
// run.
func TestStoppedBeforeClock(t *testing.T) {
	const mib = 1 << 20
	const coldOnly = "replay: before the clock: writing the trace's cold objects: "
	decode := []schema.Record{
		rec(0, schema.OpRead, mib, schema.TierCPU, "c1", schema.PhaseDecode, 1),
		rec(time.Millisecond, schema.OpRead, mib, schema.TierCPU, "c2", schema.PhaseDecode, 2),
		rec(2*time.Millisecond, schema.OpRead, mib, schema.TierCPU, "c3", schema.PhaseDecode, 3),
	}
	user := func(r schema.Record, u uint64) schema.Record { r.User = u; return r }
	// Under --users 1, user 1 reads z (cold) and x, which user 2 (left
	// out) wrote: both are written before the clock.
	leftOut := []schema.Record{
		user(rec(0, schema.OpRead, mib, schema.TierCPU, "z", schema.PhaseDecode, 1), 1),
		user(rec(500*time.Microsecond, schema.OpDelete, mib, schema.TierCPU, "z", schema.PhaseEvict, 1), 1),
		user(rec(time.Millisecond, schema.OpWrite, mib, schema.TierCPU, "x", schema.PhasePrefill, 2), 2),
		user(rec(2*time.Millisecond, schema.OpRead, mib, schema.TierCPU, "x", schema.PhaseDecode, 3), 1),
	}
	interrupted := errors.New("interrupt signal received")
	for _, tc := range []struct {
		name   string
		recs   []schema.Record
		users  int
		wrap   func(b backend.Backend) backend.Backend
		stall  string // a key whose object's creation waits for the run's cancellation
		is     error
		reason string // the incomplete reason's start
		failed bool   // failed operations counted
	}{
		{name: "full disk", recs: decode, is: syscall.ENOSPC, reason: coldOnly + "preparing cold object c", failed: true,
			wrap: func(b backend.Backend) backend.Backend {
				r := fault.NoSpace(fault.OpWrite)
				r.AfterBytes = mib + mib/2
				return fault.Fail(b, r)
			}},
		{name: "I/O error", recs: decode, is: syscall.EIO, reason: coldOnly + "preparing cold object c", failed: true,
			wrap: func(b backend.Backend) backend.Backend { return fault.Fail(b, fault.IOError(fault.OpWrite)) }},
		{name: "signal", recs: decode, stall: "c2", is: interrupted, reason: coldOnly + "interrupt signal received"},
		{name: "left out", recs: leftOut, users: 1, is: syscall.EIO,
			reason: "replay: before the clock: writing the trace's cold objects and those that users left out wrote: preparing cold object x: ", failed: true,
			wrap: func(b backend.Backend) backend.Backend {
				return fault.Fail(b, fault.Rule{Op: fault.OpOpen, Key: "1_x", Err: syscall.EIO})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
			cfg.Speed = 0
			if tc.users > 0 {
				cfg = closedConfig()
				cfg.Users = tc.users
			}
			src := memTrace(t, tc.recs)
			plan := prepare(t, &cfg, src)
			if len(plan.Cold) < 2 {
				t.Fatalf("the plan has %d cold objects, want 2 or more", len(plan.Cold))
			}
			b := newRAM(t, 16*mib)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if tc.wrap != nil {
				b = tc.wrap(b)
			}
			if tc.stall != "" {
				s := &stalling{Backend: b, key: tc.stall, opening: make(chan struct{}), release: make(chan struct{})}
				go func() {
					<-s.opening
					cancel(interrupted)
					close(s.release)
				}()
				b = s
			}
			ready := false
			hooks := replay.Hooks{Ready: func() error { ready = true; return nil }}
			res, err := replay.Run(ctx, &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": b}, hooks)
			if !errors.Is(err, tc.is) {
				t.Fatalf("error %v, want one that is %v", err, tc.is)
			}
			if res == nil {
				t.Fatal("no result: want the result marked incomplete")
			}
			if ready {
				t.Error("Ready was called: the clock started after a failed preparation")
			}
			if res.Complete || !strings.HasPrefix(res.IncompleteReason, tc.reason) || res.IncompleteReason != err.Error() {
				t.Errorf("complete %v, reason %q; want incomplete, the reason %q... (the error's)", res.Complete, res.IncompleteReason, tc.reason)
			}
			if res.WallS != 0 || res.Started.IsZero() || len(res.Cells) != 0 || len(res.Tiers) != 0 || res.Requests.Count != 0 ||
				len(res.Timeline) != 0 || res.Lag.Count != 0 || res.Replay.RowsDone != 0 {
				t.Errorf("measured something: wall %g s (started %v), %d cells, %d tiers, %d requests, %d seconds, %d lags, %d rows done",
					res.WallS, res.Started, len(res.Cells), len(res.Tiers), res.Requests.Count, len(res.Timeline), res.Lag.Count, res.Replay.RowsDone)
			}
			s := res.Summary
			if s.RequestsPerSecond != 0 || s.StorageKVTokensPerSec != nil || s.TierCPUWriteBandwidthGBps != 0 || s.CPUP95MS != 0 {
				t.Errorf("summary measured something: %+v", s)
			}
			if h := s.StorageHealth; h.OverallStatus == results.HealthPass || !strings.Contains(strings.Join(h.Reasons, "; "), "incomplete: "+tc.reason) {
				t.Errorf("storage_health %s: %q", h.OverallStatus, h.Reasons)
			}
			if (res.Errors.Count > 0) != tc.failed {
				t.Errorf("%d failed operations counted (%q); want some: %v", res.Errors.Count, res.Errors.First, tc.failed)
			}
			if len(res.Traces) != 1 || res.Traces[0].Rows != int64(len(tc.recs)) {
				t.Errorf("traces %+v: want the trace the plan read, %d rows", res.Traces, len(tc.recs))
			}
		})
	}
}
