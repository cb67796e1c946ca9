package replay_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/extent"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/replay/nvme"
	"github.com/kvbench/kvbench/schema"
)

// TestIOErrorsNamed: the errors a result keeps of failed reads (EIO,
// injected by a fault decorator over a real backend) name the row's key,
// the backend's object and where it lies: its file in the directory
// layout, the extent file and the byte offset there in the extent layout.
func TestIOErrorsNamed(t *testing.T) {
	var recs []schema.Record
	for i := range 20 {
		k := fmt.Sprint("k", i)
		recs = append(recs, rec(0, schema.OpWrite, 64<<10, schema.TierNVMe, k, schema.PhasePrefill, 0),
			rec(0, schema.OpRead, 64<<10, schema.TierNVMe, k, schema.PhaseDecode, 0))
	}
	for _, layout := range []string{"dir", "extent"} {
		t.Run(layout, func(t *testing.T) {
			dir := t.TempDir()
			var (
				b    backend.Backend
				err  error
				file string // what the messages must name
			)
			if layout == "dir" {
				b, err = nvme.New(dir, nvme.Options{Direct: true})
				file = regexp.QuoteMeta(dir+string(filepath.Separator)) + `\S+`
			} else {
				path := filepath.Join(dir, "kv.img")
				b, err = extent.New(path, extent.Options{Size: 16 << 20, Direct: true})
				file = regexp.QuoteMeta(path)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "", "nvme"}
			cfg.Speed, cfg.BlockSize = 0, 16<<10
			res, _ := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"nvme": fault.Fail(b, fault.IOError(fault.OpRead))})
			if res == nil || res.Errors.Count == 0 || len(res.Errors.First) == 0 {
				t.Fatalf("result %+v", res)
			}
			want := regexp.MustCompile(`^Read Tier-2 Decode "(k\d+)": fault: read "2_(k\d+)" at offset \d+ \(` + file + ` at offset \d+\): injected fault: input/output error$`)
			for _, msg := range res.Errors.First {
				if m := want.FindStringSubmatch(msg); m == nil || m[1] != m[2] {
					t.Errorf("error %q does not name the key, the object, the file and the offset (%s)", msg, want)
				}
			}
		})
	}
}
