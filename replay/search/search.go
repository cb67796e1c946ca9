// Package search answers the questions behind a replay: how many of a
// trace's users a system serves within their latency targets (Users), and
// how much bandwidth it delivers before more load stops helping
// (Capacity). Each is a sequence of probes, replays run by the caller
// through a Prober; the package decides which probe comes next and what
// the probes say, and knows nothing of backends.
package search

import (
	"fmt"
	"math"
	"slices"

	"github.com/kvbench/kvbench/schema"
)

// Kinds of search.
const (
	KindUsers    = schema.SearchUsers
	KindCapacity = schema.SearchCapacity
)

// Probe is one replay of a search; Document is a search's result.
type (
	Probe    = schema.SearchProbe
	Document = schema.SearchResult
)

// Summarize reads a probe's figures off its result. The bandwidth is
// Tier-2's reads and writes when Tier-2 moved bytes, else every tier's.
func Summarize(res *schema.Result) Probe {
	p := Probe{WallS: res.WallS, Requests: res.Requests.Count, RequestsPerSecond: res.Summary.RequestsPerSecond,
		TokensPerSecond: res.Summary.StorageThroughputTokensPerSec, Health: res.Summary.StorageHealth.OverallStatus}
	var nvme, all float64
	for _, t := range res.Tiers {
		bw := t.ReadBandwidthBps + t.WriteBandwidthBps
		all += bw
		if t.Tier == schema.TierNVMe.String() {
			nvme += bw
		}
	}
	p.BandwidthBps = all
	if nvme > 0 {
		p.BandwidthBps = nvme
	}
	for _, q := range res.Requests.ByQoS {
		if p.P95MSByQoS == nil {
			p.P95MSByQoS = map[string]float64{}
		}
		p.P95MSByQoS[q.QoS] = q.Latency.P95US / 1000
	}
	p.Pass, p.Reason = judge(res)
	return p
}

// judge applies the users search's criteria to a probe's result.
func judge(res *schema.Result) (bool, string) {
	switch {
	case !res.Complete:
		return false, "incomplete: " + res.IncompleteReason
	case res.Errors.Count > 0:
		return false, fmt.Sprintf("%d operations failed", res.Errors.Count)
	case res.Summary.StorageHealth.OverallStatus != "PASS":
		return false, "storage_health " + res.Summary.StorageHealth.OverallStatus
	case len(res.Requests.ByQoS) == 0:
		return false, "no request with a QoS class completed"
	}
	for _, q := range res.Requests.ByQoS {
		if !q.Met {
			return false, fmt.Sprintf("%s: %.1f%% of requests within %g ms (p95 %.1f ms)", q.QoS, 100*q.Compliance, q.TargetP95MS, q.Latency.P95US/1000)
		}
	}
	return true, ""
}

// Prober runs one probe: a replay of n users (a users search) or at a
// --speed (a capacity search). An error stops the search.
type Prober func(n int, speed float64) (Probe, error)

// UsersOptions bound a users search.
type UsersOptions struct {
	// Total is the trace's number of users; the answer is at most Total.
	Total int
	// MaxProbes caps the probes (at least 3).
	MaxProbes int
	// Repeats is how many times in all the answer is probed (1: once).
	Repeats int
}

// Users finds the largest number of users, 0 to Total, whose probe
// passes: it brackets the boundary from Total/4 (doubling up or halving
// down), bisects until the gap is 1 user or 5 % of the answer, then
// probes the answer again, Repeats times in all, and steps down below an
// answer that fails a repeat. It stops at MaxProbes; the document says
// how far it got.
func Users(opt UsersOptions, probe Prober) (*Document, error) {
	d := &Document{Kind: KindUsers, TotalUsers: opt.Total}
	if opt.Total < 1 {
		d.Done, d.Reason = true, "the trace has no users"
		return d, nil
	}
	maxProbes := max(opt.MaxProbes, 3)
	passes := map[int]int{}
	trials := map[int]int{}
	try := func(n int) (bool, error) {
		p, err := probe(n, 0)
		if err != nil {
			return false, err
		}
		p.Users = n
		d.Probes = append(d.Probes, p)
		trials[n]++
		if p.Pass {
			passes[n]++
		}
		return p.Pass, nil
	}
	lo, hi := 0, opt.Total+1 // lo passed (0 trivially), hi failed (Total+1 by convention)
	// Bracket.
	n := max(1, (opt.Total+3)/4)
	for len(d.Probes) < maxProbes {
		ok, err := try(n)
		if err != nil {
			return d, err
		}
		if ok {
			lo = n
			if n == opt.Total {
				break
			}
			if hi <= opt.Total {
				break
			}
			n = min(opt.Total, 2*n)
		} else {
			hi = n
			if lo > 0 || n == 1 {
				break
			}
			n = max(1, n/2)
		}
	}
	// Bisect, then confirm the answer.
	for len(d.Probes) < maxProbes {
		if gap := hi - lo; gap > 1 && float64(gap) > 0.05*float64(lo) {
			ok, err := try((lo + hi) / 2)
			if err != nil {
				return d, err
			}
			if ok {
				lo = (lo + hi) / 2
			} else {
				hi = (lo + hi) / 2
			}
			continue
		}
		if lo == 0 || trials[lo] >= max(1, opt.Repeats) {
			d.Done = true
			break
		}
		ok, err := try(lo)
		if err != nil {
			return d, err
		}
		if !ok {
			// Not reproducible: the boundary is below. Step down to the
			// largest count that passed every time it ran.
			hi = lo
			lo = 0
			for k, p := range passes {
				if k < hi && p == trials[k] && k > lo {
					lo = k
				}
			}
		}
	}
	d.Users = lo
	if lo > 0 {
		d.Confidence = float64(passes[lo]) / float64(trials[lo])
	}
	d.Resolution = hi - lo
	switch {
	case lo == opt.Total:
		d.Reason = fmt.Sprintf("all %d users passed: the system serves at least the trace's users (make a trace with more)", lo)
	case lo == 0:
		d.Reason = "no number of users passed: even 1 user misses its latency target or storage_health"
	default:
		d.Reason = fmt.Sprintf("%d users passed, %d failed", lo, hi)
	}
	if !d.Done {
		d.Reason += fmt.Sprintf(" (stopped at %d probes before the boundary was narrow and confirmed)", len(d.Probes))
	}
	return d, nil
}

// CapacityOptions bound a capacity search.
type CapacityOptions struct {
	// Start is the first --speed (1: the trace's pace); each probe
	// doubles it.
	Start float64
	// MaxProbes caps the probes (at least 3).
	MaxProbes int
}

// plateauGain is the least gain over the peak that counts as improving.
const plateauGain = 0.02

// Capacity raises the open-loop load, doubling --speed from Start, until
// the delivered bandwidth stops improving: two probes in a row less than
// 2 % above the peak. It reports the peak and the speed that reached it.
func Capacity(opt CapacityOptions, probe Prober) (*Document, error) {
	d := &Document{Kind: KindCapacity}
	speed := opt.Start
	if speed <= 0 || math.IsNaN(speed) {
		speed = 1
	}
	stalls := 0
	for len(d.Probes) < max(opt.MaxProbes, 3) {
		p, err := probe(0, speed)
		if err != nil {
			return d, err
		}
		p.Speed = speed
		p.Pass = p.Health != "INCOMPLETE" && p.Health != ""
		d.Probes = append(d.Probes, p)
		if p.BandwidthBps > d.PeakBandwidthBps*(1+plateauGain) {
			d.PeakBandwidthBps, d.PeakSpeed = p.BandwidthBps, speed
			stalls = 0
		} else {
			stalls++
			if p.BandwidthBps > d.PeakBandwidthBps {
				d.PeakBandwidthBps, d.PeakSpeed = p.BandwidthBps, speed
			}
		}
		if stalls >= 2 {
			d.Plateau, d.Done = true, true
			break
		}
		speed *= 2
	}
	if d.Plateau {
		d.Reason = fmt.Sprintf("bandwidth stopped improving (under %.0f%% over two doublings of the load) at --speed %g", 100*plateauGain, slices.Max(speeds(d.Probes)))
	} else {
		d.Reason = fmt.Sprintf("still improving after %d probes: the peak is at least this", len(d.Probes))
	}
	return d, nil
}

func speeds(ps []Probe) []float64 {
	s := make([]float64, len(ps))
	for i, p := range ps {
		s[i] = p.Speed
	}
	return s
}
