package report

import (
	"fmt"

	"github.com/kvbench/kvbench/schema"
)

// checkResult refuses a kvreplay result whose counts, sizes or times no
// run gives: a negative elapsed time, byte or operation count, rank,
// trial, error, setup row or setup eviction count, more requests cut
// late than counted, a rank beyond its run's ranks, a size scale
// outside (0, 1] (0 is a document that predates it), or an elapsed time
// past maxFigure or a token rate past maxTokenRate. kvreplay writes none
// of these; kvreport would render them as figures (an elapsed time of
// -5 s), or drop a tier whose bytes are negative without a word. The
// first found.
func checkResult(r *schema.Result) error {
	var err error
	count := func(name string, v int64) {
		if err == nil && v < 0 {
			err = fmt.Errorf("%s is %d: want 0 or more (a damaged document?)", name, v)
		}
	}
	seconds := func(name string, v float64) {
		if err == nil && !(v >= 0) {
			err = fmt.Errorf("%s is %g: want 0 or more (a damaged document?)", name, v)
		}
	}
	seconds("wall_s", r.WallS)
	// Figures a metric takes as the document gives them: past these
	// bounds no run gives them, and two trials of them overflow the
	// statistics' sum (NaN: --format json failed on it with exit status
	// 1). A token rate gets more room than kv-cache.py's figures: at a
	// size scale of 1/4096 a replay from RAM passes a billion tokens a
	// second.
	for _, f := range []struct {
		name string
		v    *float64
		max  float64
	}{{"wall_s", &r.WallS, maxFigure},
		{"summary.storage_throughput_tokens_per_sec", &r.Summary.StorageThroughputTokensPerSec, maxTokenRate},
		{"summary.storage_kv_tokens_per_sec", r.Summary.StorageKVTokensPerSec, maxTokenRate}} {
		if err == nil && f.v != nil {
			err = boundedFigure(f.name, *f.v, f.max)
		}
	}
	if err == nil && (r.SizeScale < 0 || r.SizeScale > 1) {
		err = fmt.Errorf("size_scale is %g: want more than 0 and at most 1 (a damaged document?)", r.SizeScale)
	}
	count("rank", int64(r.Rank))
	count("ranks", int64(r.Ranks))
	if err == nil && r.Ranks > 0 && r.Rank >= r.Ranks {
		err = fmt.Errorf("rank is %d of ranks %d: want 0 to %d (a damaged document?)", r.Rank, r.Ranks, r.Ranks-1)
	}
	count("trial", int64(r.Trial))
	count("errors.count", r.Errors.Count)
	count("requests.count", r.Requests.Count)
	count("replay.setup_rows", r.Replay.SetupRows)
	count("replay.setup_capacity_evictions", r.Replay.SetupCapacityEvictions)
	count("replay.requests_cut_late", r.Replay.RequestsCutLate)
	if err == nil && r.Replay.RequestsCutLate > r.Requests.Count {
		// They are among the requests counted (results.Completed).
		err = fmt.Errorf("replay.requests_cut_late is %d: want at most requests.count, %d (a damaged document?)", r.Replay.RequestsCutLate, r.Requests.Count)
	}
	for i, t := range r.Tiers {
		at := fmt.Sprintf("tiers[%d].", i)
		for _, f := range []struct {
			name string
			v    int64
		}{{"read_ops", t.ReadOps}, {"write_ops", t.WriteOps}, {"delete_ops", t.DeleteOps}, {"failed_ops", t.FailedOps}, {"read_bytes", t.ReadBytes},
			{"write_bytes", t.WriteBytes}, {"physical_read_bytes", t.PhysicalReadBytes}, {"physical_write_bytes", t.PhysicalWriteBytes}} {
			count(at+f.name, f.v)
		}
		seconds(at+"busy_s", t.BusyS)
	}
	for i, c := range r.Cells {
		at := fmt.Sprintf("cells[%d].", i)
		count(at+"ops", c.Ops)
		count(at+"failed_ops", c.FailedOps)
		count(at+"logical_bytes", c.LogicalBytes)
		count(at+"physical_bytes", c.PhysicalBytes)
		seconds(at+"busy_s", c.BusyS)
	}
	return err
}
