package sim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestEmptyObjectsDepart: a BurstGPT row of 0 request tokens makes an
// object of 0 bytes, which kv-cache.py writes to its GPU tier even under
// --gpu-mem-gb 0; kvtrace writes it to Tier-1, and the run now says it
// departs there (it said nothing). With a GPU tier both write it there,
// and nothing is said.
func TestEmptyObjectsDepart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.csv")
	body := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,a,0,10,10,x\n1,a,100,10,110,x\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gpuGB float64
		tier  schema.Tier
		said  string
	}{
		{0, schema.TierCPU, "1 objects of 0 bytes (requests of 0 context tokens) were written below Tier-0, which --gpu-mem-gb 0 disables"},
		{1, schema.TierGPU, ""},
	} {
		cfg := DefaultConfig()
		cfg.UseBurstTrace, cfg.BurstTracePath, cfg.ReplayCycles = true, path, 1
		cfg.NumUsers, cfg.Duration, cfg.GPUMemGB, cfg.GenerationMode = 2, 10*time.Second, tc.gpuGB, "none"
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		empty := 0
		res, err := Run(context.Background(), &cfg, func(r *schema.Record) error {
			if r.Op == schema.OpWrite && r.Size == 0 {
				empty++
				if r.Tier != tc.tier {
					t.Errorf("--gpu-mem-gb %g: the empty object written to %s, want %s", tc.gpuGB, r.Tier, tc.tier)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if empty != 1 {
			t.Fatalf("--gpu-mem-gb %g: %d writes of 0 bytes, want 1", tc.gpuGB, empty)
		}
		deps := strings.Join(res.Kvbench.Departures, "\n")
		if tc.said == "" && deps != "" || tc.said != "" && !strings.Contains(deps, DeparturePrefix+tc.said) {
			t.Errorf("--gpu-mem-gb %g: departures %q, want %q", tc.gpuGB, deps, tc.said)
		}
	}
}
