package replay

// dataSeed is the seed of a run's data bytes: Config.Seed mixed with the
// rank, so that the ranks of one run, which may replay objects of the
// same names (kvtrace's keys name users and turns, not hosts, and
// --shard tp gives every rank every row), write different bytes to a
// storage system they share: no 512-byte sector of one rank's repeats
// another's, and a deduplicating store keeps them all (mlcommons/storage
// #272). Rank 0's is Seed itself, so a single-rank run's bytes are
// (Seed, key, version, offset)'s, as before.
func dataSeed(cfg *Config) uint64 {
	return cfg.Seed ^ uint64(cfg.Rank)*0x9e3779b97f4a7c15
}
