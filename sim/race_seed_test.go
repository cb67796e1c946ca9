package sim

import (
	"context"
	"hash/fnv"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestRaceDrawsFollowSeed: the NVMe race model's draws (Config.NVMeAccounting)
// are a stream of their own, and --seed seeds it, as it seeds every other
// draw. The workload's generator is held at one seed here and only
// Config.Seed changes, so the trace differs only where the races do: the
// same seed writes the same trace, another seed races other demotions.
// Seeded only under --precondition, the races of every other run were the
// same whatever its seed, and the two traces were identical.
func TestRaceDrawsFollowSeed(t *testing.T) {
	run := func(seed int64) (uint64, int64) {
		cfg := DefaultConfig()
		cfg.Seed, cfg.NumUsers, cfg.Duration, cfg.GenerationMode = seed, 20, 10*time.Second, "none"
		cfg.GPUMemGB, cfg.CPUMemGB, cfg.StorageCapacityGB = 0, 2, 4
		model, err := lookupModel(cfg.Models, cfg.Model)
		if err != nil {
			t.Fatal(err)
		}
		h := fnv.New64a()
		e := &engine{ctx: context.Background(), cfg: &cfg, model: model, bpt: model.BytesPerToken(),
			rng: newPyRand(42), // the workload's draws, the same for both seeds
			sink: func(r *schema.Record) error {
				h.Write([]byte(r.Op.String() + r.Tier.String() + r.Phase.String()))
				h.Write(r.Key)
				return nil
			}}
		e.cache = newCache(&cfg, e.bpt, e.emit)
		if err := e.run(); err != nil {
			t.Fatal(err)
		}
		return h.Sum64(), e.result().Kvbench.RacedReservations
	}
	a, ra := run(1)
	a2, _ := run(1)
	b, rb := run(2)
	if ra == 0 || rb == 0 {
		t.Fatalf("raced reservations %d and %d: the configuration must race", ra, rb)
	}
	if a != a2 {
		t.Error("seed 1 twice: two traces")
	}
	if a == b {
		t.Errorf("seeds 1 and 2, the workload's draws held: the same trace (%d and %d raced reservations): the races do not follow the seed", ra, rb)
	}
}
