package replay

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// result builds the run's document, incomplete when s.err stopped the run;
// the caller adds the host, command line and configuration.
func (s *sched) result(wall time.Duration) *schema.Result {
	m := s.metrics
	res := &schema.Result{
		Header:    schema.Header{Format: schema.ResultFormat, FormatVersion: schema.ResultFormatVersion},
		Rank:      s.cfg.Rank,
		Ranks:     max(1, s.cfg.Ranks),
		Started:   s.start.UTC(),
		WallS:     wall.Seconds(),
		Complete:  s.err == nil,
		SizeScale: s.cfg.SizeScale,
		Traces:    s.traceInfos(),
		Lag:       m.lag.Finalize(),
		Errors:    schema.ErrorStats{Count: m.errCount, First: m.errFirst},
	}
	if s.err != nil {
		res.IncompleteReason = s.err.Error()
	}
	if s.cfg.SizeScale != 1 {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"SCALED RUN: every object is %g of its trace size (--size-scale); logical bytes are the trace's times the scale: not a full-size measurement",
			s.cfg.SizeScale))
	}
	if s.err == nil && s.rowsDone.Load() == 0 && s.counted.setupRows > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("NOTHING MEASURED: the trace has no rows after its sidecar's measured_from_s (%.6f s), only the %d setup rows before it, run untimed before the clock; the result has no figures and storage_health is NO_DATA",
			s.setupAt.Seconds(), s.counted.setupRows))
	} else if s.err == nil && s.rowsDone.Load() == 0 {
		res.Warnings = append(res.Warnings, "NOTHING MEASURED: the trace has no rows, so the result has no figures and storage_health is NO_DATA")
	}
	res.Warnings = append(res.Warnings, s.warnings...)
	for _, b := range s.backends {
		res.Warnings = append(res.Warnings, b.caps.Warnings...)
	}
	res.Warnings = append(res.Warnings, s.countWarnings()...)
	res.Cells = s.cells(wall)
	res.Tiers = results.TierTotals(res.Cells, wall)
	results.ApplyTierBusy(res.Tiers, m.tierBusy())
	res.Requests = m.reqs.Finalize()
	res.Device = m.device.Finalize()
	for i := range m.timeline {
		if l := m.secLag[i]; l != nil {
			m.timeline[i].LagP99US = l.Finalize().P99US
		}
	}
	res.Timeline = m.timeline

	res.Replay = schema.ReplayStats{
		Rows: s.rows.Load(), RowsDone: s.rowsDone.Load(), SetupRows: s.counted.setupRows, Objects: s.objects,
		ColdPrepared: s.counted.cold, ColdPreparedBytes: s.counted.coldBytes,
		CapacityEvictions: s.counted.evictions, SetupCapacityEvictions: s.counted.setupEvictions + s.counted.coldEvictions,
		Rematerialised: s.counted.remat, RequestsCut: s.counted.cut,
		RequestsCutLate: s.counted.cutLate,
		Verify:          s.cfg.Verify, VerifiedBytes: s.data.verified.Load(),
		Fsync: s.cfg.Fsync, Syncs: s.counted.syncs,
		Workers: s.cfg.Workers, QueueDepth: s.cfg.QueueDepth, BlockSize: s.cfg.BlockSize,
		Speed: s.cfg.Speed, Engine: s.engineName(),
		ClosedLoop: s.cfg.ClosedLoop, DurationS: s.cfg.Duration.Seconds(), Shard: s.cfg.Shard, MaxConcurrentAllocs: s.allocLimit,
	}
	s.rel.report(res, wall)
	if l := m.onTimeLag; l != nil && l.Count() > 0 && res.ClosedLoop != nil {
		lag := l.Finalize()
		res.ClosedLoop.ScheduledLag = &lag
	}
	var tokens *float64
	if bpt, tp, ok := s.bytesPerToken(); ok {
		if n, ok := results.StorageTokens(res.Cells, bpt, tp); ok {
			tokens = &n
		}
	}
	var err error
	if res.Summary, err = results.Summarize(res, tokens); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("summary: %v", err))
	}
	if c, behind := results.BehindSchedule(res.Summary.StorageHealth); behind {
		res.Warnings = append(res.Warnings, "BEHIND SCHEDULE: "+c.Reason)
	}
	return res
}

// countWarnings say what the run did besides the trace's operations: reads
// of an object on another tier, objects written untimed, operations
// abandoned, objects evicted.
func (s *sched) countWarnings() []string {
	var out []string
	if n := s.counted.mismatch; n > 0 {
		out = append(out, fmt.Sprintf(
			"%d reads named a tier their object was not on (the trace's Evict pairs were not adjacent or were missing); they read the object where it was, and count in that tier's figures", n))
	}
	if n := s.counted.leftOut; n > 0 {
		out = append(out, fmt.Sprintf(
			"--users %d: %d objects (%s) that users left out wrote and the replayed users read were written untimed before the clock, with the trace's cold objects (counted in cold_prepared), not inside the measured window",
			s.cfg.Users, n, FormatData(s.counted.leftOutBytes)))
	}
	if n := s.counted.coldLate; n > 0 {
		w := fmt.Sprintf("%d objects (%s) read where the replay did not have them were written untimed when first read, inside the measured window, beside the timed operations (counted in cold_prepared)",
			n, FormatData(s.counted.coldLateBytes))
		if s.cfg.ClosedLoop && s.cfg.Users > 0 {
			w += fmt.Sprintf("; under --users %d they include objects that users left out wrote and a replayed request's demotion (an Evict read) moved, "+
				"which are written before the clock only where a bounded tier holds them all at once (kvreplay --plan says how much more that takes)", s.cfg.Users)
		}
		out = append(out, w)
	}
	if n := s.counted.abandoned; n > 0 {
		out = append(out, fmt.Sprintf(
			"%d operations in flight were abandoned when the run was stopped (%v): not counted as failed, nor in any figure", n, context.Cause(s.ctx)))
	}
	if n, k, c := s.counted.evictions, s.counted.setupEvictions, s.counted.coldEvictions; n > 0 || k > 0 || c > 0 {
		why := "the trace keeps more live than a bounded tier holds"
		if s.cfg.ClosedLoop {
			// Its order is its users', not the trace's (replay.ArenaBytes).
			why = "the closed loop kept more live at once than a bounded tier holds (its users' requests ran in another order than the trace's, which can keep more live than the trace's peak: kvreplay --plan says how much; --ram-budget sizes the RAM tier)"
		}
		if s.cfg.CapacityWhy != "" && s.counted.tier2Evictions > 0 {
			why += " (" + s.cfg.CapacityWhy + ")"
		}
		var before []string
		if c > 0 {
			before = append(before, fmt.Sprintf("%d more while the cold objects were written", c))
		}
		if k > 0 {
			before = append(before, fmt.Sprintf("%d more while the setup rows ran", k))
		}
		setup := ""
		if len(before) > 0 {
			setup = "; " + strings.Join(before, " and ") + ", before the clock (setup_capacity_evictions)"
		}
		out = append(out, fmt.Sprintf(
			"%s: kvreplay evicted %d least recently used objects itself in the measured run (%d read again were rewritten untimed first)%s", why, n, s.counted.remat, setup))
	}
	return out
}

// bytesPerToken is the traces' bytes per token and tensor parallelism, for
// the storage tokens (KV tokens moved through Tier-2): the sidecar's or
// else the configuration's; ok when every trace's are known and the same.
func (s *sched) bytesPerToken() (bpt int64, tp int, ok bool) {
	tp = 1
	for i, src := range s.srcs {
		b, p := s.cfg.BytesPerToken, s.cfg.TensorParallel
		if src.Meta != nil && src.Meta.BytesPerToken > 0 {
			b, p = src.Meta.BytesPerToken, src.Meta.TensorParallel
		}
		if b <= 0 || (i > 0 && (b != bpt || p != tp)) {
			return 0, 1, false
		}
		bpt, tp = b, p
	}
	return bpt, tp, len(s.srcs) > 0
}

// cells are the result's cells: tier x operation x phase, those that ran.
func (s *sched) cells(wall time.Duration) []schema.Cell {
	var cells []schema.Cell
	for t := range schema.Tier(schema.NumTiers) {
		if s.tiers[t] == nil {
			continue
		}
		for op := range schema.Op(schema.NumOps) {
			for ph := range schema.Phase(schema.NumPhases) {
				c := s.metrics.cells[t][op][ph]
				if c == nil || (c.Ops == 0 && c.Failed == 0 && c.Busy == 0) {
					continue
				}
				cells = append(cells, c.Finalize(t.String(), op.String(), ph.String(), s.tiers[t].caps.Name, wall))
			}
		}
	}
	return cells
}

// traceInfos is the identity and provenance of the traces: the prescan's,
// which read every trace whole before the run (so a run stopped early
// still says what it replayed, as does one stopped before the reader
// started: unclocked), else what the replay's reader found.
func (s *sched) traceInfos() []schema.TraceInfo {
	n := len(s.infos)
	if s.infos == nil {
		n = len(s.srcs) // the reader never ran
	}
	if s.plan != nil && s.plan.Scanned && len(s.plan.Traces) == n {
		return slices.Clone(s.plan.Traces)
	}
	return s.infos
}
