package export

import (
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// clashSrc has Tier-2 objects named as the dir layout named the other
// tiers' directories (tier1), those tiers' objects, and a key that moves
// from Tier-1 to Tier-2.
const clashSrc = mt2Header +
	"0,Write,8192,Tier-0,g,Prefill\n" +
	"0,Write,8192,Tier-1,c,Prefill\n" +
	"0,Write,8192,Tier-3,o,Prefill\n" +
	"1,Write,8192,Tier-2,tier0,Prefill\n" +
	"1,Write,8192,Tier-2,tier1,Prefill\n" +
	"1,Write,8192,Tier-2,tier3,Prefill\n" +
	"1,Write,8192,Tier-2,.tier1,Prefill\n" +
	"2,Read,8192,Tier-2,tier1,Decode\n" +
	"2,Read,8192,Tier-1,c,Decode\n" +
	"3,Read,8192,Tier-1,c,Evict\n" +
	"3,Write,8192,Tier-2,c,Evict\n" +
	"4,Read,8192,Tier-2,c,Decode\n"

// TestFioDirNamesAsKvreplay: in the dir layout every tier's files lie in
// Dir, named as kvreplay's NVMe backend names them (N_ and the escaped
// key), so no object's file is a tier's directory or another object's
// file. The Tier-2 key "tier1" was the file Dir/tier1, and Tier-1's files
// were in the directory Dir/tier1; kvreplay's file of key k is 2_k.
func TestFioDirNamesAsKvreplay(t *testing.T) {
	opt := FioOptions{Dir: "/d", Layout: LayoutDir, Tiers: []schema.Tier{schema.TierGPU, schema.TierCPU, schema.TierNVMe, schema.TierObject}}.withDefaults()
	_, job, m := fioOf(t, clashSrc, opt)
	files := map[string]bool{}
	for name, b := range m.logs {
		for _, l := range parseLog(t, name, b.Bytes()) {
			files[l.file] = true
			if path.Dir(l.file) != "/d" {
				t.Errorf("%s: %s is not in /d", name, l.file)
			}
		}
	}
	want := []string{"/d/0_g", "/d/1_c", "/d/2_c", "/d/3_o", "/d/2_tier0", "/d/2_tier1", "/d/2_tier3", "/d/2_.tier1"}
	for _, f := range want {
		if !files[f] {
			t.Errorf("no file %s: the files are %v", f, files)
		}
	}
	if len(files) != len(want) {
		t.Errorf("%d files %v, want %d", len(files), files, len(want))
	}
	if n := strings.Count(job, "\n[mkdir"); n != 1 || !strings.Contains(job, "filename=/d/.kvbench-mkdir\n") {
		t.Errorf("%d mkdir jobs, want one that makes /d:\n%s", n, job)
	}
}

// TestFioAlign: with Align above 4096, objects are sized and placed as
// kvreplay sizes and places them on a drive of that alignment (replay's
// sizes, replay/extent's allocator): every size rounded up to Align, every
// extent first fit at a multiple of it. The export aligned to 4096 only.
func TestFioAlign(t *testing.T) {
	src := mt2Header +
		"0,Write,5000,Tier-2,a,Prefill\n" + // 16 KiB at 0
		"1,Write,20000,Tier-2,b,Prefill\n" + // 32 KiB at 16 KiB
		"2,Delete,5000,Tier-2,a,Evict\n" +
		"3,Write,4096,Tier-2,c,Prefill\n" + // 16 KiB at 0, a's extent
		"4,Read,20000,Tier-2,b,Decode\n"
	for _, layout := range []string{LayoutExtent, LayoutDir} {
		opt := FioOptions{Dir: "/d", Layout: layout, Align: 16384, BlockSize: 16384}.withDefaults()
		st, job, m := fioOf(t, src, opt)
		var got []string
		for _, l := range parseLog(t, layout, m.logs[opt.LogPath(schema.TierNVMe, ReplayLog)].Bytes()) {
			if l.act == "read" || l.act == "write" {
				got = append(got, fmt.Sprintf("%s %s %d+%d", path.Base(l.file), l.act, l.off, l.n))
			}
		}
		want := []string{"kvbench.extent write 0+16384", "kvbench.extent write 16384+16384", "kvbench.extent write 32768+16384",
			"kvbench.extent write 0+16384", "kvbench.extent read 16384+16384", "kvbench.extent read 32768+16384"}
		if layout == LayoutDir {
			want = []string{"2_a write 0+16384", "2_b write 0+16384", "2_b write 16384+16384", "2_c write 0+16384", "2_b read 0+16384", "2_b read 16384+16384"}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: I/O\n%v\nwant\n%v", layout, got, want)
		}
		s := st.Tier[schema.TierNVMe]
		if s.WriteBytes != 4*16384 || s.ReadBytes != 2*16384 {
			t.Errorf("%s: wrote %d and read %d bytes, want %d and %d", layout, s.WriteBytes, s.ReadBytes, 4*16384, 2*16384)
		}
		if layout == LayoutExtent && (s.HighWater != 3*16384 || !strings.Contains(job, "size=49152\n")) {
			t.Errorf("high-water mark %d, job\n%s\nwant 49152", s.HighWater, job)
		}
	}
}

// jobSection returns the lines of section [name] of a job file.
func jobSection(job, name string) string {
	_, rest, ok := strings.Cut(job, "\n["+name+"]\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n["); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// TestFioDirPrepLogChunked: a dir-layout prep log of more I/O lines than
// the limit is read in chunks, as a replay log is: fio held it whole in
// memory, whatever its size (the sum of every object's blocks).
func TestFioDirPrepLogChunked(t *testing.T) {
	src := mt2Header + "0,Write,20480,Tier-2,a,Prefill\n" // 5 blocks
	for _, c := range []struct {
		above   int64
		chunked bool
	}{{4, true}, {5, false}} {
		opt := FioOptions{Dir: "/d", Layout: LayoutDir, BlockSize: 4096, chunkAbove: c.above}
		_, job, _ := fioOf(t, src, opt)
		if got := strings.Contains(jobSection(job, "prep-tier2"), "read_iolog_chunked=1\n"); got != c.chunked {
			t.Errorf("5 prep I/Os, limit %d: read_iolog_chunked %v, want %v; job\n%s", c.above, got, c.chunked, job)
		}
		// FioSize counts the job file that Fio writes.
		_, n, err := FioSize(trace.NewReader(strings.NewReader(src)), opt)
		if err != nil {
			t.Fatal(err)
		}
		_, _, m := fioOf(t, src, opt)
		want := int64(len(job))
		for _, b := range m.logs {
			want += int64(b.Len())
		}
		if n != want {
			t.Errorf("limit %d: FioSize %d bytes, Fio wrote %d", c.above, n, want)
		}
	}
}
