package export

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/extent"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// byteCount counts the bytes written to it.
type byteCount struct{ n int64 }

func (c *byteCount) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

type sizeCase struct {
	name    string
	opt     FioOptions
	prescan bool
}

// sizeCases are the options TestFioSizeExact exports every trace with:
// both layouts, one tier and several, block sizes from 4 KiB to 1 GiB,
// scales from 1 down, a prescan's cold objects and none.
var sizeCases = []sizeCase{
	{"extent-1MiB-1/64-prescan", FioOptions{SizeScale: 1.0 / 64}, true},
	{"extent-4KiB-1/4096-two-tiers-timed", FioOptions{BlockSize: 4096, SizeScale: 1.0 / 4096, Speed: SpeedTimed,
		Tiers: []schema.Tier{schema.TierCPU, schema.TierNVMe}}, false},
	{"extent-1GiB-full", FioOptions{BlockSize: 1 << 30}, true},
	{"extent-4MiB-0.3", FioOptions{BlockSize: 4 << 20, SizeScale: 0.3}, true},
	{"dir-64KiB-1/1024-all-tiers", FioOptions{BlockSize: 64 << 10, SizeScale: 1.0 / 1024, Layout: LayoutDir,
		Tiers: []schema.Tier{schema.TierGPU, schema.TierCPU, schema.TierNVMe}}, true},
	{"dir-1GiB-full", FioOptions{BlockSize: 1 << 30, Layout: LayoutDir}, false},
	{"dir-8KiB-1/256-long-dir", FioOptions{BlockSize: 8192, SizeScale: 1.0 / 256, Layout: LayoutDir,
		Dir: "/mnt/a-much-longer-directory/of-the-drive/under-test"}, true},
}

// checkFioSize exports src with every sizeCase (at scale, unless 0)
// through Fio, counting what it writes, and through FioSize, and reports
// where they differ: the bytes, the figures or the error.
func checkFioSize(t *testing.T, what string, src []byte, scale float64, noCold *int) {
	t.Helper()
	cases := sizeCases
	if scale == 1 {
		// In full, only the README's options and the dir layout's, in
		// 1 MiB blocks: a 4 KiB block's lines of an MLPerf trace are
		// terabytes.
		cases = []sizeCase{{"extent-1MiB-full-prescan", FioOptions{}, true}, {"dir-1MiB-full", FioOptions{Layout: LayoutDir}, true}}
	}
	for _, c := range cases {
		opt := c.opt
		if scale != 0 {
			opt.SizeScale = scale
		}
		if opt.Dir == "" {
			opt.Dir = "/mnt/nvme0/fio"
		}
		opt.Source = what
		if c.prescan {
			cold, err := ColdObjects(trace.NewReader(bytes.NewReader(src)))
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			opt.Cold = cold
		}
		var wrote byteCount
		logs := func(schema.Tier, LogKind) (io.Writer, error) { return &wrote, nil }
		st, err := Fio(trace.NewReader(bytes.NewReader(src)), opt, logs, &wrote)
		sized, n, sizeErr := FioSize(trace.NewReader(bytes.NewReader(src)), opt)
		if fmt.Sprint(err) != fmt.Sprint(sizeErr) {
			t.Errorf("%s %s: Fio: %v; FioSize: %v", what, c.name, err, sizeErr)
			continue
		}
		if err != nil {
			continue
		}
		if n != wrote.n {
			t.Errorf("%s %s: FioSize counts %d bytes, Fio wrote %d", what, c.name, n, wrote.n)
		}
		if sized != st {
			t.Errorf("%s %s: FioSize's figures differ from Fio's:\n%+v\n%+v", what, c.name, sized, st)
		}
		if !c.prescan {
			continue
		}
		// One read for the cold objects and the size: the same cold
		// objects, and without any, the same size.
		opt.Cold = nil
		sized, n, cold, err := FioSizeCold(trace.NewReader(bytes.NewReader(src)), opt)
		if err != nil {
			t.Fatalf("%s %s: FioSizeCold: %v", what, c.name, err)
		}
		want, err := ColdObjects(trace.NewReader(bytes.NewReader(src)))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cold, want) {
			t.Errorf("%s %s: FioSizeCold found %d cold objects, ColdObjects %d", what, c.name, len(cold), len(want))
		}
		if len(cold) == 0 && (n != wrote.n || sized != st) {
			t.Errorf("%s %s: without cold objects FioSizeCold counts %d bytes, Fio wrote %d; figures\n%+v\n%+v", what, c.name, n, wrote.n, sized, st)
		}
		if len(cold) == 0 {
			*noCold++
		}
	}
}

// TestFioSizeExact holds FioSize's count against the bytes Fio writes, on
// the hand-written trace, kv-cache.py's reference traces and random ones.
func TestFioSizeExact(t *testing.T) {
	files := []string{"testdata/tiny.csv"}
	var noCold int // the prescans that found no cold object
	for _, f := range []string{
		"llama8b_u10_d30_gpu0_cpu4_s42.csv",
		"llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst",
		"llama8b_u50_d30_gpu0_cpu4_decodeonly_s42.csv.zst",
		"llama8b_u50_d30_gpu0_cpu4_rag_s42.csv.zst",
	} {
		files = append(files, "../../testdata/reference/"+f)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkFioSize(t, f, src, 0, &noCold)
	}
	for seed := range uint64(20) {
		checkFioSize(t, "random trace "+strconv.FormatUint(seed, 10), randomTrace(seed, seed%2 == 1), 0, &noCold)
	}
	if noCold == 0 {
		t.Errorf("no trace without cold objects: FioSizeCold's one read is untested")
	}
}

// randomTrace is a trace of a few keys on every tier, with sizes up to
// 256 MiB that change, Evict pairs, deletes, cold reads (unless warm: then
// every key is written first) and rows out of order.
func randomTrace(seed uint64, warm bool) []byte {
	rng := rand.New(rand.NewPCG(seed, 11))
	var b strings.Builder
	b.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
	sizes := map[string]int64{}
	written := map[string]bool{}
	now := time.Duration(0)
	for range 400 {
		now += time.Duration(rng.IntN(3_000_000)-300_000) * time.Microsecond
		now = max(now, 0)
		key := fmt.Sprintf("k%d", rng.IntN(150))
		if _, ok := sizes[key]; !ok || rng.IntN(20) == 0 {
			sizes[key] = rng.Int64N(256 << 20)
		}
		tier := schema.Tier(rng.IntN(3))
		first := !written[key]
		written[key] = true
		line := func(op schema.Op, tier schema.Tier, phase schema.Phase) {
			fmt.Fprintf(&b, "%.6f,%s,%d,%s,%s,%s\n", now.Seconds(), op, sizes[key], tier, key, phase)
		}
		switch p := rng.IntN(10); {
		case p < 3 || warm && first:
			line(schema.OpWrite, tier, schema.PhasePrefill)
		case p < 6:
			line(schema.OpRead, tier, schema.PhaseDecode)
		case p < 8:
			line(schema.OpRead, tier, schema.PhaseEvict)
			line(schema.OpWrite, schema.Tier((int(tier)+1+rng.IntN(2))%3), schema.PhaseEvict)
		default:
			line(schema.OpDelete, tier, schema.PhaseEvict)
		}
	}
	return []byte(b.String())
}

// TestFioSizeHuge sizes a petabyte object in 4 KiB blocks, 2^38 I/O lines
// a write and a read, which formatting would take hours to count, and
// counts them exactly.
func TestFioSizeHuge(t *testing.T) {
	const size, bs = 1 << 50, 4096
	src := fmt.Sprintf("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n"+
		"0.000000,Write,%d,Tier-2,huge,Prefill\n12.000000,Read,%d,Tier-2,huge,Decode\n", int64(size), int64(size))
	opt := FioOptions{BlockSize: bs, Dir: "/d"}.withDefaults()
	st, n, err := FioSize(trace.NewReader(strings.NewReader(src)), opt)
	if err != nil {
		t.Fatal(err)
	}
	s := st.Tier[schema.TierNVMe]
	if s.Ops != 2*size/bs || s.WriteOps != size/bs || s.WriteBytes != size || s.ReadBytes != size || s.FileSize != size {
		t.Errorf("figures %+v", s)
	}
	// The log by hand: its header, add and open, then for the write at
	// 0 µs and the read at 12000000 µs one line a block,
	// "US /d/kvbench.extent ACT OFF 4096\n", OFF being 4096*k, k < K.
	const k = size / bs
	want := int64(len("fio version 3 iolog\n0 /d/kvbench.extent add\n0 /d/kvbench.extent open\n"))
	var offDigits int64 = k // every offset's first digit
	for p := int64(10); p < size; p *= 10 {
		offDigits += k - (p+bs-1)/bs // one more for each offset >= p
	}
	for _, line := range []string{"0 /d/kvbench.extent write  4096\n", "12000000 /d/kvbench.extent read  4096\n"} {
		want += k*int64(len(line)) + offDigits
	}
	// The job file, as Fio renders it from these figures.
	x := &fioExport{opt: opt, st: &st}
	x.tiers[schema.TierNVMe] = &fioTier{x: x, tier: schema.TierNVMe, st: &st.Tier[schema.TierNVMe],
		alloc: extent.New(extentCapacity, DefaultAlign), file: "/d/kvbench.extent"}
	var job bytes.Buffer
	bw := bufio.NewWriter(&job)
	x.writeJob(bw)
	bw.Flush()
	if !strings.Contains(job.String(), "read_iolog_chunked=1") {
		t.Errorf("job file:\n%s", job.String())
	}
	want += int64(job.Len())
	if n != want {
		t.Errorf("FioSize counts %d bytes, want %d", n, want)
	}
}

// TestDigitsOfRun holds the closed forms against strconv.
func TestDigitsOfRun(t *testing.T) {
	for _, v := range []int64{0, 1, 9, 10, 99, 100, -1, -9, -10, math.MaxInt64, math.MinInt64, 1e18 - 1, 1e18} {
		if got, want := numLen(v), len(strconv.FormatInt(v, 10)); got != want {
			t.Errorf("numLen(%d) = %d, want %d", v, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		var a, step, k int64
		switch i % 3 {
		case 0: // small runs across the first powers of ten
			a, step, k = rng.Int64N(2000), 1+rng.Int64N(50), rng.Int64N(300)
		case 1: // runs of 4 KiB blocks across a power of ten
			p := int64(math.Pow10(4 + rng.IntN(12)))
			a, step, k = p-rng.Int64N(1<<22), 4096, rng.Int64N(3000)
		default: // the largest offsets
			a, step, k = math.MaxInt64/2+rng.Int64N(1<<40), 1+rng.Int64N(1<<30), rng.Int64N(1000)
		}
		a = max(a, 0)
		var want int64
		for j := range k {
			want += int64(len(strconv.FormatInt(a+j*step, 10)))
		}
		if got := digitsOfRun(a, step, k); got != want {
			t.Fatalf("digitsOfRun(%d, %d, %d) = %d, want %d", a, step, k, got, want)
		}
	}
}

// TestFioSizeTraceFile holds FioSize against Fio on the trace file that
// KVBENCH_EXPORT_TRACE names (such as the README's MLPerf 8B trace), with
// every sizeCase at the scale KVBENCH_EXPORT_SCALE (a float; default
// 1/65536, as the README exports it; at 1 the README's options and the dir
// layout's only, in 1 MiB blocks, which format as many bytes as the
// export would write, tens of GiB for the README's trace).
func TestFioSizeTraceFile(t *testing.T) {
	name := os.Getenv("KVBENCH_EXPORT_TRACE")
	if name == "" {
		t.Skip("set KVBENCH_EXPORT_TRACE to a trace file to size it")
	}
	scale := 1.0 / 65536
	if s := os.Getenv("KVBENCH_EXPORT_SCALE"); s != "" {
		var err error
		if scale, err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatalf("KVBENCH_EXPORT_SCALE %s: %v", s, err)
		}
	}
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var noCold int
	checkFioSize(t, name, src, scale, &noCold)
	t.Logf("%d prescans of %s found no cold object", noCold, name)
}
