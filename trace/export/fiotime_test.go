package export

import (
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// fioSchedule returns when fio (3.31 to at least 3.41, iolog.c:
// delay_since_ttime) issues each I/O line of a version 3 iolog in a timed
// replay, in microseconds from the job's start: each line waits the
// difference between its timestamp and the line's before it, except that
// a line after one stamped 0 waits nothing (fio takes a last timestamp of
// 0 for "none yet"), and so does a line stamped before the one before it.
func fioSchedule(lines []ioLine) []int64 {
	var at, last int64
	var ios []int64
	for _, l := range lines {
		if last != 0 && l.us >= last {
			at += l.us - last
		}
		last = l.us
		if l.act == "read" || l.act == "write" {
			ios = append(ios, at)
		}
	}
	return ios
}

// TestFioTimedSchedule: in a timed export, fio issues every I/O at its
// row's time from the trace's first row, on every tier, whatever the
// time of the log's first I/O. fio waits nothing after a line stamped 0,
// so logs whose first lines are stamped 0 lost the time up to their
// first later line: a read 0.6 s after the write before it ran at once.
func TestFioTimedSchedule(t *testing.T) {
	src := mt2Header +
		"0.000000,Write,8192,Tier-2,a,Prefill\n" +
		"0.300000,Write,4096,Tier-1,b,Prefill\n" +
		"0.600000,Read,8192,Tier-2,a,Decode\n" +
		"0.700000,Read,4096,Tier-1,b,Decode\n" +
		"0.900000,Read,8192,Tier-2,a,Decode\n"
	for _, layout := range []string{LayoutExtent, LayoutDir} {
		opt := FioOptions{Dir: "/d", Speed: SpeedTimed, BlockSize: 4096, Layout: layout,
			Tiers: []schema.Tier{schema.TierCPU, schema.TierNVMe}}.withDefaults()
		_, _, m := fioOf(t, src, opt)
		for tier, want := range map[schema.Tier][]time.Duration{
			schema.TierCPU:  {300 * time.Millisecond, 700 * time.Millisecond},
			schema.TierNVMe: {0, 0, 600 * time.Millisecond, 600 * time.Millisecond, 900 * time.Millisecond, 900 * time.Millisecond},
		} {
			got := fioSchedule(parseLog(t, "log", m.logs[opt.LogPath(tier, ReplayLog)].Bytes()))
			ok := len(got) == len(want)
			for i := 0; ok && i < len(got); i++ {
				ok = got[i] == want[i].Microseconds()
			}
			if !ok {
				t.Errorf("%s %s: fio issues the I/Os at %v us, the trace at %v", layout, tier, got, want)
			}
		}
	}
}

// TestFioTimedReadsLogWhole: a long log is read in chunks only by an asap
// job; fio's chunked reading ends a timed job early (TestFioRunsTimedLong).
func TestFioTimedReadsLogWhole(t *testing.T) {
	src := mt2Header + "0,Write,65536,Tier-2,a,Prefill\n1,Read,65536,Tier-2,a,Decode\n"
	for speed, want := range map[string]bool{SpeedASAP: true, SpeedTimed: false} {
		_, job, _ := fioOf(t, src, FioOptions{Dir: "/d", BlockSize: 4096, Speed: speed, chunkAbove: 4})
		if got := strings.Contains(job, "read_iolog_chunked=1"); got != want {
			t.Errorf("%s: read_iolog_chunked %v, want %v:\n%s", speed, got, want, job)
		}
	}
}
