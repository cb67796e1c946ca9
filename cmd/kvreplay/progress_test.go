package main

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
)

func TestProgressLine(t *testing.T) {
	for _, tt := range []struct {
		p     replay.Progress
		total int64
		want  string
	}{
		{replay.Progress{Elapsed: 10 * time.Second, RowsDone: 250, Bytes: 50e6, Lag: 1500 * time.Microsecond}, 1000,
			"kvreplay:  25.0% (250 of 1000 rows), 0.005 GB/s, lag 1.5ms, ETA 30s"},
		{replay.Progress{Elapsed: time.Second}, 1000, "kvreplay:   0.0% (0 of 1000 rows), 0.000 GB/s, lag 0s, ETA -"},
		{replay.Progress{Elapsed: 2 * time.Second, RowsDone: 1000, Bytes: 2e6}, 1000, "kvreplay: 100.0% (1000 of 1000 rows), 0.001 GB/s, lag 0s, ETA 0s"},
		{replay.Progress{Elapsed: 2 * time.Second, RowsDone: 7, Bytes: 2e6}, 0, "kvreplay: 7 rows done, 0.001 GB/s, lag 0s"},
	} {
		if got := progressLine(tt.p, tt.total); got != tt.want {
			t.Errorf("progressLine(%+v, %d)\n got %q\nwant %q", tt.p, tt.total, got, tt.want)
		}
	}
}
