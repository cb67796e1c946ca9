package sim

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// cv returns the coefficient of variation of the gaps between sorted times.
func cv(times []time.Duration) float64 {
	n := float64(len(times) - 1)
	mean := (times[len(times)-1] - times[0]).Seconds() / n
	var sq float64
	for i := 1; i < len(times); i++ {
		d := (times[i] - times[i-1]).Seconds() - mean
		sq += d * d
	}
	return math.Sqrt(sq/n) / mean
}

// TestArrivalDraws draws 200,000 gaps of each process: their mean is 1/rate
// and their coefficient of variation the process's (gamma's by
// Marsaglia-Tsang, and its boost below shape 1).
func TestArrivalDraws(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		cv, tv float64
	}{
		{ArrivalFixed, 2, 0},
		{ArrivalPoisson, 2, 1},
		{ArrivalGamma, 2, 2},
		{ArrivalGamma, 0.5, 0.5},
		{ArrivalGamma, 1, 1},
	} {
		cfg := DefaultConfig()
		cfg.Arrival, cfg.ArrivalCV, cfg.Seed = tc.kind, tc.cv, 7
		a := newArrivals(&cfg, 50)
		times := make([]time.Duration, 200001)
		for i := 1; i < len(times); i++ {
			times[i] = times[i-1] + a.next()
		}
		mean := times[len(times)-1].Seconds() / float64(len(times)-1)
		if got := cv(times); math.Abs(got-tc.tv) > 0.03*max(tc.tv, 1) || math.Abs(mean-0.02) > 0.0006 {
			t.Errorf("%s cv %v: gaps of mean %.5f s, cv %.3f; want 0.02 s and %v", tc.kind, tc.cv, mean, got, tc.tv)
		}
	}
}

// requestTimes runs cfg and returns each request's first row time, in
// order, and the requests' contexts in request order.
func requestTimes(t *testing.T, cfg *Config) (times []time.Duration, tokens []int64) {
	t.Helper()
	seen := map[uint64]bool{}
	type req struct {
		id uint64
		at time.Duration
		n  int64
	}
	var reqs []req
	_, err := Run(context.Background(), cfg, func(r *schema.Record) error {
		if r.Request != 0 && !seen[r.Request] {
			seen[r.Request] = true
			reqs = append(reqs, req{r.Request, r.Time, r.Size})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(reqs, func(a, b req) int { return int(a.id) - int(b.id) })
	for _, r := range reqs {
		times = append(times, r.at)
		tokens = append(tokens, r.n)
	}
	slices.Sort(times)
	return times, tokens
}

// TestArrivalProcesses runs 100 synthetic users for 120 s under each
// process (generation mode none: a request's rows are at its arrival): the
// trace's inter-arrival coefficient of variation is Poisson's 1 and gamma's
// --arrival-cv 2, within a tenth; the rate is the users' think times'; and
// another --arrival-seed moves the arrivals but not the workload's draws.
func TestArrivalProcesses(t *testing.T) {
	base := DefaultConfig()
	base.Duration, base.GenerationMode, base.GPUMemGB, base.CPUMemGB, base.Seed = 120*time.Second, "none", 0, 4, 42
	closed, _ := requestTimes(t, &base)
	for _, tc := range []struct {
		kind   string
		cv, tv float64
	}{
		{ArrivalPoisson, 2, 1},
		{ArrivalGamma, 2, 2},
		{ArrivalFixed, 2, 0},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			cfg := base
			cfg.Arrival, cfg.ArrivalCV = tc.kind, tc.cv
			times, tokens := requestTimes(t, &cfg)
			got := cv(times)
			t.Logf("%d requests (closed loop: %d), cv %.3f", len(times), len(closed), got)
			if math.Abs(got-tc.tv) > 0.1*max(tc.tv, 0.5) {
				t.Errorf("inter-arrival cv %.3f, want %v +- 10 %%", got, tc.tv)
			}
			if r := float64(len(times)) / float64(len(closed)); r < 0.8 || r > 1.25 {
				t.Errorf("%d requests, the closed loop %d: want about its rate", len(times), len(closed))
			}
			cfg.ArrivalSeed = 1
			times2, tokens2 := requestTimes(t, &cfg)
			if tc.kind != ArrivalFixed && slices.Equal(times, times2) {
				t.Error("--arrival-seed 1 gave the same arrivals")
			}
			n := min(len(tokens), len(tokens2), 500)
			if !slices.Equal(tokens[:n], tokens2[:n]) {
				t.Error("--arrival-seed changed the workload's first requests")
			}
		})
	}
}

// TestArrivalDataset paces a ShareGPT --dataset-path by a gamma process at
// --request-rate 50 for 120 s: the requests come at the rate, with the
// gaps' cv 2; the run notes the process.
func TestArrivalDataset(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DatasetPath = "reqtrace/testdata/sharegpt_sample50.json"
	cfg.Duration, cfg.RequestRate, cfg.Arrival, cfg.ArrivalCV = 120*time.Second, 50, ArrivalGamma, 2
	times, _ := requestTimes(t, &cfg)
	if got := cv(times); math.Abs(got-2) > 0.2 || len(times) < 5000 || len(times) > 7000 {
		t.Errorf("%d requests, cv %.3f; want about 6000 and 2", len(times), got)
	}
}
