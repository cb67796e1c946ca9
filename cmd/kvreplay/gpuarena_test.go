package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cuda/cudatest"
)

// TestGPUArenaUnplannedFake: the gpu tier of traces nothing sized (a
// pipe, --no-prescan without a sidecar) gets an arena of half the device's
// free memory, as the RAM tier's of the memory available, over the fake
// CUDA runtime: it was 1 MiB, the plan of nothing, and the replay stopped
// at its first object of 2 MiB (exit 1, "object larger than the tier's
// capacity").
func TestGPUArenaUnplannedFake(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	lib := filepath.Dir(cudatest.FakeRuntime(t))
	dir := t.TempDir()
	tr := writeTierTrace(t, dir, "k", "Tier-0", 4, 2<<20)
	out := filepath.Join(dir, "r.json")
	res := replayVerified(t, kvreplay, lib, out, 4*2<<20, "--no-prescan", "--tier-map", "Tier-0=gpu", "--verify", "--speed", "max", "-q", "-o", out, tr)
	var path string
	for _, p := range res.Host.TierPaths {
		if p.Backend == "gpu" {
			path = p.Path
		}
	}
	// The fake device has 1 GiB: half of it.
	if !strings.Contains(path, "512.00 MiB arena") {
		t.Errorf("gpu tier path %q: want an arena of 512.00 MiB", path)
	}
}
