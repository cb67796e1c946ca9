package replay_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r *bytes.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// traceBytes is recs as a trace.
func traceBytes(t testing.TB, recs []schema.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pipeTrace is data read once, as from a pipe (no prescan), with the
// bytes read from it counted in n.
func pipeTrace(data []byte, n *atomic.Int64) replay.Source {
	return replay.Source{Name: "-", Open: func() (*trace.Reader, error) {
		return trace.NewReader(countingReader{bytes.NewReader(data), n}), nil
	}}
}

// TestRowsMissedCountsUnreadRows: a --duration window that closes on a
// device far behind the trace's pace counts, in rows_missed and in the
// lag, every row due before its end that was never released, not only
// those the reader had read when it closed: a single worker on a 10 ms
// device releases a few rows, the reader is held a few batches ahead of
// them, and thousands more are due. The replay reads on, without running
// them, to the first row due after the window's end (a row stamped before
// the row before it is due with that one, not before), and no further:
// a trace on a pipe is not read to its end. Sharded, each rank counts its
// own rows, and the ranks' counts add up to the trace's. Before, the
// count stopped at the rows already read ("at least 1279").
func TestRowsMissedCountsUnreadRows(t *testing.T) {
	const (
		gap    = 30 * time.Microsecond
		window = 60 * time.Millisecond
		tail   = 100_000 // rows after the window
	)
	var recs []schema.Record
	for i := range 4000 + tail {
		at := 3*time.Millisecond + time.Duration(i)*gap
		if i%100 == 50 {
			at -= 2 * time.Millisecond // stamped before the row before it
		}
		recs = append(recs, rec(at, schema.OpWrite, 4096, schema.TierCPU, fmt.Sprint("k", i), schema.PhasePrefill, uint64(i/3+1)))
	}
	data := traceBytes(t, recs)
	for _, tc := range []struct {
		name  string
		speed float64
		ranks int
	}{
		{"speed 1", 1, 1},
		{"speed 2", 2, 1},
		{"speed 2, 2 ranks", 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The rows due by the window's end: each at its time, or its
			// predecessor's when that is later, from the first row's,
			// over the speed.
			due, last := int64(0), time.Duration(0)
			for _, r := range recs {
				last = max(last, r.Time)
				if time.Duration(float64(last-recs[0].Time)/tc.speed) <= window {
					due++
				}
			}
			var released, missed int64
			for rank := range tc.ranks {
				synctest.Test(t, func(t *testing.T) {
					var read atomic.Int64
					src, size := pipeTrace(data, &read), int64(len(data))
					cfg := replay.DefaultConfig()
					cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
					cfg.Speed, cfg.Workers, cfg.QueueDepth, cfg.Duration = tc.speed, 1, 1, window
					if tc.ranks > 1 {
						cfg.Rank, cfg.Ranks, cfg.Shard = rank, tc.ranks, replay.ShardKey
					}
					res, err := runReplay(t, cfg, src, map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), 10*time.Millisecond)})
					if err != nil {
						t.Fatal(err)
					}
					r := res.Replay
					if r.Rows == 0 || r.Rows > 20 || r.RowsMissed == 0 {
						t.Fatalf("%d rows released, %d missed; want a few released and many missed", r.Rows, r.RowsMissed)
					}
					released += r.Rows
					missed += r.RowsMissed
					want := fmt.Sprintf("%d rows due before the --duration window closed were never released (%d were)", r.RowsMissed, r.Rows)
					found := false
					for _, w := range res.Warnings {
						found = found || strings.HasPrefix(w, want)
					}
					if !found {
						t.Errorf("warnings %q: want one starting %q", res.Warnings, want)
					}
					if tc.ranks == 1 && (r.Rows+r.RowsMissed != due || res.Lag.Count != due) {
						t.Errorf("%d rows released, %d missed, lag of %d rows; want %d due in all, each in the lag", r.Rows, r.RowsMissed, res.Lag.Count, due)
					}
					// Read to the first row after the window, and a few
					// batches on: far from the trace's end.
					if n := read.Load(); n > size/4 {
						t.Errorf("read %d bytes of the trace's %d: want it read about to the window's end", n, size)
					}
				})
			}
			if released+missed != due {
				t.Errorf("%d rows released, %d missed on %d ranks; want %d due in all", released, missed, tc.ranks, due)
			}
		})
	}
}
