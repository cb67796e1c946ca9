package replay

import "testing"

// TestDataSeed: rank 0 keeps the seed (a single-rank run's bytes are
// unchanged); every other rank of a run gets its own.
func TestDataSeed(t *testing.T) {
	seen := map[uint64]int{}
	for _, seed := range []uint64{1, 42} {
		for rank := range 1024 {
			cfg := DefaultConfig()
			cfg.Seed, cfg.Rank = seed, rank
			s := dataSeed(&cfg)
			if rank == 0 && s != seed {
				t.Errorf("seed %d rank 0: data seed %d", seed, s)
			}
			if prev, dup := seen[s]; dup {
				t.Fatalf("seed %d rank %d: data seed %d, as rank %d's", seed, rank, s, prev)
			}
			seen[s] = rank
		}
	}
}
