package sim

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestTierWrittenCountsEvictions: each tier's written bytes in the
// statistics are all the bytes the trace writes to it, the Prefill writes
// and the Evict writes that bring objects down from the tier above, as
// the reference counts them since mlcommons/storage #408 and #420 (before,
// the NVMe tier of this run missed seven eighths of its bytes).
func TestTierWrittenCountsEvictions(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumUsers, cfg.Duration, cfg.GenerationMode = 20, 20*time.Second, "none"
	cfg.GPUMemGB, cfg.CPUMemGB, cfg.Seed = 1, 2, 42
	var written, evicted [schema.NumTiers]int64
	res, err := Run(context.Background(), &cfg, func(r *schema.Record) error {
		if r.Op == schema.OpWrite {
			written[r.Tier] += r.Size
			if r.Phase == schema.PhaseEvict {
				evicted[r.Tier] += r.Size
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if evicted[schema.TierCPU] == 0 || evicted[schema.TierNVMe] == 0 {
		t.Fatalf("no evictions to count (Evict writes by tier %v): the test proves nothing", evicted)
	}
	c := res.Summary.CacheStats
	for _, tt := range []struct {
		tier schema.Tier
		gb   float64
	}{{schema.TierGPU, c.GPUWrittenGB}, {schema.TierCPU, c.CPUWrittenGB}, {schema.TierNVMe, c.StorageWrittenGB}} {
		if want := float64(written[tt.tier]) / (1 << 30); math.Abs(tt.gb-want) > 1e-9*max(want, 1) {
			t.Errorf("%s written %.6f GiB, want the trace's %.6f GiB (of which %.6f by eviction)", tt.tier, tt.gb, want, float64(evicted[tt.tier])/(1<<30))
		}
	}
}

// TestStorageTokensAcrossTP: the tokens that moved through the NVMe tier
// do not depend on the tensor-parallel degree (each rank's objects hold
// its share of every token), as the reference counts them since
// mlcommons/storage #402; its reads used to count TP times too few.
func TestStorageTokensAcrossTP(t *testing.T) {
	tokens := map[int]float64{}
	for _, tp := range []int{1, 2} {
		cfg := DefaultConfig()
		cfg.Model, cfg.NumUsers, cfg.Duration, cfg.GenerationMode = "llama3.1-70b-instruct", 10, 20*time.Second, "none"
		cfg.GPUMemGB, cfg.CPUMemGB, cfg.Seed, cfg.NumGPUs, cfg.TensorParallel = 0, 0, 42, 2, tp
		res, err := Run(context.Background(), &cfg, func(*schema.Record) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		tokens[tp] = res.Summary.CacheStats.StorageTokensProcessed
	}
	if tokens[1] == 0 || tokens[1] != tokens[2] {
		t.Errorf("storage tokens processed: %.0f at TP 1, %.0f at TP 2; want the same, not 0", tokens[1], tokens[2])
	}
}

// TestStorageTokensByTier: storage_tokens_processed is Tier-2's alone, as
// every storage_* key of cache_stats is and as kvreplay's
// kv_tokens_moved_per_s counts, and object_tokens_processed Tier-3's: the
// tokens of each tier's writes (Prefill and Evict) and of its reads other
// than a demotion's. Before, storage_tokens_processed added Tier-3's
// tokens to Tier-2's.
func TestStorageTokensByTier(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumUsers, cfg.Duration, cfg.GenerationMode = 20, 30*time.Second, "none"
	cfg.GPUMemGB, cfg.CPUMemGB, cfg.StorageCapacityGB, cfg.ObjectTier, cfg.Seed = 0, 0, 20, true, 42
	var want [schema.NumTiers]float64
	var rows [schema.NumTiers][schema.NumOps]int
	res, err := Run(context.Background(), &cfg, func(r *schema.Record) error {
		rows[r.Tier][r.Op]++
		if r.Op == schema.OpWrite || r.Op == schema.OpRead && r.Phase != schema.PhaseEvict {
			want[r.Tier] += float64(r.Size)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	bpt := res.Kvbench.BytesPerToken
	if rows[schema.TierNVMe][schema.OpRead] == 0 || rows[schema.TierObject][schema.OpRead] == 0 || rows[schema.TierObject][schema.OpWrite] == 0 {
		t.Fatalf("rows by tier and operation %v: no Tier-2 or Tier-3 reads and writes, the test proves nothing", rows)
	}
	c := res.Summary.CacheStats
	for _, tt := range []struct {
		tier schema.Tier
		got  float64
	}{{schema.TierNVMe, c.StorageTokensProcessed}, {schema.TierObject, c.ObjectTokensProcessed}} {
		if w := want[tt.tier] / float64(bpt); tt.got != w {
			t.Errorf("%s tokens processed %.0f, want its rows' %.0f", tt.tier, tt.got, w)
		}
	}
}
