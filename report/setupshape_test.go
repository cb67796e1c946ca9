package report

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestWholeTraceWithSetupRows: a replay of every row of a kvtrace
// --precondition trace ran its setup rows before the clock and measured
// the rest (RowsDone is the trace's rows less SetupRows): it covered the
// whole trace. A comparison called it "part of the trace (1,904 of 2,020
// rows)" beside a --duration window of it.
func TestWholeTraceWithSetupRows(t *testing.T) {
	r := &schema.Result{Traces: []schema.TraceInfo{{File: "pre.csv.zst", Rows: 2020}}, SizeScale: 1}
	r.Replay.RowsDone, r.Replay.SetupRows, r.Replay.Speed = 1904, 116, 1
	s, ok := shapeOf(r)
	if !ok || !s.whole || s.window() != "the whole trace (1,904 of 1,904 rows)" {
		t.Errorf("whole %v, window %q; want the whole trace (1,904 of 1,904 rows)", s.whole, s.window())
	}
	w := *r
	w.Replay.RowsDone, w.Replay.DurationS = 553, 3
	ws, _ := shapeOf(&w)
	d := strings.Join(s.differences(ws, "a", "b"), "\n")
	if !strings.Contains(d, "a covered the whole trace (1,904 of 1,904 rows) and b a --duration 3s window (553 of 1,904 rows)") {
		t.Errorf("differences %q", d)
	}
}
