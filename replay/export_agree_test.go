package replay_test

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/extent"
	"github.com/kvbench/kvbench/replay/nvme"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
	"github.com/kvbench/kvbench/trace/export"
)

// agreeTrace has what moves objects on Tier-2: writes, a delete whose
// space is reused, a rewrite larger, a demotion from Tier-1, cold reads
// (placed first by the prescan) and a read after a delete (placed at the
// read). Every Tier-2 Read and Write row is one I/O of the fio export at
// a block size of 1 GiB.
const agreeTrace = `Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase
0,Write,8192,Tier-2,a,Prefill
0,Write,4096,Tier-2,b,Prefill
0.5,Read,8192,Tier-2,cold1,Decode
1,Delete,8192,Tier-2,a,Evict
2,Write,12288,Tier-2,c,Prefill
3,Write,4096,Tier-1,d,Prefill
3.5,Read,4096,Tier-1,d,Evict
3.5,Write,4096,Tier-2,d,Evict
4,Write,20000,Tier-2,b,Prefill
5,Read,20000,Tier-2,b,Decode
6,Delete,12288,Tier-2,c,Evict
7,Read,8192,Tier-2,a,Decode
8,Write,4096,Tier-2,e,Prefill
9,Read,4096,Tier-2,cold2,Decode
`

// creates records the objects a backend creates: their names and, where
// the backend places them in one file, their offsets.
type creates struct {
	backend.Backend
	mu   sync.Mutex
	objs []string // "name off+size"
}

func (c *creates) Open(key string, size int64, create bool) (backend.Object, error) {
	o, err := c.Backend.Open(key, size, create)
	if err == nil && create {
		off := int64(-1)
		if l, ok := o.(interface{ Offset() int64 }); ok {
			off = l.Offset()
		}
		c.mu.Lock()
		c.objs = append(c.objs, fmt.Sprintf("%s %d+%d", key, off, size))
		c.mu.Unlock()
	}
	return o, err
}

// replayCreates replays agreeTrace one operation at a time, Tier-1 in RAM
// and Tier-2 on b, and returns what b created.
func replayCreates(t *testing.T, b backend.Backend) []string {
	t.Helper()
	rec := &creates{Backend: b}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", "nvme"}
	cfg.Speed, cfg.Workers, cfg.QueueDepth = 0, 1, 1
	src := replay.Source{Name: "agree.csv", Rescan: true, Open: func() (*trace.Reader, error) {
		return trace.NewReader(strings.NewReader(agreeTrace)), nil
	}}
	res, err := runReplay(t, cfg, src, map[string]backend.Backend{"ram": newRAM(t, 8<<20), "nvme": rec})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatalf("the replay did not complete: %+v", res.Errors)
	}
	return rec.objs
}

// exportLogs exports agreeTrace to fio as kvtrace export does for a trace
// file (its cold objects placed first) and returns the replay and prep
// iologs.
func exportLogs(t *testing.T, opt export.FioOptions) map[string]*bytes.Buffer {
	t.Helper()
	cold, err := export.ColdObjects(trace.NewReader(strings.NewReader(agreeTrace)))
	if err != nil {
		t.Fatal(err)
	}
	opt.Dir, opt.Cold, opt.BlockSize = "/d", cold, 1<<30
	logs := map[string]*bytes.Buffer{}
	open := func(tier schema.Tier, k export.LogKind) (io.Writer, error) {
		b := &bytes.Buffer{}
		logs[export.LogName("t", tier, k)] = b
		return b, nil
	}
	opt.LogPath = func(tier schema.Tier, k export.LogKind) string { return export.LogName("t", tier, k) }
	if _, err := export.Fio(trace.NewReader(strings.NewReader(agreeTrace)), opt, open, io.Discard); err != nil {
		t.Fatal(err)
	}
	return logs
}

// TestExportDirNamesAgree: kvtrace export's dir layout names the object
// files kvreplay's NVMe directory backend creates, on every tier (the
// engine names a key's copy on Tier-N "N_KEY"): the export named Tier-2's
// key k the file k, and kvreplay 2_k.
func TestExportDirNamesAgree(t *testing.T) {
	nb, err := nvme.New(t.TempDir(), nvme.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nb.Close() })
	var want []string
	for _, c := range replayCreates(t, nb) {
		want = append(want, nvme.FileName(c[:strings.IndexByte(c, ' ')]))
	}
	// kvreplay keeps Tier-1 in RAM here: its names are those of Tier-2.
	var got []string
	for name, b := range exportLogs(t, export.FioOptions{Layout: export.LayoutDir}) {
		for l := range strings.SplitSeq(b.String(), "\n") {
			if f := strings.Fields(l); len(f) >= 3 && f[2] == "add" && strings.Contains(name, "tier2.iolog") {
				got = append(got, path.Base(f[1]))
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(got, want) {
		t.Errorf("the export's Tier-2 files %v, kvreplay's %v", got, want)
	}
}

// TestExportExtentOffsetsAgree: kvtrace export's extent layout places
// every Tier-2 object at the offset kvreplay's extent layout gives it when
// it replays the rows one at a time, given the drive's alignment.
func TestExportExtentOffsetsAgree(t *testing.T) {
	eb, err := extent.New(filepath.Join(t.TempDir(), "kvbench.extent"), extent.Options{Size: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eb.Close() })
	// kvreplay's extents of each key, in order.
	want := map[string][]string{}
	for _, c := range replayCreates(t, eb) {
		name, ext, _ := strings.Cut(c, " ")
		key := strings.TrimPrefix(name, "2_")
		want[key] = append(want[key], ext)
	}
	// The export's: its Tier-2 I/Os, one per Tier-2 Read or Write row.
	var keys []string
	for l := range strings.SplitSeq(agreeTrace, "\n") {
		if f := strings.Split(l, ","); len(f) == 6 && f[3] == "Tier-2" && f[1] != "Delete" {
			keys = append(keys, f[4])
		}
	}
	got := map[string][]string{}
	i := 0
	// --align is the drive's alignment, which kvreplay finds.
	opt := export.FioOptions{Align: int64(max(export.DefaultAlign, eb.Caps().Align))}
	for l := range strings.SplitSeq(exportLogs(t, opt)["t.tier2.iolog"].String(), "\n") {
		f := strings.Fields(l)
		if len(f) != 5 {
			continue
		}
		if i == len(keys) {
			t.Fatalf("more I/Os than Tier-2 rows: %q", l)
		}
		off, _ := strconv.ParseInt(f[3], 10, 64)
		ext := fmt.Sprintf("%d+%s", off, f[4])
		// A key's extent changes where it is placed again.
		if e := got[keys[i]]; len(e) == 0 || e[len(e)-1] != ext || f[2] == "write" {
			got[keys[i]] = append(e, ext)
		}
		i++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("extents by key:\nexport   %v\nkvreplay %v", got, want)
	}
}
