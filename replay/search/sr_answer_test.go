package search_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay/search"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// scripted is a system whose probe of n users gives, in turn, the verdicts
// script[n] lists (then fails); it records the counts probed.
type scripted struct {
	script map[int][]bool
	seen   map[int]int
	probed []int
}

func (s *scripted) probe(n int, _ float64) (search.Probe, error) {
	if s.seen == nil {
		s.seen = map[int]int{}
	}
	s.probed = append(s.probed, n)
	v := s.script[n]
	i := s.seen[n]
	s.seen[n]++
	return search.Probe{Pass: i < len(v) && v[i]}, nil
}

// TestUsersNothingConfirmed replays a noisy search that ends, at its probe
// cap, with no count that passed every probe of it: 5 and 2 users passed
// once and failed when probed again, 1 user was never probed (the search
// kvreplay ran on this machine at 1/256 with 8 probes of 5 s). The answer
// is 0, not done, and the reason says what failed and that fewer were not
// probed, not that even 1 user misses its target, and says the probes
// disagreed (the old reason: "no number of users passed: even 1 user
// misses its latency target or storage_health").
func TestUsersNothingConfirmed(t *testing.T) {
	s := &scripted{script: map[int][]bool{5: {true, false}, 10: {false}, 7: {false}, 6: {false}, 2: {true, false}, 3: {false}, 1: {true}}}
	d, err := search.Users(search.UsersOptions{Total: 20, MaxProbes: 8, Repeats: 2}, s.probe)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(s.probed) != "[5 10 7 6 5 2 3 2]" {
		t.Fatalf("probed %v", s.probed)
	}
	want := "no number of users passed every probe of it: 2 users failed, fewer were not probed (stopped at 8 probes before the boundary was narrow and confirmed); " +
		"probes disagreed at 2 users (1 of 2 passed), 5 users (1 of 2 passed): the boundary moves from run to run"
	if d.Users != 0 || d.Done || !strings.HasPrefix(d.Reason, want) || strings.Contains(d.Reason, "even 1 user") {
		t.Errorf("%d users, done %v:\n got %q\nwant %q...", d.Users, d.Done, d.Reason, want)
	}
	// With probes left, it goes on to 1 user, which passes twice.
	s = &scripted{script: s.script}
	s.script[1] = []bool{true, true}
	d, err = search.Users(search.UsersOptions{Total: 20, MaxProbes: 12, Repeats: 2}, s.probe)
	if err != nil {
		t.Fatal(err)
	}
	if d.Users != 1 || !d.Done || !strings.HasPrefix(d.Reason, "1 user passed, 2 failed; probes disagreed at ") {
		t.Errorf("%d users, done %v after %v: %s", d.Users, d.Done, s.probed, d.Reason)
	}
	// Every count failing down to 1: then even 1 user misses.
	d, _ = search.Users(search.UsersOptions{Total: 20, MaxProbes: 12, Repeats: 2}, func(int, float64) (search.Probe, error) { return search.Probe{}, nil })
	if d.Users != 0 || !d.Done || d.Reason != "no number of users passed: even 1 user misses its latency target or storage_health" {
		t.Errorf("nothing passes: %d users, done %v: %s", d.Users, d.Done, d.Reason)
	}
}

// TestUsersDoneAtLastProbe: a search whose last allowed probe narrows the
// boundary (and needs no repeat) is done, not "stopped at 3 probes
// before the boundary was narrow and confirmed".
func TestUsersDoneAtLastProbe(t *testing.T) {
	d, err := search.Users(search.UsersOptions{Total: 8, MaxProbes: 3, Repeats: 1}, func(n int, _ float64) (search.Probe, error) {
		return search.Probe{Pass: n <= 3}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Users != 3 || !d.Done || len(d.Probes) != 3 || d.Reason != "3 users passed, 4 failed" {
		t.Errorf("%d users, done %v after %d probes: %s", d.Users, d.Done, len(d.Probes), d.Reason)
	}
}

// TestUsersAnswerConsistent searches noisy systems (each probe of n users
// passes with a probability falling from 1 to 0 across a band around a
// knee) with many seeds, and checks what the answer claims against the
// probes it lists: every probe at or below the answer passed (so "N
// passed" never sits above a failure), a done search below the total has a
// failing probe at answer+resolution and none between, and a search whose
// probes of one count disagreed says it is noisy.
func TestUsersAnswerConsistent(t *testing.T) {
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 7))
		total := 1 + rng.IntN(60)
		knee, band := rng.IntN(total+1), 1+rng.IntN(4)
		probe := func(n int, _ float64) (search.Probe, error) {
			p := min(1, max(0, float64(knee+band-n)/float64(2*band)))
			return search.Probe{Pass: rng.Float64() < p}, nil
		}
		d, err := search.Users(search.UsersOptions{Total: total, MaxProbes: 3 + rng.IntN(15), Repeats: 1 + rng.IntN(3)}, probe)
		if err != nil {
			t.Fatal(err)
		}
		passes, trials := map[int]int{}, map[int]int{}
		for _, p := range d.Probes {
			trials[p.Users]++
			if p.Pass {
				passes[p.Users]++
			}
			if p.Users <= d.Users && !p.Pass {
				t.Errorf("seed %d: answer %d, but a probe of %d failed: %s", seed, d.Users, p.Users, d.Reason)
			}
		}
		hi := d.Users + d.Resolution
		if d.Done && d.Users < total {
			if trials[hi] == passes[hi] {
				t.Errorf("seed %d: answer %d, resolution %d, but no probe of %d failed: %s", seed, d.Users, d.Resolution, hi, d.Reason)
			}
			for k := d.Users + 1; k < hi; k++ {
				if trials[k] > passes[k] {
					t.Errorf("seed %d: answer %d, resolution %d, but %d failed", seed, d.Users, d.Resolution, k)
				}
			}
		}
		noisy := false
		for k, n := range trials {
			noisy = noisy || (passes[k] > 0 && passes[k] < n)
		}
		// Said in results.ProbesDisagreed's words, which kvreport's
		// answer shares.
		if said := results.ProbesDisagreed(d.Probes); noisy != (said != "") || noisy != strings.Contains(d.Reason, "; "+said+": ") {
			t.Errorf("seed %d: probes disagreed %v, reason %q", seed, noisy, d.Reason)
		}
		if d.Users > 0 && d.Confidence != 1 {
			t.Errorf("seed %d: confidence %v at the answer %d", seed, d.Confidence, d.Users)
		}
	}
}

// TestProbeClassNotJudged: a users probe that replayed users of a class
// with an SLA and judged none of its requests (none completed in the
// window) does not pass: the class's SLA was not measured, and "every
// QoS class met its SLA" would say what nothing showed. It passed on the
// batch class alone.
func TestProbeClassNotJudged(t *testing.T) {
	res := result("PASS", map[string]float64{"batch": 1})
	res.ClosedLoop = &schema.ClosedLoopStats{PerUser: []schema.UserStats{{User: 1, QoS: "batch"}, {User: 2, QoS: "interactive"}, {User: 3, QoS: ""}}}
	p := search.Summarize(search.KindUsers, res, tier2)
	want := "interactive: 1 user replayed, no request of the class completed in the window, so its SLA was not measured (a longer --duration measures it)"
	if p.Pass || p.Reason != want {
		t.Errorf("pass %v, reason %q; want %q", p.Pass, p.Reason, want)
	}
	// Every class replayed judged (a user of no class has no SLA): a pass.
	res.ClosedLoop.PerUser = []schema.UserStats{{User: 1, QoS: "batch"}, {User: 3, QoS: ""}}
	if p := search.Summarize(search.KindUsers, res, tier2); !p.Pass {
		t.Errorf("batch judged: pass %v, %s", p.Pass, p.Reason)
	}
	// A capacity probe is judged by storage_health alone.
	res.ClosedLoop = nil
	if p := search.Summarize(search.KindCapacity, res, tier2); !p.Pass {
		t.Errorf("capacity: pass %v, %s", p.Pass, p.Reason)
	}
}

// TestCapacityIdleProbesNoPlateau: probes whose windows reached no row of
// the tiers measured (a trace whose Tier-2 rows begin after the first
// probes' windows) delivered nothing, which is no plateau: the search
// doubles on until the load arrives, then finds the plateau as usual. It
// said "saturated from the first probe" after two probes of 0 B/s.
func TestCapacityIdleProbesNoPlateau(t *testing.T) {
	d, err := search.Capacity(search.CapacityOptions{Start: 0.25, MaxProbes: 12}, func(_ int, speed float64) (search.Probe, error) {
		if speed < 1 {
			return search.Probe{}, nil
		}
		return search.Probe{OfferedBps: min(1e8*speed, 4e8)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.SaturatedFromFirstProbe || !d.Plateau || !d.Done || d.PeakOfferedBps != 4e8 || d.PeakSpeed != 4 || len(d.Probes) != 7 {
		t.Errorf("%d probes: saturated from the first %v, plateau %v, peak %v at %v: %s", len(d.Probes), d.SaturatedFromFirstProbe, d.Plateau, d.PeakOfferedBps, d.PeakSpeed, d.Reason)
	}
	none, _ := search.Capacity(search.CapacityOptions{Start: 1, MaxProbes: 4}, func(int, float64) (search.Probe, error) { return search.Probe{}, nil })
	if none.Done || none.Plateau || none.SaturatedFromFirstProbe || len(none.Probes) != 4 ||
		!strings.HasPrefix(none.Reason, "no probe delivered an offered load up to --speed 8: ") {
		t.Errorf("nothing moves: %d probes, done %v, plateau %v: %s", len(none.Probes), none.Done, none.Plateau, none.Reason)
	}
}

// TestCapacityPeakFailedHealth: a capacity search whose peak's probe
// failed storage_health (behind the trace's pace, an SLA missed) says so
// beside the peak, and names the most offered load a passing probe
// delivered: the figures of the --cpu-mem-gb 128 trace's search at 1/1024
// on this machine, whose peak at --speed 32 lagged 2.5 s behind the
// trace. The reason gave the peak alone.
func TestCapacityPeakFailedHealth(t *testing.T) {
	loads := map[float64]float64{0.25: 0, 0.5: 0, 1: 0.00749e9, 2: 0.0419e9, 4: 0.159e9, 8: 0.356e9, 16: 0.494e9, 32: 0.556e9}
	d, err := search.Capacity(search.CapacityOptions{MaxProbes: 8}, func(_ int, speed float64) (search.Probe, error) {
		return search.Probe{OfferedBps: loads[speed], Pass: speed <= 4}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "peak offered load 0.556 GB/s at --speed 32, still improving after 8 probes: the peak is at least this; " +
		"storage_health failed at the peak: the most offered load served within it was 0.159 GB/s at --speed 4"
	if d.Reason != want || d.PeakSpeed != 32 {
		t.Errorf("reason\n got %q\nwant %q", d.Reason, want)
	}
	// Every probe failed: said so; the peak's probe passed: nothing said.
	d, _ = search.Capacity(search.CapacityOptions{Start: 1, MaxProbes: 3}, func(_ int, speed float64) (search.Probe, error) {
		return search.Probe{OfferedBps: speed}, nil
	})
	if !strings.HasSuffix(d.Reason, "; storage_health failed at the peak, and in every probe") {
		t.Errorf("every probe failed: %s", d.Reason)
	}
	d, _ = search.Capacity(search.CapacityOptions{Start: 1, MaxProbes: 3}, func(_ int, speed float64) (search.Probe, error) {
		return search.Probe{OfferedBps: speed, Pass: speed == 4}, nil
	})
	if strings.Contains(d.Reason, "storage_health") {
		t.Errorf("the peak passed: %s", d.Reason)
	}
}
