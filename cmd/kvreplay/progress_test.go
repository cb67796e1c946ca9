package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// The summary's first line never says "complete" when --duration stopped
// the run after a fraction of the trace.
func TestSummaryStoppedByWindow(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    schema.Result
		want string
	}{
		{"window", schema.Result{Complete: true, WallS: 15.02, Traces: []schema.TraceInfo{{Rows: 290000}},
			Replay: schema.ReplayStats{RowsDone: 1160, DurationS: 15}},
			"kvreplay: 1,160 of 290,000 rows in 15.02 s (stopped at the --duration window of 15 s)\n"},
		{"pipe", schema.Result{Complete: true, WallS: 2, Traces: []schema.TraceInfo{{Rows: 50, ReadInPart: true}},
			Replay: schema.ReplayStats{RowsDone: 40, DurationS: 2}},
			"kvreplay: 40 rows of a trace read in part (its total is unknown) in 2.00 s (stopped at the --duration window of 2 s)\n"},
		{"whole trace within the window", schema.Result{Complete: true, WallS: 1, Traces: []schema.TraceInfo{{Rows: 10}},
			Replay: schema.ReplayStats{RowsDone: 10, DurationS: 15}},
			"kvreplay: 10 of 10 rows in 1.00 s (complete)\n"},
		{"interrupted", schema.Result{WallS: 1, IncompleteReason: "interrupted (interrupt signal received)", Traces: []schema.TraceInfo{{Rows: 10}},
			Replay: schema.ReplayStats{RowsDone: 3, DurationS: 15}},
			"kvreplay: 3 of 10 rows in 1.00 s (INCOMPLETE: interrupted (interrupt signal received))\n"},
		{"closed loop cut", schema.Result{Complete: true, WallS: 30, Traces: []schema.TraceInfo{{Rows: 1000}},
			ClosedLoop: &schema.ClosedLoopStats{UserLimit: 4, RequestsLeft: 12}, Replay: schema.ReplayStats{RowsDone: 90, DurationS: 30}},
			"kvreplay: 90 of 1,000 rows in 30.00 s (stopped at the --duration window of 30 s)\n"},
		{"a rank's whole shard", schema.Result{Complete: true, WallS: 4, Rank: 1, Ranks: 2, Traces: []schema.TraceInfo{{Rows: 6052}},
			Replay: schema.ReplayStats{RowsDone: 971, DurationS: 10, Shard: "key"}},
			"kvreplay: 971 rows, rank 1's shard (--shard key) of the trace's 6,052 rows over 2 ranks, in 4.00 s (complete)\n"},
		{"a rank's shard cut by the window", schema.Result{Complete: true, WallS: 10.01, Rank: 0, Ranks: 2, Traces: []schema.TraceInfo{{Rows: 6052}},
			Replay: schema.ReplayStats{RowsDone: 900, DurationS: 10, Shard: "key"}},
			"kvreplay: 900 rows, rank 0's shard (--shard key) of the trace's 6,052 rows over 2 ranks, in 10.01 s (stopped at the --duration window of 10 s)\n"},
		{"closed loop sample done", schema.Result{Complete: true, WallS: 3, Traces: []schema.TraceInfo{{Rows: 1000}},
			ClosedLoop: &schema.ClosedLoopStats{UserLimit: 4}, Replay: schema.ReplayStats{RowsDone: 90, DurationS: 30}},
			"kvreplay: 90 of 1,000 rows in 3.00 s (complete)\n"},
		{"closed loop sample, its last requests cut", schema.Result{Complete: true, WallS: 30, Traces: []schema.TraceInfo{{Rows: 1000}},
			ClosedLoop: &schema.ClosedLoopStats{UserLimit: 4}, Replay: schema.ReplayStats{RowsDone: 88, DurationS: 30, RequestsCut: 2}},
			"kvreplay: 88 of 1,000 rows in 30.00 s (stopped at the --duration window of 30 s)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			writeSummary(&b, &tt.r)
			if first, _, _ := strings.Cut(b.String(), "\n"); first+"\n" != tt.want {
				t.Errorf("first line %q\nwant %q", first, strings.TrimSuffix(tt.want, "\n"))
			}
		})
	}
}
