package sim

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestElapsedIsTheDuration: summary.elapsed_time is the run's --duration,
// as kv-cache.py's is (it waits for the duration whatever happens in it),
// unless the run stopped before it; the rates are over it. It was the
// time of the run's last event: a BurstGPT trace whose fourth request
// arrives long after a 60 s run reported 2 s, and its requests per second
// and bandwidths 30 times too high.
func TestElapsedIsTheDuration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.csv")
	body := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n" +
		"0,a,1000,100,1100,x\n1,a,1000,100,1100,x\n2,a,1000,100,1100,x\n1000,a,1000,100,1100,x\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	burst := DefaultConfig()
	burst.UseBurstTrace, burst.BurstTracePath = true, path
	burst.NumUsers, burst.GenerationMode, burst.Duration, burst.GPUMemGB = 4, "none", time.Minute, 0
	users := DefaultConfig()
	users.NumUsers, users.Duration, users.GPUMemGB, users.CPUMemGB, users.Seed = 1, 30*time.Second, 0, 4, 3
	stops := users
	stops.MaxRequests = 3
	for _, tc := range []struct {
		name    string
		cfg     Config
		elapsed func(lastDoneS float64) float64
	}{
		{"trace arriving after the duration", burst, func(float64) float64 { return 60 }},
		{"one user", users, func(float64) float64 { return 30 }},
		// Stopped by --max-requests: the run ends as its last request
		// completes.
		{"stopped early", stops, func(doneS float64) float64 { return doneS }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			var last time.Duration
			var done float64
			res, err := RunWithHooks(context.Background(), &cfg, func(r *schema.Record) error { last = r.Time; return nil },
				Hooks{Completed: func(c *Completion) error { done = c.CompletedS; return nil }})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Summary
			want := tc.elapsed(done)
			if s.TotalRequests == 0 || last.Seconds() >= cfg.Duration.Seconds()-0.5 {
				t.Fatalf("test setup: %d requests, last row at %v of %v", s.TotalRequests, last, cfg.Duration)
			}
			if s.ElapsedTime != want {
				t.Errorf("elapsed_time %v s, want %v (last row at %v, --duration %v)", s.ElapsedTime, want, last, cfg.Duration)
			}
			if rps := float64(s.TotalRequests) / want; s.RequestsPerSecond != rps {
				t.Errorf("requests_per_second %v, want %v", s.RequestsPerSecond, rps)
			}
			c := s.CacheStats
			if bw := c.CPUWrittenGB / want; c.CPUWriteBandwidth != bw || bw == 0 {
				t.Errorf("tier_cpu_write_bandwidth_gbps %v, want %v", c.CPUWriteBandwidth, bw)
			}
		})
	}
}
