package export

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
	_ "github.com/kvbench/kvbench/trace/zst" // the reference traces are zstd streams
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// openTrace opens a trace under testdata or testdata/reference of the module.
func openTrace(tb testing.TB, path string) *trace.Reader {
	tb.Helper()
	r, err := trace.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// memLogs collects the iologs Fio writes, by name.
type memLogs struct {
	opt  *FioOptions
	logs map[string]*bytes.Buffer
}

func newMemLogs(opt *FioOptions) *memLogs {
	return &memLogs{opt: opt, logs: map[string]*bytes.Buffer{}}
}

func (m *memLogs) open(t schema.Tier, k LogKind) (io.Writer, error) {
	b := &bytes.Buffer{}
	m.logs[m.opt.LogPath(t, k)] = b
	return b, nil
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

var fioCases = []struct {
	name    string
	opt     FioOptions
	prescan bool // set opt.Cold from ColdObjects
}{
	{"extent", FioOptions{BlockSize: 8192, Dir: "/mnt/kv"}, false},
	{"extent-prescan", FioOptions{BlockSize: 8192, Dir: "/mnt/kv"}, true},
	{"dir", FioOptions{BlockSize: 8192, Dir: "/mnt/kv", Layout: LayoutDir}, true},
	{"extent-two-tiers-timed", FioOptions{BlockSize: 8192, Dir: "/mnt/kv", Tiers: []schema.Tier{schema.TierCPU, schema.TierNVMe},
		Speed: SpeedTimed, IODepth: 4, Engine: "libaio"}, false},
	{"dir-two-tiers", FioOptions{BlockSize: 4096, Dir: "/mnt/kv", Layout: LayoutDir, Tiers: []schema.Tier{schema.TierCPU, schema.TierNVMe}}, false},
}

// TestFioGolden renders the iologs and the job file of a small hand-written
// trace that has every case: multi-block objects, a key to escape, an
// out-of-order row, a cold read, an Evict pair, deletes, extent reuse and a
// zero-size object.
func TestFioGolden(t *testing.T) {
	for _, c := range fioCases {
		t.Run(c.name, func(t *testing.T) {
			opt := c.opt.withDefaults()
			if c.prescan {
				opt.Cold = coldOf(t, "testdata/tiny.csv")
			}
			opt.Source = "tiny.csv"
			opt.LogPath = func(tier schema.Tier, k LogKind) string { return LogName("tiny", tier, k) }
			m := newMemLogs(&opt)
			var job bytes.Buffer
			st, err := Fio(openTrace(t, "testdata/tiny.csv"), opt, m.open, &job)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+"/tiny.fio", job.Bytes())
			for name, b := range m.logs {
				golden(t, c.name+"/"+name, b.Bytes())
			}
			s := st.Tier[schema.TierNVMe]
			if st.Rows != 11 || st.Clamped != 1 || s.ColdReads != 1 || st.ColdReads != s.ColdReads+st.Tier[schema.TierCPU].ColdReads {
				t.Errorf("stats %+v", st)
			}
			// Tier-2 reads: 20000->20480, 8192, 4096; writes 20480, 4096, 12288, 0.
			if s.ReadBytes != 20480+8192+4096 || s.WriteBytes != 20480+4096+12288 {
				t.Errorf("Tier-2 read %d write %d bytes", s.ReadBytes, s.WriteBytes)
			}
			checkLogs(t, opt, m.logs)
		})
	}
}

// coldOf returns the cold objects of a trace file.
func coldOf(tb testing.TB, file string) []ColdObject {
	tb.Helper()
	cold, err := ColdObjects(openTrace(tb, file))
	if err != nil {
		tb.Fatal(err)
	}
	return cold
}

// TestFioColdPrescan places cold objects before the first row when told
// to, as kvreplay's prescan does, and at their first read otherwise.
func TestFioColdPrescan(t *testing.T) {
	const src = `Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase
0,Write,8192,Tier-2,a,Prefill
1,Read,4096,Tier-2,cold1,Decode
2,Delete,8192,Tier-2,a,Evict
3,Read,4096,Tier-1,cold2,Decode
4,Write,4096,Tier-2,cold2,Evict
5,Read,4096,Tier-2,cold1,Decode
6,Delete,4096,Tier-2,cold1,Evict
7,Read,4096,Tier-2,cold1,Decode
`
	cold, err := ColdObjects(trace.NewReader(strings.NewReader(src)))
	if err != nil {
		t.Fatal(err)
	}
	// cold1 and cold2 are read before any row wrote them; cold1 read after
	// its delete is not prepared up front (trace.ColdRead): kvreplay writes
	// it again when that read comes, and so does the export's row.
	want := []ColdObject{{"cold1", schema.TierNVMe, 4096}, {"cold2", schema.TierCPU, 4096}}
	if fmt.Sprint(cold) != fmt.Sprint(want) {
		t.Fatalf("ColdObjects = %v, want %v", cold, want)
	}
	offsets := func(cold []ColdObject) (string, FioStats) {
		opt := FioOptions{Dir: "/d", Cold: cold}.withDefaults()
		m := newMemLogs(&opt)
		st, err := Fio(trace.NewReader(strings.NewReader(src)), opt, m.open, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, l := range parseLog(t, "log", m.logs[opt.LogPath(schema.TierNVMe, ReplayLog)].Bytes()) {
			if l.act == "read" || l.act == "write" {
				fmt.Fprintf(&b, "%d:%s@%d ", l.us/1e6, l.act, l.off)
			}
		}
		return b.String(), st
	}
	// Placed at their first reads: a@0, cold1@8192 (at its read), a freed,
	// cold2 moves from Tier-1 (not exported) to 0, cold1 deleted and read
	// cold again at 4096.
	lazy, st := offsets(nil)
	if want := "0:write@0 1:read@8192 4:write@0 5:read@8192 7:read@4096 "; lazy != want {
		t.Errorf("lazily: %s, want %s", lazy, want)
	}
	if st.ColdReads != 3 {
		t.Errorf("lazily: %d cold reads, want 3", st.ColdReads)
	}
	// Prescanned: cold1@0 and, on Tier-1, cold2 before the first row, so a
	// lands at 4096; the read of cold1 after its delete is placed at its
	// read, as the replay writes it there.
	pre, st := offsets(cold)
	if want := "0:write@4096 1:read@0 4:write@4096 5:read@0 7:read@0 "; pre != want {
		t.Errorf("prescanned: %s, want %s", pre, want)
	}
	if st.ColdReads != 3 {
		t.Errorf("prescanned: %d cold reads, want 3", st.ColdReads)
	}
}

// ioLine is one parsed iolog line.
type ioLine struct {
	us        int64
	file, act string
	off, n    int64
}

// parseLog parses an iolog v3 strictly, as fio's sscanf("%llu %256s %256s
// %llu %u") would read it.
func parseLog(tb testing.TB, name string, b []byte) []ioLine {
	tb.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 4096) // fio reads lines with fgets(4096)
	if !sc.Scan() || sc.Text() != "fio version 3 iolog" {
		tb.Fatalf("%s: first line %q, want %q", name, sc.Text(), "fio version 3 iolog")
	}
	var lines []ioLine
	for n := 2; sc.Scan(); n++ {
		f := strings.Split(sc.Text(), " ")
		bad := func(why string) { tb.Fatalf("%s:%d: %q: %s", name, n, sc.Text(), why) }
		var l ioLine
		var err error
		if l.us, err = strconv.ParseInt(f[0], 10, 64); err != nil || l.us < 0 {
			bad("bad timestamp")
		}
		if len(f) < 3 {
			bad("too few fields")
		}
		l.file, l.act = f[1], f[2]
		if len(l.file) > maxPath {
			bad("file name longer than fio reads")
		}
		switch l.act {
		case "add", "open", "close":
			if len(f) != 3 {
				bad("file action with extra fields")
			}
		case "read", "write":
			if len(f) != 5 {
				bad("I/O without offset and length")
			}
			if l.off, err = strconv.ParseInt(f[3], 10, 64); err != nil || l.off < 0 {
				bad("bad offset")
			}
			if l.n, err = strconv.ParseInt(f[4], 10, 64); err != nil || l.n <= 0 || l.n >= 1<<32 {
				bad("bad length (fio reads an unsigned int)")
			}
		default:
			bad("unknown action")
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return lines
}

// checkLogs checks the invariants of every iolog: non-decreasing
// timestamps, aligned I/Os of at most BlockSize on files added and opened
// before, and an I/O as the last line.
func checkLogs(tb testing.TB, opt FioOptions, logs map[string]*bytes.Buffer) {
	tb.Helper()
	for name, b := range logs {
		lines := parseLog(tb, name, b.Bytes())
		added, open := map[string]bool{}, map[string]bool{}
		var prev int64
		for i, l := range lines {
			if l.us < prev {
				tb.Errorf("%s: line %d: timestamp %d after %d", name, i+2, l.us, prev)
			}
			prev = l.us
			switch l.act {
			case "add":
				if added[l.file] {
					tb.Errorf("%s: line %d: %s added twice", name, i+2, l.file)
				}
				added[l.file] = true
			case "open":
				if !added[l.file] || open[l.file] {
					tb.Errorf("%s: line %d: open of %s (added %v, open %v)", name, i+2, l.file, added[l.file], open[l.file])
				}
				open[l.file] = true
			case "close":
				if !open[l.file] {
					tb.Errorf("%s: line %d: close of %s, which is not open", name, i+2, l.file)
				}
				open[l.file] = false
			default:
				if !open[l.file] {
					tb.Errorf("%s: line %d: I/O on %s, which is not open", name, i+2, l.file)
				}
				if l.n > opt.BlockSize || l.n%opt.Align != 0 || l.off%opt.Align != 0 {
					tb.Errorf("%s: line %d: I/O %d+%d: not aligned or above the block size %d", name, i+2, l.off, l.n, opt.BlockSize)
				}
			}
		}
		if len(lines) > 0 {
			if last := lines[len(lines)-1]; last.act != "read" && last.act != "write" && strings.HasSuffix(name, ".iolog") && !isHeaderOnly(lines) {
				tb.Errorf("%s: ends with %q: fio would not count the I/Os then in flight", name, last.act)
			}
		}
	}
}

// isHeaderOnly reports a log of file actions only (a tier without I/O).
func isHeaderOnly(lines []ioLine) bool {
	for _, l := range lines {
		if l.act == "read" || l.act == "write" {
			return false
		}
	}
	return true
}

// TestFioReference exports the reference traces and checks every log's
// invariants and that the bytes written equal an independent sum over the
// trace's rows.
func TestFioReference(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/reference/*.csv*")
	if len(files) == 0 {
		t.Skip("no reference traces")
	}
	for _, file := range files {
		for _, layout := range []string{LayoutExtent, LayoutDir} {
			t.Run(filepath.Base(file)+"/"+layout, func(t *testing.T) {
				opt := FioOptions{Dir: "/mnt/kv", Layout: layout, SizeScale: 1.0 / 4096, BlockSize: 64 << 10,
					Tiers: []schema.Tier{schema.TierCPU, schema.TierNVMe}}.withDefaults()
				m := newMemLogs(&opt)
				st, err := Fio(openTrace(t, file), opt, m.open, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				checkLogs(t, opt, m.logs)
				want := sumTrace(t, file, opt.SizeScale)
				for _, tier := range opt.Tiers {
					s := st.Tier[tier]
					if s.ReadBytes != want[tier][schema.OpRead] || s.WriteBytes != want[tier][schema.OpWrite] {
						t.Errorf("%s: read %d write %d bytes, the trace has %d and %d", tier, s.ReadBytes, s.WriteBytes,
							want[tier][schema.OpRead], want[tier][schema.OpWrite])
					}
					var r, w int64
					for _, l := range parseLog(t, "replay", m.logs[opt.LogPath(tier, ReplayLog)].Bytes()) {
						switch l.act {
						case "read":
							r += l.n
						case "write":
							w += l.n
						}
					}
					if r != s.ReadBytes || w != s.WriteBytes {
						t.Errorf("%s: the log reads %d and writes %d bytes, stats say %d and %d", tier, r, w, s.ReadBytes, s.WriteBytes)
					}
					if layout == LayoutExtent && (s.HighWater <= 0 || s.FileSize < s.HighWater) {
						t.Errorf("%s: high-water mark %d, file %d bytes", tier, s.HighWater, s.FileSize)
					}
				}
			})
		}
	}
}

// sumTrace sums the aligned scaled sizes of the trace's rows by tier and
// operation, independently of Fio.
func sumTrace(tb testing.TB, file string, scale float64) (sum [schema.NumTiers][schema.NumOps]int64) {
	r := openTrace(tb, file)
	var rec schema.Record
	for {
		err := r.Read(&rec)
		if err == io.EOF {
			return sum
		}
		if err != nil {
			tb.Fatal(err)
		}
		n := int64(float64(rec.Size) * scale)
		sum[rec.Tier][rec.Op] += (n + 4095) &^ 4095
	}
}

// TestFioExtentPlacement follows the extent allocator through a delete
// and an Evict pair: freed extents are reused first fit by address.
func TestFioExtentPlacement(t *testing.T) {
	const src = `Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase
0,Write,8192,Tier-2,a,Prefill
0,Write,4096,Tier-2,b,Prefill
0,Write,4096,Tier-1,c,Prefill
1,Delete,8192,Tier-2,a,Evict
2,Write,4096,Tier-2,d,Prefill
3,Read,4096,Tier-1,c,Evict
3,Write,4096,Tier-2,c,Evict
4,Write,4096,Tier-1,e,Prefill
5,Read,4096,Tier-2,f,Decode
6,Delete,4096,Tier-2,d,Evict
7,Write,4096,Tier-2,b,Prefill
`
	opt := FioOptions{Dir: "/d", Tiers: []schema.Tier{schema.TierCPU, schema.TierNVMe}}.withDefaults()
	m := newMemLogs(&opt)
	st, err := Fio(trace.NewReader(strings.NewReader(src)), opt, m.open, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	at := func(tier schema.Tier) map[string]int64 {
		offs := map[string]int64{}
		for _, l := range parseLog(t, "log", m.logs[opt.LogPath(tier, ReplayLog)].Bytes()) {
			if l.act == "write" || l.act == "read" {
				offs[fmt.Sprintf("%d %s", l.us/1e6, l.act)] = l.off
			}
		}
		return offs
	}
	// Tier-2: a at 0 (8 KiB), b at 8192; a freed; d at 0, c at 4096; the
	// cold read of f at 12288; d freed; b rewritten: as kvreplay's Open
	// with create, its extent is freed first, and first fit moves it to 0.
	want2 := map[string]int64{"0 write": 8192, "2 write": 0, "3 write": 4096, "5 read": 12288, "7 write": 0}
	got2 := at(schema.TierNVMe)
	for k, v := range want2 {
		if got2[k] != v {
			t.Errorf("Tier-2 %s at %d, want %d (all %v)", k, got2[k], v, got2)
		}
	}
	// Tier-1: c at 0, moved to Tier-2 (freed), so e takes 0 again.
	if got1 := at(schema.TierCPU); got1["4 write"] != 0 {
		t.Errorf("Tier-1 e at %d, want 0 (c's freed extent): %v", got1["4 write"], got1)
	}
	if s := st.Tier[schema.TierNVMe]; s.HighWater != 16384 || s.FileSize != 1<<20 || s.ColdReads != 1 {
		t.Errorf("Tier-2 stats %+v", s)
	}
}

// TestFioRewriteInPlace rewrites an object on its tier: as kvreplay's
// Open with create, the old extent is freed before the new one is placed,
// so first fit can move it down into space that only its own release
// makes big enough (neither kept in place nor leaked).
func TestFioRewriteInPlace(t *testing.T) {
	const src = `Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase
0,Write,4096,Tier-2,x,Prefill
0,Write,8192,Tier-2,b,Prefill
0,Write,4096,Tier-2,y,Prefill
1,Delete,4096,Tier-2,x,Evict
2,Write,8192,Tier-2,b,Prefill
`
	opt := FioOptions{Dir: "/d"}.withDefaults()
	m := newMemLogs(&opt)
	if _, err := Fio(trace.NewReader(strings.NewReader(src)), opt, m.open, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := parseLog(t, "log", m.logs[opt.LogPath(schema.TierNVMe, ReplayLog)].Bytes())
	if last := lines[len(lines)-1]; last.us != logEpoch+2e6 || last.off != 0 {
		t.Errorf("the rewrite of b is at %d, want 0 (b at 4096 freed first, joining x's space)", last.off)
	}
}

func TestFioOptionsValidate(t *testing.T) {
	ok := FioOptions{Dir: "/mnt/kv"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, c := range []struct {
		opt  FioOptions
		want string
	}{
		{FioOptions{}, "--dir: required"},
		{FioOptions{Dir: "/a b"}, "whitespace"},
		{FioOptions{Dir: "/a:b"}, `holds ':'`},
		{FioOptions{Dir: "/$HOME"}, `holds '$'`},
		{FioOptions{Dir: "/" + strings.Repeat("x", 300)}, "at most 256"},
		{FioOptions{Dir: "/d", BlockSize: 6000}, "--block-size 6000: must be a power of two"},
		{FioOptions{Dir: "/d", Align: 6000}, "--align 6000: must be a power of two between 4KiB and 1GiB"},
		{FioOptions{Dir: "/d", Align: 2048}, "--align 2048"},
		{FioOptions{Dir: "/d", Align: 16384, BlockSize: 8192}, "--align 16384: above --block-size 8192"},
		{FioOptions{Dir: "/d", BlockSize: 2 << 30}, "--block-size"},
		{FioOptions{Dir: "/d", Layout: "tree"}, "--layout tree: want extent or dir"},
		{FioOptions{Dir: "/d", SizeScale: 2}, "--size-scale 2"},
		{FioOptions{Dir: "/d", Speed: "2"}, "--speed 2: want asap or timed"},
		{FioOptions{Dir: "/d", IODepth: -1}, "--iodepth -1"},
		{FioOptions{Dir: "/d", Engine: "io uring"}, "--engine"},
		{FioOptions{Dir: "/d", Tiers: []schema.Tier{2, 2}}, "--tiers: Tier-2 given twice"},
		{FioOptions{Dir: "/d", Tiers: []schema.Tier{7}}, "--tiers: Tier(7)"},
	} {
		err := c.opt.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want %q", c.opt, err, c.want)
		}
	}
	// Every problem at once, one per line.
	err := FioOptions{BlockSize: 3, Layout: "x", Speed: "y"}.Validate()
	if err == nil || strings.Count(err.Error(), "\n") != 3 {
		t.Errorf("Validate of four problems = %v", err)
	}
}

// TestFioLongName refuses an object whose file name fio could not read.
func TestFioLongName(t *testing.T) {
	src := "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n0,Write,4096,Tier-2," + strings.Repeat("%", 100) + ",Prefill\n"
	opt := FioOptions{Dir: "/" + strings.Repeat("d", 100), Layout: LayoutDir}.withDefaults()
	_, err := Fio(trace.NewReader(strings.NewReader(src)), opt, newMemLogs(&opt).open, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "at most 256") {
		t.Fatalf("err = %v, want a file name too long for fio", err)
	}
}

// TestFioStreams feeds the trace one byte at a time and checks that a
// reader's error mid-stream ends the export with that error.
func TestFioStreams(t *testing.T) {
	src, err := os.ReadFile("testdata/tiny.csv")
	if err != nil {
		t.Fatal(err)
	}
	opt := FioOptions{Dir: "/d"}.withDefaults()
	want := newMemLogs(&opt)
	var wantJob bytes.Buffer
	if _, err := Fio(trace.NewReader(bytes.NewReader(src)), opt, want.open, &wantJob); err != nil {
		t.Fatal(err)
	}
	got := newMemLogs(&opt)
	var gotJob bytes.Buffer
	if _, err := Fio(trace.NewReader(iotest.OneByteReader(bytes.NewReader(src))), opt, got.open, &gotJob); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotJob.Bytes(), wantJob.Bytes()) {
		t.Error("one byte at a time: a different job file")
	}
	for name, b := range want.logs {
		if !bytes.Equal(got.logs[name].Bytes(), b.Bytes()) {
			t.Errorf("one byte at a time: %s differs", name)
		}
	}

	boom := errors.New("boom")
	r := trace.NewReader(io.MultiReader(bytes.NewReader(src[:200]), iotest.ErrReader(boom)))
	if _, err := Fio(r, opt, newMemLogs(&opt).open, io.Discard); !errors.Is(err, boom) {
		t.Errorf("reader error mid-stream: %v, want boom", err)
	}
	bad := "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n0,Write,12a,Tier-2,k,Prefill\n"
	var pe *trace.ParseError
	if _, err := Fio(trace.NewReader(strings.NewReader(bad)), opt, newMemLogs(&opt).open, io.Discard); !errors.As(err, &pe) {
		t.Errorf("malformed trace: %v, want a *trace.ParseError", err)
	}
	// A failing log writer is reported.
	failing := func(schema.Tier, LogKind) (io.Writer, error) { return errWriter{}, nil }
	if _, err := Fio(trace.NewReader(bytes.NewReader(src)), opt, failing, io.Discard); !errors.Is(err, errDisk) {
		t.Errorf("failing log writer: %v, want errDisk", err)
	}
	if _, err := Fio(trace.NewReader(bytes.NewReader(src)), opt, newMemLogs(&opt).open, errWriter{}); !errors.Is(err, errDisk) {
		t.Errorf("failing job writer: %v, want errDisk", err)
	}
}

var errDisk = errors.New("disk full")

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errDisk }

// TestSai3Golden renders the op-log of the hand-written trace, with every
// tier it has rows on (Tier-0 it has none on: TestNoRows), a scale and a
// start time.
func TestSai3Golden(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  Sai3Options
	}{
		{"sai3/tiny.tsv", Sai3Options{}},
		{"sai3/tiny-all-tiers.tsv", Sai3Options{Prefix: "file:///mnt/kv/", Tiers: []schema.Tier{1, 2}, SizeScale: 0.5,
			ClientID: "c1", Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			st, err := Sai3(openTrace(t, "testdata/tiny.csv"), &b, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
			if st.Rows != 11 || st.Clamped != 1 {
				t.Errorf("stats %+v", st)
			}
			checkSai3(t, b.Bytes(), st)
		})
	}
}

// TestNoRows: a tier asked for on which the trace has no rows is refused
// by both exporters, naming the tiers asked for and the trace, and the
// tiers it has rows on; fio's job file is not written. Before, the fio job
// had no job for the tier and the op-log no operation, without a word.
func TestNoRows(t *testing.T) {
	const have = "its rows are on Tier-1 (2 rows), Tier-2 (9 rows): export those (--tiers Tier-1,Tier-2)"
	for _, c := range []struct {
		tiers []schema.Tier
		empty []schema.Tier
		msg   string
	}{
		{[]schema.Tier{schema.TierObject}, []schema.Tier{schema.TierObject},
			"export: --tiers Tier-3: trace testdata/tiny.csv has no Tier-3 rows, so its %s would do no I/O there; " + have},
		{[]schema.Tier{schema.TierNVMe, schema.TierGPU, schema.TierObject}, []schema.Tier{schema.TierGPU, schema.TierObject},
			"export: --tiers Tier-0,Tier-3: trace testdata/tiny.csv has no Tier-0 or Tier-3 rows, so its %s would do no I/O there; " + have},
	} {
		check := func(what string, err error) {
			t.Helper()
			e, ok := errors.AsType[*NoRowsError](err)
			if !ok {
				t.Fatalf("%s --tiers %v: %v, want a *NoRowsError", what, c.tiers, err)
			}
			if !slices.Equal(e.Empty, c.empty) || e.Rows != [schema.NumTiers]int64{0, 2, 9, 0} {
				t.Errorf("%s --tiers %v: empty %v rows %v", what, c.tiers, e.Empty, e.Rows)
			}
			if want := fmt.Sprintf(c.msg, what); err.Error() != want {
				t.Errorf("%s --tiers %v:\n got %s\nwant %s", what, c.tiers, err, want)
			}
		}
		opt := FioOptions{Dir: "/d", Tiers: c.tiers}.withDefaults()
		var job bytes.Buffer
		_, err := Fio(openTrace(t, "testdata/tiny.csv"), opt, newMemLogs(&opt).open, &job)
		check("fio job", err)
		if job.Len() != 0 {
			t.Errorf("fio --tiers %v: wrote a job file of %d bytes", c.tiers, job.Len())
		}
		_, err = Sai3(openTrace(t, "testdata/tiny.csv"), io.Discard, Sai3Options{Tiers: c.tiers})
		check("op-log", err)
	}
	// A trace with no rows at all, on stdin, says so.
	r := trace.NewReader(strings.NewReader("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n"))
	r.Name = "-"
	_, err := Sai3(r, io.Discard, Sai3Options{})
	if want := "export: --tiers Tier-2: the trace on stdin has no Tier-2 rows, so its op-log would do no I/O there; the trace has no rows at all"; err == nil || err.Error() != want {
		t.Errorf("empty trace: %v, want %s", err, want)
	}
}

// TestFioSourceStdin: a job file exported from stdin says so in its
// header, not "from -".
func TestFioSourceStdin(t *testing.T) {
	opt := FioOptions{Dir: "/d", Source: "-"}.withDefaults()
	var job bytes.Buffer
	if _, err := Fio(openTrace(t, "testdata/tiny.csv"), opt, newMemLogs(&opt).open, &job); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(job.String(), "\n"); first != "; fio job file written by kvtrace export from stdin (11 rows)." {
		t.Errorf("job file header %q", first)
	}
}

// checkSai3 parses an op-log as s3dlio's reader does (split on tabs,
// columns by header name, RFC 3339 start) and checks it against the stats.
func checkSai3(tb testing.TB, b []byte, st Sai3Stats) {
	tb.Helper()
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	head := strings.Split(lines[0], "\t")
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	var ops, bytes [schema.NumOps]int64
	var prev time.Time
	for i, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) != len(head) {
			tb.Fatalf("row %d: %d fields, header has %d", i, len(f), len(head))
		}
		if f[col["idx"]] != strconv.Itoa(i) {
			tb.Errorf("row %d: idx %s", i, f[col["idx"]])
		}
		start, err := time.Parse(time.RFC3339Nano, f[col["start"]])
		if err != nil {
			tb.Errorf("row %d: start: %v", i, err)
		}
		if start.Before(prev) {
			tb.Errorf("row %d: start %v before %v", i, start, prev)
		}
		prev = start
		n, err := strconv.ParseInt(f[col["bytes"]], 10, 64)
		if err != nil {
			tb.Errorf("row %d: bytes: %v", i, err)
		}
		op := map[string]schema.Op{"GET": schema.OpRead, "PUT": schema.OpWrite, "DELETE": schema.OpDelete}[f[col["op"]]]
		ops[op]++
		bytes[op] += n
	}
	if ops != st.Ops || bytes != st.Bytes {
		tb.Errorf("the op-log has ops %v bytes %v, stats say %v and %v", ops, bytes, st.Ops, st.Bytes)
	}
}

// TestSai3Reference checks the op-log of a reference trace against the
// trace's own sums, and that its start times are the trace's epoch times.
func TestSai3Reference(t *testing.T) {
	const file = "../../testdata/reference/llama8b_u10_d30_gpu0_cpu4_s42.csv"
	if _, err := os.Stat(file); err != nil {
		t.Skip(err)
	}
	var b bytes.Buffer
	st, err := Sai3(openTrace(t, file), &b, Sai3Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkSai3(t, b.Bytes(), st)
	var rec schema.Record
	r := openTrace(t, file)
	var sum [schema.NumOps]int64
	for {
		if err := r.Read(&rec); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if rec.Tier == schema.TierNVMe && rec.Op != schema.OpDelete {
			sum[rec.Op] += rec.Size
		}
	}
	if st.Bytes != sum {
		t.Errorf("bytes %v, the trace's Tier-2 rows have %v", st.Bytes, sum)
	}
	// The first Tier-2 row of the reference trace is an Evict Write at its
	// epoch time 1795255941.184853 or later.
	first := strings.Split(strings.Split(b.String(), "\n")[1], "\t")[9]
	if !strings.HasPrefix(first, "2026-11-21T") {
		t.Errorf("first start %s: not the trace's epoch day", first)
	}
}

func TestSai3OptionsValidate(t *testing.T) {
	if err := (Sai3Options{}).Validate(); err != nil {
		t.Fatal(err)
	}
	err := Sai3Options{Prefix: "s3://a\tb/", SizeScale: -1, Tiers: []schema.Tier{1, 1}}.Validate()
	if err == nil || strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("Validate of three problems = %v", err)
	}
}

func BenchmarkFio(b *testing.B) {
	src, err := os.ReadFile("../../testdata/reference/llama8b_u10_d30_gpu0_cpu4_s42.csv")
	if err != nil {
		b.Skip(err)
	}
	opt := FioOptions{Dir: "/d", SizeScale: 1.0 / 64}.withDefaults()
	opt.LogPath = func(schema.Tier, LogKind) string { return "x.iolog" }
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Fio(trace.NewReader(bytes.NewReader(src)), opt, func(schema.Tier, LogKind) (io.Writer, error) { return io.Discard, nil }, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFioRandomTraces exports random traces (a few keys on every tier,
// Evict pairs, deletes, sizes that change, rows out of order) in both
// layouts and checks the logs against a model of the objects: every
// object operation is one contiguous run of I/Os, a read finds its object
// where it was placed, and no two live objects of a tier overlap.
func TestFioRandomTraces(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var rows []schema.Record
		var src strings.Builder
		src.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
		add := func(r schema.Record) {
			rows = append(rows, r)
			fmt.Fprintf(&src, "%.6f,%s,%d,%s,%s,%s\n", r.Time.Seconds(), r.Op, r.Size, r.Tier, r.Key, r.Phase)
		}
		sizes := map[string]int64{}
		now := time.Duration(0)
		for range 300 {
			now += time.Duration(rng.IntN(2000)-200) * time.Microsecond
			now = max(now, 0)
			key := fmt.Sprintf("k%d", rng.IntN(12))
			if _, ok := sizes[key]; !ok || rng.IntN(20) == 0 {
				sizes[key] = rng.Int64N(40000)
			}
			tier := schema.Tier(rng.IntN(3))
			r := schema.Record{Time: now, Size: sizes[key], Tier: tier, Key: []byte(key)}
			switch p := rng.IntN(10); {
			case p < 3:
				r.Op, r.Phase = schema.OpWrite, schema.PhasePrefill
				add(r)
			case p < 6:
				r.Op, r.Phase = schema.OpRead, schema.PhaseDecode
				add(r)
			case p < 8:
				r.Op, r.Phase = schema.OpRead, schema.PhaseEvict
				add(r)
				r.Op, r.Tier = schema.OpWrite, schema.Tier((int(tier)+1+rng.IntN(2))%3)
				add(r)
			default:
				r.Op, r.Phase = schema.OpDelete, schema.PhaseEvict
				add(r)
			}
		}
		for _, layout := range []string{LayoutExtent, LayoutDir} {
			opt := FioOptions{Dir: "/d", Layout: layout, BlockSize: 8192, Align: DefaultAlign << (seed % 2), SizeScale: 0.75,
				Tiers: []schema.Tier{schema.Tier(seed % 3), schema.Tier((seed + 1) % 3)}}.withDefaults()
			m := newMemLogs(&opt)
			st, err := Fio(trace.NewReader(strings.NewReader(src.String())), opt, m.open, io.Discard)
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, layout, err)
			}
			checkLogs(t, opt, m.logs)
			checkModel(t, fmt.Sprintf("seed %d %s", seed, layout), opt, rows, m.logs, &st)
		}
	}
}

// checkModel replays rows against the logs Fio wrote for them, with
// kvreplay's model of where a key lives: on one tier at a time; a cold read
// places the object on the row's tier; a read goes where the object is; a
// write elsewhere drops the old copy.
func checkModel(t *testing.T, what string, opt FioOptions, rows []schema.Record, logs map[string]*bytes.Buffer, st *FioStats) {
	t.Helper()
	type ext struct {
		file   string
		off, n int64
		placed bool // its I/O has been seen
	}
	type where struct {
		tier schema.Tier
		n    int64
	}
	var ios [schema.NumTiers][]ioLine
	var on [schema.NumTiers]bool
	for _, tier := range opt.Tiers {
		on[tier] = true
		for _, l := range parseLog(t, what, logs[opt.LogPath(tier, ReplayLog)].Bytes()) {
			if l.act == "read" || l.act == "write" {
				ios[tier] = append(ios[tier], l)
			}
		}
	}
	live := [schema.NumTiers]map[string]ext{{}, {}, {}}
	keys := map[string]where{}
	var sums [schema.NumTiers][schema.NumOps]int64
	var cold, mismatched int64
	phys := func(size int64) int64 {
		return (int64(float64(size)*opt.SizeScale) + opt.Align - 1) / opt.Align * opt.Align
	}
	// take checks the next run of I/O on tier for an operation of n bytes
	// on key, and records where it is.
	take := func(i int, r *schema.Record, tier schema.Tier, key string, n int64, act string) {
		if !on[tier] || n == 0 {
			return
		}
		sums[tier][map[string]schema.Op{"read": schema.OpRead, "write": schema.OpWrite}[act]] += n
		if len(ios[tier]) == 0 {
			t.Fatalf("%s: row %d %s: no I/O left on %s", what, i, r, tier)
		}
		first := ios[tier][0]
		var got int64
		for got < n && len(ios[tier]) > 0 {
			l := ios[tier][0]
			ios[tier] = ios[tier][1:]
			if l.file != first.file || l.off != first.off+got || l.act != act {
				t.Fatalf("%s: row %d %s: I/O %+v does not continue %+v", what, i, r, l, first)
			}
			got += l.n
		}
		if got != n {
			t.Fatalf("%s: row %d %s: %d bytes of I/O, want %d", what, i, r, got, n)
		}
		e := ext{file: first.file, off: first.off, n: n, placed: true}
		if old := live[tier][key]; old.placed && (old.file != e.file || old.off != e.off || old.n != e.n) {
			t.Fatalf("%s: row %d %s: at %s+%d, but the object is at %s+%d", what, i, r, e.file, e.off, old.file, old.off)
		}
		for k, o := range live[tier] {
			if k != key && o.placed && o.file == e.file && o.off < e.off+e.n && e.off < o.off+o.n {
				t.Fatalf("%s: row %d %s: [%d, %d) overlaps %s's [%d, %d)", what, i, r, e.off, e.off+e.n, k, o.off, o.off+o.n)
			}
		}
		live[tier][key] = e
	}
	for i := range rows {
		r := &rows[i]
		key, n := string(r.Key), phys(r.Size)
		w, ok := keys[key]
		switch r.Op {
		case schema.OpRead:
			if !ok {
				cold++
				w = where{r.Tier, n}
				keys[key] = w
				live[r.Tier][key] = ext{}
			}
			if w.tier != r.Tier {
				mismatched++
			}
			take(i, r, w.tier, key, w.n, "read")
		case schema.OpWrite:
			if ok && w.tier == r.Tier {
				delete(live[w.tier], key)
			}
			take(i, r, r.Tier, key, n, "write")
			if ok && w.tier != r.Tier {
				delete(live[w.tier], key)
			}
			keys[key] = where{r.Tier, n}
		case schema.OpDelete:
			if ok {
				delete(live[w.tier], key)
				delete(keys, key)
			}
		}
	}
	for _, tier := range opt.Tiers {
		if len(ios[tier]) != 0 {
			t.Errorf("%s: %s: %d I/Os left over", what, tier, len(ios[tier]))
		}
		s := st.Tier[tier]
		if s.ReadBytes != sums[tier][schema.OpRead] || s.WriteBytes != sums[tier][schema.OpWrite] {
			t.Errorf("%s: %s: stats %d/%d bytes, model %d/%d", what, tier, s.ReadBytes, s.WriteBytes, sums[tier][schema.OpRead], sums[tier][schema.OpWrite])
		}
	}
	if st.ColdReads != cold || st.Mismatched != mismatched {
		t.Errorf("%s: %d cold reads and %d mismatched, the model has %d and %d", what, st.ColdReads, st.Mismatched, cold, mismatched)
	}
}

// TestFioTuning checks the [global] options that tune fio, by engine and
// pace, and what the header says of those it leaves out.
func TestFioTuning(t *testing.T) {
	for _, c := range []struct {
		name      string
		opt       FioOptions
		want      []string // lines of [global]
		wantNot   []string // option names absent from [global]
		wantNotes []string // in the header
	}{
		{"io_uring-asap", FioOptions{}, []string{"iodepth_batch_submit=32", "iodepth_batch_complete_max=32", "iomem=malloc"},
			[]string{"fixedbufs", "registerfiles", "sqthread_poll", "hipri"},
			[]string{"with --fixedbufs where it does", "32MiB a job", "18 free huge pages", "echo 18 > /proc/sys/vm/nr_hugepages", "registerfiles=1, sqthread_poll=1"}},
		{"io_uring-timed", FioOptions{Speed: SpeedTimed, FixedBufs: true, IOMem: "shmhuge", IODepth: 4, BlockSize: 8192},
			[]string{"iodepth_batch_complete_max=4", "iomem=shmhuge", "fixedbufs=1"}, []string{"iodepth_batch_submit"},
			[]string{"iodepth_batch_submit (batched submissions): fio times a line's wait", "iomem=shmhuge: huge-page buffers; fio fails without 2 free huge pages"}},
		{"libaio-two-tiers", FioOptions{Engine: "libaio", IOMem: "mmaphuge", Tiers: []schema.Tier{schema.TierCPU, schema.TierNVMe}},
			[]string{"iodepth_batch_submit=32", "iodepth_batch_complete_max=32", "iomem=mmaphuge"}, []string{"fixedbufs"},
			[]string{"fio fails without 36 free huge pages of 2 MiB\n;     (2 jobs at once, iodepth x 1MiB each)"}},
		{"psync", FioOptions{Engine: "psync"}, []string{"iomem=malloc"}, []string{"iodepth_batch", "fixedbufs"},
			[]string{"ioengine=psync\n;     is not one of fio's asynchronous engines"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := c.opt
			opt.Dir = "/mnt/kv"
			opt = opt.withDefaults()
			m := newMemLogs(&opt)
			var job bytes.Buffer
			if _, err := Fio(openTrace(t, "testdata/tiny.csv"), opt, m.open, &job); err != nil {
				t.Fatal(err)
			}
			text := job.String()
			global := "\n" + jobSection(text, "global")
			for _, w := range c.want {
				if !strings.Contains(global, "\n"+w+"\n") {
					t.Errorf("[global] lacks %s:\n%s", w, global)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(global, "\n"+w) {
					t.Errorf("[global] sets %s:\n%s", w, global)
				}
			}
			for _, w := range c.wantNotes {
				if !strings.Contains(text, w) {
					t.Errorf("the header lacks %q:\n%s", w, text)
				}
			}
			// A heading is followed by its items: a job that leaves
			// nothing out (libaio, batched, huge pages) says nothing of it.
			for _, h := range []string{"; fio tuned as its experts tune it", "; Not set, and why:"} {
				if _, after, ok := strings.Cut(text, h); ok && !strings.HasPrefix(after[strings.IndexByte(after, '\n')+1:], ";   - ") {
					t.Errorf("the header's %q has no item under it:\n%s", h, text)
				}
			}
		})
	}
}
