package setup

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
)

func TestProgressLine(t *testing.T) {
	for _, tt := range []struct {
		p    replay.Progress
		v    ProgressView
		want string
	}{
		{replay.Progress{Elapsed: 10 * time.Second, RowsDone: 250, Bytes: 50e6, Lag: 1500 * time.Microsecond}, ProgressView{total: 1000},
			"kvreplay:  25.0% (250 of 1,000 rows), 0.005 GB/s, lag 1.5ms, ETA 30s"},
		{replay.Progress{Elapsed: time.Second}, ProgressView{total: 1000}, "kvreplay:   0.0% (0 of 1,000 rows), 0.000 GB/s, lag 0s, ETA -"},
		{replay.Progress{Elapsed: 2 * time.Second, RowsDone: 1000, Bytes: 2e6}, ProgressView{total: 1000}, "kvreplay: 100.0% (1,000 of 1,000 rows), 0.001 GB/s, lag 0s, ETA 0s"},
		{replay.Progress{Elapsed: 2 * time.Second, RowsDone: 7, Bytes: 2e6}, ProgressView{}, "kvreplay: 7 rows done, 0.001 GB/s, lag 0s"},
		// A 15 s window over a trace of an hour: the window's end, not
		// the rows' 59 minutes.
		{replay.Progress{Elapsed: 3 * time.Second, RowsDone: 250}, ProgressView{total: 290000, window: 15 * time.Second},
			"kvreplay:   0.1% (250 of 290,000 rows), 0.000 GB/s, lag 0s, 12s of the 15s window left"},
		{replay.Progress{Elapsed: time.Second}, ProgressView{total: 290000, window: 15 * time.Second},
			"kvreplay:   0.0% (0 of 290,000 rows), 0.000 GB/s, lag 0s, 14s of the 15s window left"},
		// Rows that end before the window: their estimate.
		{replay.Progress{Elapsed: 3 * time.Second, RowsDone: 750}, ProgressView{total: 1000, window: time.Minute},
			"kvreplay:  75.0% (750 of 1,000 rows), 0.000 GB/s, lag 0s, ETA 1s"},
		{replay.Progress{Elapsed: 16 * time.Second, RowsDone: 900}, ProgressView{total: 290000, window: 15 * time.Second},
			"kvreplay:   0.3% (900 of 290,000 rows), 0.000 GB/s, lag 0s, window closed: finishing released rows"},
		// A closed loop of a sample of the users: their rows are not
		// counted, the window still is.
		{replay.Progress{Elapsed: 5 * time.Second, RowsDone: 40}, ProgressView{window: 30 * time.Second},
			"kvreplay: 40 rows done, 0.000 GB/s, lag 0s, 25s of the 30s window left"},
	} {
		if got := ProgressLine(tt.p, tt.v); got != tt.want {
			t.Errorf("ProgressLine(%+v, %+v)\n got %q\nwant %q", tt.p, tt.v, got, tt.want)
		}
	}
	plan := &replay.Plan{Rows: 500}
	if v := NewProgressView(&replay.Config{ClosedLoop: true, Users: 3, Duration: time.Second}, plan); v.total != 0 || v.window != time.Second {
		t.Errorf("a closed loop of 3 users: view %+v, want no total and the window", v)
	}
	sample := &replay.Plan{Rows: 500, UserLimit: 3, UserRows: 120}
	if v := NewProgressView(&replay.Config{ClosedLoop: true, Users: 3}, sample); v.total != 120 {
		t.Errorf("a closed loop of the 3 users the plan planned: view %+v, want their 120 rows", v)
	}
	if v := NewProgressView(&replay.Config{ClosedLoop: true, Users: 4}, sample); v.total != 0 {
		t.Errorf("a closed loop of 4 users, the plan of 3: view %+v, want no total", v)
	}
	if v := NewProgressView(&replay.Config{ClosedLoop: true}, plan); v.total != 500 {
		t.Errorf("a closed loop of every user: view %+v, want the plan's rows", v)
	}
	// The setup rows (kvtrace --precondition's) run before the clock and
	// are never in RowsDone: the line counted them, and a whole replay
	// ended at 94.3% (1,904 of 2,020 rows).
	pre := &replay.Plan{Rows: 2020, SetupRows: 116}
	if v := NewProgressView(&replay.Config{}, pre); v.total != 1904 {
		t.Errorf("a trace with 116 setup rows of 2,020: view %+v, want the 1,904 measured", v)
	}
}
