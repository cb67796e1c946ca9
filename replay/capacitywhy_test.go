package replay_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// TestCapacityWhyOnlyForTier2: Config.CapacityWhy (why kvreplay, not the
// user, bounded Tier-2: a replay it could not plan) is said in the
// eviction warning only where Tier-2's bound evicted. A RAM tier of 8 MiB
// evicting 12 of 20 objects beside a Tier-2 that never reached its bound
// was told Tier-2's bound evicted them, since every tier's evictions are
// one count.
func TestCapacityWhyOnlyForTier2(t *testing.T) {
	const why = "Tier-2 bounded at 64.00 MiB by kvreplay"
	for _, tc := range []struct {
		name string
		tier schema.Tier
		said bool
	}{
		{"the RAM tier evicts", schema.TierCPU, false},
		{"Tier-2 evicts", schema.TierNVMe, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var recs []schema.Record
			for i := range 20 {
				recs = append(recs, rec(0, schema.OpWrite, 1<<20, tc.tier, fmt.Sprint("k", i), schema.PhasePrefill, 0))
			}
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", "nvme"}
			cfg.Speed, cfg.Workers = 0, 1
			cfg.Capacity, cfg.CapacityWhy = 8<<20, why
			ramSize := int64(64 << 20)
			if tc.tier == schema.TierCPU {
				cfg.Capacity, ramSize = 64<<20, 8<<20
			}
			res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": newRAM(t, ramSize), "nvme": newRAM(t, 64<<20)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Replay.CapacityEvictions == 0 {
				t.Fatalf("no eviction: the test's tier is not bounded")
			}
			warnings := strings.Join(res.Warnings, "\n")
			if said := strings.Contains(warnings, why); said != tc.said {
				t.Errorf("%d evictions; CapacityWhy said %v, want %v:\n%s", res.Replay.CapacityEvictions, said, tc.said, warnings)
			}
		})
	}
}
