package search_test

import (
	"testing"

	"github.com/kvbench/kvbench/replay/search"
)

// TestUsersFindsKnee runs the users search against systems that serve
// exactly k users, for many k and totals: it answers k, confirmed.
func TestUsersFindsKnee(t *testing.T) {
	for _, total := range []int{1, 2, 7, 20, 100, 1000} {
		for _, k := range []int{0, 1, total / 3, total / 2, total - 1, total} {
			if k < 0 || k > total {
				continue
			}
			probe := func(n int, _ float64) (search.Probe, error) { return search.Probe{Pass: n <= k}, nil }
			d, err := search.Users(search.UsersOptions{Total: total, MaxProbes: 40, Repeats: 2}, probe)
			if err != nil {
				t.Fatal(err)
			}
			// The bisection stops once the gap is 1 user or 5 % of the
			// answer: never above the knee, at most 5 % below.
			if d.Users > k || float64(k-d.Users) > 0.05*float64(k) || !d.Done || len(d.Probes) < 1 {
				t.Errorf("total %d, knee %d: answer %d after %d probes (done %v): %s", total, k, d.Users, len(d.Probes), d.Done, d.Reason)
			}
			if k > 0 && k < total && (d.Resolution != 1 && float64(d.Resolution) > 0.05*float64(d.Users)+1) {
				t.Errorf("total %d, knee %d: resolution %d", total, k, d.Resolution)
			}
			if k > 0 && d.Confidence != 1 {
				t.Errorf("total %d, knee %d: confidence %v", total, k, d.Confidence)
			}
		}
	}
}

// TestUsersFlakyAnswer steps below an answer that fails when probed
// again, and stops at the probe cap, saying so.
func TestUsersFlakyAnswer(t *testing.T) {
	seen := map[int]int{}
	probe := func(n int, _ float64) (search.Probe, error) {
		seen[n]++
		// 10 passes once, then fails: the boundary is really 9.
		return search.Probe{Pass: n <= 9 || (n == 10 && seen[n] == 1)}, nil
	}
	d, err := search.Users(search.UsersOptions{Total: 40, MaxProbes: 30, Repeats: 2}, probe)
	if err != nil {
		t.Fatal(err)
	}
	if d.Users != 9 {
		t.Errorf("answer %d, want 9 (probes %+v)", d.Users, d.Probes)
	}
	capped, err := search.Users(search.UsersOptions{Total: 1000, MaxProbes: 3}, func(n int, _ float64) (search.Probe, error) {
		return search.Probe{Pass: n <= 377}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if capped.Done || len(capped.Probes) != 3 {
		t.Errorf("capped search: done %v after %d probes", capped.Done, len(capped.Probes))
	}
}

// TestCapacityFindsPlateau doubles the load until bandwidth stops
// improving and reports the first speed at the plateau.
func TestCapacityFindsPlateau(t *testing.T) {
	probe := func(_ int, speed float64) (search.Probe, error) {
		return search.Probe{BandwidthBps: min(10*speed, 100), Health: "PASS"}, nil
	}
	d, err := search.Capacity(search.CapacityOptions{Start: 1, MaxProbes: 20}, probe)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Plateau || d.PeakBandwidthBps != 100 || d.PeakSpeed != 16 || len(d.Probes) != 7 {
		t.Errorf("peak %v at %v, plateau %v, %d probes", d.PeakBandwidthBps, d.PeakSpeed, d.Plateau, len(d.Probes))
	}
	still, _ := search.Capacity(search.CapacityOptions{Start: 1, MaxProbes: 4}, probe)
	if still.Plateau || still.Done {
		t.Errorf("a search capped before the plateau says it found one")
	}
}
