package setup

import (
	"context"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cuda/cudatest"
	"github.com/kvbench/kvbench/internal/launch"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
)

// TestGPUOfRankLocalUnknown: a rank whose launcher does not say its local
// rank (PMI_RANK without MPI_LOCALRANKID, --rank without a launcher) took
// local rank 0, the first GPU, as every rank on its host did; now it takes
// the one GPU --gpus gives, and of several is refused, naming --gpus. A
// known local rank takes the GPU at it, as before.
func TestGPUOfRankLocalUnknown(t *testing.T) {
	cudaHome(t)
	cudatest.Setenv(t, "FAKE_CUDA_DEVICES", "2")
	for _, c := range []struct {
		name, gpus string
		local      int
		bus        string
		wantErr    string
	}{
		{"local rank 1", "", 1, "00000000:18:00", ""},
		{"unknown, one GPU given", "1", launch.LocalUnknown, "00000000:18:00", ""},
		{"unknown, all GPUs", "", launch.LocalUnknown, "", "cannot take its own of the 2 GPUs here: ranks on one host would all take the first; give each rank one GPU with --gpus N"},
		{"unknown, two GPUs given", "1,0", launch.LocalUnknown, "", "cannot take its own of --gpus 1,0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var env Env
			cfg := replay.DefaultConfig()
			if err := env.MapTier(&cfg, schema.TierGPU, "Tier-0", "gpu"); err != nil {
				t.Fatal(err)
			}
			plan := &replay.Plan{Scanned: true, Peak: map[string]int64{"gpu": 1 << 20}}
			plan.Used[schema.TierGPU] = true
			tiers, err := Build(context.Background(), &env, &cfg, plan, Options{GPUs: c.gpus, LocalRank: c.local})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("%v; want %q", err, c.wantErr)
				}
				if err == nil {
					tiers.Close()
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tiers.Close()
			var res schema.Result
			tiers.Describe(&res)
			var bus string
			for _, p := range res.Host.TierPaths {
				if p.GPU != nil {
					bus = p.GPU.PCIBusID
				}
			}
			if bus != c.bus {
				t.Errorf("GPU %q, want %q", bus, c.bus)
			}
		})
	}
}
