package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
)

func TestProgressLine(t *testing.T) {
	for _, tt := range []struct {
		p    replay.Progress
		v    progressView
		want string
	}{
		{replay.Progress{Elapsed: 10 * time.Second, RowsDone: 250, Bytes: 50e6, Lag: 1500 * time.Microsecond}, progressView{total: 1000},
			"kvreplay:  25.0% (250 of 1,000 rows), 0.005 GB/s, lag 1.5ms, ETA 30s"},
		{replay.Progress{Elapsed: time.Second}, progressView{total: 1000}, "kvreplay:   0.0% (0 of 1,000 rows), 0.000 GB/s, lag 0s, ETA -"},
		{replay.Progress{Elapsed: 2 * time.Second, RowsDone: 1000, Bytes: 2e6}, progressView{total: 1000}, "kvreplay: 100.0% (1,000 of 1,000 rows), 0.001 GB/s, lag 0s, ETA 0s"},
		{replay.Progress{Elapsed: 2 * time.Second, RowsDone: 7, Bytes: 2e6}, progressView{}, "kvreplay: 7 rows done, 0.001 GB/s, lag 0s"},
		// A 15 s window over a trace of an hour: the window's end, not
		// the rows' 59 minutes.
		{replay.Progress{Elapsed: 3 * time.Second, RowsDone: 250}, progressView{total: 290000, window: 15 * time.Second},
			"kvreplay:   0.1% (250 of 290,000 rows), 0.000 GB/s, lag 0s, 12s of the 15s window left"},
		{replay.Progress{Elapsed: time.Second}, progressView{total: 290000, window: 15 * time.Second},
			"kvreplay:   0.0% (0 of 290,000 rows), 0.000 GB/s, lag 0s, 14s of the 15s window left"},
		// Rows that end before the window: their estimate.
		{replay.Progress{Elapsed: 3 * time.Second, RowsDone: 750}, progressView{total: 1000, window: time.Minute},
			"kvreplay:  75.0% (750 of 1,000 rows), 0.000 GB/s, lag 0s, ETA 1s"},
		{replay.Progress{Elapsed: 16 * time.Second, RowsDone: 900}, progressView{total: 290000, window: 15 * time.Second},
			"kvreplay:   0.3% (900 of 290,000 rows), 0.000 GB/s, lag 0s, window closed: finishing released rows"},
		// A closed loop of a sample of the users: their rows are not
		// counted, the window still is.
		{replay.Progress{Elapsed: 5 * time.Second, RowsDone: 40}, progressView{window: 30 * time.Second},
			"kvreplay: 40 rows done, 0.000 GB/s, lag 0s, 25s of the 30s window left"},
	} {
		if got := progressLine(tt.p, tt.v); got != tt.want {
			t.Errorf("progressLine(%+v, %+v)\n got %q\nwant %q", tt.p, tt.v, got, tt.want)
		}
	}
	plan := &replay.Plan{Rows: 500}
	if v := newProgressView(&replay.Config{ClosedLoop: true, Users: 3, Duration: time.Second}, plan); v.total != 0 || v.window != time.Second {
		t.Errorf("a closed loop of 3 users: view %+v, want no total and the window", v)
	}
	if v := newProgressView(&replay.Config{ClosedLoop: true}, plan); v.total != 500 {
		t.Errorf("a closed loop of every user: view %+v, want the plan's rows", v)
	}
}

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
		{"closed loop sample done", schema.Result{Complete: true, WallS: 3, Traces: []schema.TraceInfo{{Rows: 1000}},
			ClosedLoop: &schema.ClosedLoopStats{UserLimit: 4}, Replay: schema.ReplayStats{RowsDone: 90, DurationS: 30}},
			"kvreplay: 90 of 1,000 rows in 3.00 s (complete)\n"},
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
