package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartBarrierStaleOtherSize: a two-hour-old ready file of a run of
// another size is an earlier run's, and said so, not blamed on this run's
// --ranks: "kvreplay-ready.1-of-4: a rank of a run of 4 ranks, this one
// has 2 (give every rank the same --ranks)" sent the user to the flags of
// ranks that all had the same --ranks.
func TestStartBarrierStaleOtherSize(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, readyName(1, 4, ""))
	if err := os.WriteFile(old, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old, then, then); err != nil {
		t.Fatal(err)
	}
	b := NewBarrier(dir, 10*time.Minute)
	b.poll = time.Millisecond
	_, err := b.Wait(t.Context(), Rank{Rank: 0, Ranks: 2})
	if err == nil || !strings.Contains(err.Error(), "kvreplay-ready.1-of-4 was made at") || strings.Contains(err.Error(), "give every rank the same --ranks") {
		t.Errorf("a two-hour-old ready file of a run of 4 ranks: %v; want it refused as an earlier run's", err)
	}
	// A fresh one is a rank of this run given another --ranks.
	if err := os.Chtimes(old, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = b.Wait(t.Context(), Rank{Rank: 0, Ranks: 2})
	if err == nil || !strings.Contains(err.Error(), "give every rank the same --ranks") {
		t.Errorf("a fresh ready file of a run of 4 ranks: %v; want the --ranks mismatch", err)
	}
}
