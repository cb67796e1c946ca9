package export

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// Tests written from mutation testing: each pins a rule that a one-token
// change of the code broke without another test failing.

// fioOf exports src with opt and returns the stats, the job file and the
// logs.
func fioOf(t *testing.T, src string, opt FioOptions) (FioStats, string, *memLogs) {
	t.Helper()
	opt = opt.withDefaults()
	m := newMemLogs(&opt)
	var job bytes.Buffer
	st, err := Fio(trace.NewReader(strings.NewReader(src)), opt, m.open, &job)
	if err != nil {
		t.Fatal(err)
	}
	return st, job.String(), m
}

const mt2Header = "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n"

// TestFioWriteOnlyTierHasAJob: a tier whose rows only write gets its
// replay job (a tier without I/O is the one left out).
func TestFioWriteOnlyTierHasAJob(t *testing.T) {
	st, job, _ := fioOf(t, mt2Header+"0,Write,8192,Tier-2,a,Prefill\n", FioOptions{Dir: "/d"})
	if st.Tier[schema.TierNVMe].WriteOps == 0 || !strings.Contains(job, "[replay-tier2]") || strings.Contains(job, "no I/O: no job") {
		t.Errorf("a write-only tier: %+v, job\n%s\nwant a replay job", st.Tier[schema.TierNVMe], job)
	}
}

// TestFioBufferedJob: --buffered writes direct=0; the default direct=1.
func TestFioBufferedJob(t *testing.T) {
	src := mt2Header + "0,Write,8192,Tier-2,a,Prefill\n"
	for _, buffered := range []bool{false, true} {
		_, job, _ := fioOf(t, src, FioOptions{Dir: "/d", Buffered: buffered})
		want := "direct=1\n"
		if buffered {
			want = "direct=0\n"
		}
		if !strings.Contains(job, want) {
			t.Errorf("buffered %v: the job file has no %q:\n%s", buffered, want, job)
		}
	}
}

// TestFioTimesFromTheFirstRow: the iolog's times count from the trace's
// first row, so a timed replay does not idle for the time before it.
func TestFioTimesFromTheFirstRow(t *testing.T) {
	src := mt2Header + "5.000000,Write,4096,Tier-2,a,Prefill\n5.250000,Read,4096,Tier-2,a,Decode\n"
	opt := FioOptions{Dir: "/d", Speed: SpeedTimed}.withDefaults()
	_, _, m := fioOf(t, src, opt)
	var us []int64
	for _, l := range parseLog(t, "log", m.logs[opt.LogPath(schema.TierNVMe, ReplayLog)].Bytes()) {
		if l.act == "read" || l.act == "write" {
			us = append(us, l.us)
		}
	}
	if len(us) != 2 || us[0] != logEpoch || us[1] != logEpoch+250000 {
		t.Errorf("I/O at %v us, want [%d %d]", us, logEpoch, logEpoch+250000)
	}
}

// TestFioDeleteOnAnotherTier: a Delete row naming another tier than the
// object's frees the object where it is (as kvreplay deletes it), so its
// extent is reused.
func TestFioDeleteOnAnotherTier(t *testing.T) {
	src := mt2Header + "0,Write,8192,Tier-2,a,Prefill\n1,Delete,8192,Tier-1,a,Evict\n2,Write,8192,Tier-2,b,Prefill\n"
	st, _, _ := fioOf(t, src, FioOptions{Dir: "/d", Tiers: []schema.Tier{schema.TierCPU, schema.TierNVMe}})
	if hw := st.Tier[schema.TierNVMe].HighWater; hw != 8192 {
		t.Errorf("Tier-2 high-water mark %d, want 8192 (a's extent freed, reused by b)", hw)
	}
}

// TestFioDirGrowPrepBytes: in the dir layout an object rewritten larger
// is prepared for its growth only: the prep job's bytes are the files'.
func TestFioDirGrowPrepBytes(t *testing.T) {
	src := mt2Header + "0,Write,8192,Tier-2,a,Prefill\n1,Write,16384,Tier-2,a,Prefill\n"
	st, job, _ := fioOf(t, src, FioOptions{Dir: "/d", Layout: LayoutDir})
	s := st.Tier[schema.TierNVMe]
	if s.PrepBytes != 16384 || s.FileSize != 16384 || !strings.Contains(job, "io_size=16384\n") {
		t.Errorf("prep %d bytes, files %d bytes, want 16384 each; job\n%s", s.PrepBytes, s.FileSize, job)
	}
}

// TestFioDirOpenFilesBound: a dir-layout replay log never holds more than
// maxOpenFiles files open at once.
func TestFioDirOpenFilesBound(t *testing.T) {
	var b strings.Builder
	b.WriteString(mt2Header)
	for i := range maxOpenFiles + 2 {
		fmt.Fprintf(&b, "%d,Write,4096,Tier-2,k%d,Prefill\n", i, i)
	}
	opt := FioOptions{Dir: "/d", Layout: LayoutDir}.withDefaults()
	_, _, m := fioOf(t, b.String(), opt)
	open, most := 0, 0
	for _, l := range parseLog(t, "log", m.logs[opt.LogPath(schema.TierNVMe, ReplayLog)].Bytes()) {
		switch l.act {
		case "open":
			open++
		case "close":
			open--
		}
		most = max(most, open)
	}
	if most != maxOpenFiles {
		t.Errorf("at most %d files open at once, want %d", most, maxOpenFiles)
	}
}

// TestFioValidateNaNAndNegativeCold: a NaN --size-scale and a cold object
// of a negative size are refused.
func TestFioValidateNaNAndNegativeCold(t *testing.T) {
	if err := (FioOptions{Dir: "/d", SizeScale: math.NaN()}).Validate(); err == nil || !strings.Contains(err.Error(), "--size-scale") {
		t.Errorf("--size-scale NaN: %v, want refused", err)
	}
	cold := []ColdObject{{Key: "a", Tier: schema.TierNVMe, Size: -1}}
	if err := (FioOptions{Dir: "/d", Cold: cold}).Validate(); err == nil || !strings.Contains(err.Error(), "cold object") {
		t.Errorf("a cold object of -1 bytes: %v, want refused", err)
	}
}
