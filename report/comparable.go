package report

import (
	"fmt"
	"strconv"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/schema"
)

// runShape is what makes two replays of the same trace comparable besides
// the trace: the window of it they covered, their size scale, their loop
// and whether their writes were made durable (--fsync, which the write
// latencies and device latencies include). Figures over time (elapsed,
// bandwidth, requests per second) of runs of different shapes measure
// different things: a 10 s window "wins" on elapsed time against the
// whole trace.
type runShape struct {
	durationS float64 // --duration; 0 for none
	whole     bool    // every row of the trace ran
	rows      string  // "193 of 2,890 rows"
	scale     float64
	loop      string // "a closed loop", "an open loop at --speed 1"
	fsync     bool   // --fsync: each write's fdatasync is in its latency
}

// shapeOf returns r's shape; false for a document that replayed no trace
// (kv-cache.py's, kvtrace's).
func shapeOf(r *schema.Result) (runShape, bool) {
	if r == nil || len(r.Traces) == 0 {
		return runShape{}, false
	}
	s := runShape{durationS: r.Replay.DurationS, scale: r.SizeScale, fsync: r.Replay.Fsync}
	if s.scale == 0 {
		s.scale = 1 // documents before --size-scale
	}
	if cl := r.ClosedLoop; cl != nil && s.durationS == 0 {
		s.durationS = cl.WindowS
	}
	var total int64
	known := true
	for _, t := range r.Traces {
		total += t.Rows
		known = known && !t.ReadInPart
	}
	if known {
		// The setup rows ran before the clock, in no figure: a run of the
		// whole trace measured the rest (as WriteReplaySummary counts).
		total -= r.Replay.SetupRows
		s.whole = r.Replay.RowsDone >= total
		s.rows = fmt.Sprintf("%s of %s rows", cli.FormatCount(r.Replay.RowsDone), cli.FormatCount(total))
	} else {
		s.rows = cli.FormatCount(r.Replay.RowsDone) + " rows of a trace read in part"
	}
	switch {
	case r.Replay.ClosedLoop || r.ClosedLoop != nil:
		s.loop = "a closed loop (--closed-loop)"
	case r.Replay.Speed == 0:
		s.loop = "an open loop at --speed max"
	default:
		s.loop = "an open loop at --speed " + strconv.FormatFloat(r.Replay.Speed, 'g', -1, 64)
	}
	return s, true
}

// window says which part of the trace a run covered.
func (s runShape) window() string {
	if s.durationS > 0 {
		return fmt.Sprintf("a --duration %gs window (%s)", s.durationS, s.rows)
	}
	if s.whole {
		return "the whole trace (" + s.rows + ")"
	}
	return "part of the trace (" + s.rows + ")"
}

// differences says, one sentence each, how b differs from a, naming them
// an and bn: their windows, size scales and loops.
func (s runShape) differences(b runShape, an, bn string) []string {
	var out []string
	if s.durationS != b.durationS || s.whole != b.whole {
		out = append(out, fmt.Sprintf("DIFFERENT WINDOWS: %s covered %s and %s %s: their elapsed times, rates and bandwidths cover different parts of the workload",
			an, s.window(), bn, b.window()))
	}
	if s.scale != b.scale {
		out = append(out, fmt.Sprintf("DIFFERENT SIZE SCALES: %s ran at --size-scale %g and %s at %g: their bytes, bandwidths and latencies are of objects of different sizes",
			an, s.scale, bn, b.scale))
	}
	if s.loop != b.loop {
		out = append(out, fmt.Sprintf("DIFFERENT LOOPS: %s ran %s and %s %s: their load was released differently, so their elapsed times, rates and latencies answer different questions",
			an, s.loop, bn, b.loop))
	}
	if s.fsync != b.fsync {
		out = append(out, fmt.Sprintf("DIFFERENT SYNCS: %s ran %s and %s %s: their write latencies (tier2_write_*, and the device "+
			"latencies MLPerf Storage scores) include the fdatasync in one and not in the other",
			an, syncName(s.fsync), bn, syncName(b.fsync)))
	}
	return out
}

// syncName says whether a run made its writes durable.
func syncName(fsync bool) string {
	if fsync {
		return "with --fsync"
	}
	return "without --fsync"
}

// warnShapes warns, in the report and in the group concerned, of
// comparisons of runs of different shapes (runShape): a group's trial
// against its first, and a group's first trial against the baseline's.
// Every format shows the warnings.
func warnShapes(rep *Report, base *Group) {
	first := func(g *Group) (runShape, int, bool) {
		for i, t := range g.Trials {
			if s, ok := shapeOf(t); ok {
				return s, i, true
			}
		}
		return runShape{}, 0, false
	}
	var b runShape
	bok := false
	if base != nil {
		b, _, bok = first(base)
	}
	for _, g := range rep.Groups {
		f, fi, ok := first(g)
		if !ok {
			continue
		}
		for i, t := range g.Trials {
			s, ok := shapeOf(t)
			if !ok || i == fi {
				continue
			}
			for _, w := range f.differences(s, fmt.Sprintf("trial %d", g.TrialIDs[fi]), fmt.Sprintf("trial %d", g.TrialIDs[i])) {
				g.warn(rep, w+" (the statistics over trials mix them)")
			}
		}
		if bok && g != base {
			for _, w := range b.differences(f, "the baseline "+base.Label, g.Label) {
				g.warn(rep, w+" (the ratios between them compare unlike runs)")
			}
		}
	}
	warnReferenceScales(rep, base)
}

// warnReferenceScales warns of a comparison of kv-cache.py's run (its
// objects at their size: a shape of its own, which shapeOf does not give)
// with a kvreplay run at another --size-scale, either the baseline.
func warnReferenceScales(rep *Report, base *Group) {
	if base == nil || base.Simulated || len(base.Trials) == 0 {
		return
	}
	scale := func(g *Group) (float64, bool) {
		r := g.Trials[0]
		if r == nil || g.Simulated {
			return 0, false
		}
		if r.SizeScale == 0 {
			return 1, true // documents before --size-scale
		}
		return r.SizeScale, true
	}
	b, ok := scale(base)
	if !ok {
		return
	}
	baseRef := base.Trials[0].Tool == KindReference
	for _, g := range rep.Groups {
		if g == base || len(g.Trials) == 0 || (g.Trials[0] != nil && g.Trials[0].Tool == KindReference) == baseRef {
			continue // two kvreplay runs: warnShapes' differences
		}
		if s, ok := scale(g); ok && s != b {
			g.warn(rep, fmt.Sprintf("DIFFERENT SIZE SCALES: the baseline %s ran at --size-scale %g and %s at %g: their bytes, bandwidths "+
				"and latencies are of objects of different sizes (kv-cache.py's objects are at their size) (the ratios between them compare unlike runs)",
				base.Label, b, g.Label, s))
		}
	}
}
