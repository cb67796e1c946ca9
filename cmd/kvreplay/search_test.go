package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/search"
	"github.com/kvbench/kvbench/replay/setup"
	"github.com/kvbench/kvbench/schema"
)

// fakeProbes is a replayFunc of a system that serves up to serves users,
// on a clock that each probe moves 30 s on; probe failAt (from 1) stops
// with an I/O error, as a run does: its result incomplete, with the error.
type fakeProbes struct {
	clock  time.Time
	serves int
	failAt int
	calls  int
	users  []int // the users each probe asked for
}

func (f *fakeProbes) now() time.Time { return f.clock }

func (f *fakeProbes) replay(cfg *replay.Config, progress func(replay.Progress)) (*schema.Result, error) {
	f.calls++
	f.users = append(f.users, cfg.Users)
	f.clock = f.clock.Add(30 * time.Second)
	if progress != nil {
		progress(replay.Progress{Elapsed: 12 * time.Second, Bytes: 120e6})
	}
	res := &schema.Result{Complete: true, WallS: 30}
	res.Summary.StorageHealth.OverallStatus = "PASS"
	met := cfg.Users <= f.serves
	res.Requests.ByQoS = []schema.QoSStats{{QoS: "batch", Count: 100, TargetP95MS: 1000, Compliance: 1, WithinTarget: 100, Met: met}}
	if !met {
		res.Requests.ByQoS[0].Compliance, res.Requests.ByQoS[0].WithinTarget = 0.5, 50
	}
	if f.calls == f.failAt {
		res.Complete, res.IncompleteReason = false, "replay: Write Tier-2 Prefill \"u1r3\": input/output error"
		res.Errors = schema.ErrorStats{Count: 1, First: []string{"input/output error"}}
		return res, errFake
	}
	return res, nil
}

var errFake = &fakeError{}

type fakeError struct{}

func (*fakeError) Error() string { return "replay: input/output error" }

// mixedPlan is a prescanned plan of 8 users, the first 4 to appear batch.
func mixedPlan() *replay.Plan {
	p := &replay.Plan{Scanned: true}
	for i, q := range []schema.QoS{3, 3, 3, 3, 1, 1, 2, 2} {
		p.Users = append(p.Users, replay.User{ID: uint64(i + 1), QoS: q})
	}
	return p
}

func searchOptions(kind string) *options {
	o := &options{cfg: replay.DefaultConfig(), search: setup.SearchOptions{Kind: kind, Probes: 12, Repeats: 2}}
	o.cfg.Duration = 30 * time.Second
	return o
}

// TestSearchStopsAtFailedProbe: a users search whose second probe stops
// with an I/O error writes its document, not done, its answer the users
// that passed before as a lower bound, and exits 1; stderr has one line
// per probe, naming it, the time so far and the users by class.
func TestSearchStopsAtFailedProbe(t *testing.T) {
	f := &fakeProbes{clock: time.Unix(1e9, 0), serves: 3, failAt: 2}
	var stdout, stderr bytes.Buffer
	prog := &setup.SearchProgress{W: &stderr, Now: f.now, Max: 12, Window: 30 * time.Second}
	err := searchWith(searchOptions(search.KindUsers), mixedPlan(), 8, f.replay, prog, []string{"--search", "users"}, true, &stdout)
	if cli.ExitCode(err) != 1 {
		t.Fatalf("exit status %d (%v), want 1", cli.ExitCode(err), err)
	}
	var d schema.SearchResult
	if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
		t.Fatalf("document: %v\n%s", err, stdout.String())
	}
	if d.Done || !d.AnswerIsLowerBound || d.Users != 2 || len(d.Probes) != 2 || d.Probes[1].NotMeasured == "" ||
		!strings.Contains(d.LowerBoundReason, "input/output error") || d.UserSelection == "" {
		t.Errorf("done %v, lower bound %v (%s), %d users, %d probes: %s", d.Done, d.AnswerIsLowerBound, d.LowerBoundReason, d.Users, len(d.Probes), d.Reason)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	want := []string{
		"kvreplay: probe 1 of at most 12, 30s elapsed, users=2 (interactive 1, batch 1): ",
		"kvreplay: probe 2 of at most 12, 1m0s elapsed, users=4 (interactive 1, responsive 1, batch 2): ",
		"kvreplay: search: at least 2 users",
	}
	if len(lines) != len(want) {
		t.Fatalf("stderr has %d lines, want %d:\n%s", len(lines), len(want), stderr.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("stderr line %d:\n got %q\nwant %q...", i+1, lines[i], w)
		}
	}
	if !strings.Contains(lines[1], "NOT A MEASUREMENT: an incomplete run (replay: Write Tier-2 Prefill") || strings.Contains(stderr.String(), "\r") {
		t.Errorf("stderr, not a terminal:\n%q", stderr.String())
	}
}

// TestSearchProgressLive draws a live line on a terminal while a probe
// runs, and keeps one line per probe. The live line's rate is every
// tier's bytes, and says so: the probe's offered load is Tier-2's alone
// in a trace with Tier-2 rows (a 20-user trace at --cpu-mem-gb 1 moves
// 27 % of its bytes through the RAM tier), and both were "offered load".
func TestSearchProgressLive(t *testing.T) {
	f := &fakeProbes{clock: time.Unix(1e9, 0), serves: 8}
	var stdout, stderr bytes.Buffer
	prog := &setup.SearchProgress{W: &stderr, Live: true, Now: f.now, Max: 5, Window: 30 * time.Second}
	o := searchOptions(search.KindCapacity)
	o.search.Probes = 5
	if err := searchWith(o, mixedPlan(), 8, f.replay, prog, nil, true, &stdout); err != nil {
		t.Fatal(err)
	}
	out := stderr.String()
	for _, w := range []string{
		"\r\x1b[Kkvreplay: probe 1 of at most 5, 0s elapsed, speed=0.25x",
		"\r\x1b[Kkvreplay: probe 1 of at most 5, 30s elapsed, speed=0.25x: 12s of 30s, every tier's offered load 0.0100 GB/s",
		"\r\x1b[Kkvreplay: probe 2 of at most 5, 1m0s elapsed, speed=0.5x: offered load 0 GB/s, 0.0 requests/s: PASS",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in\n%q", w, out)
		}
	}
	// Nothing moved in any probe: no plateau (the windows reached nothing
	// measured), so the doubling goes on to the last probe.
	if f.calls != 5 || !strings.Contains(out, "kvreplay: search: no probe delivered an offered load up to --speed 4: ") {
		t.Errorf("%d probes of a system that moves nothing: %q", f.calls, out)
	}
}

// TestSearchCapacityStart starts a capacity search at a quarter of the
// trace's pace, or at --speed when given; --speed max is refused.
func TestSearchCapacityStart(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want float64
	}{{nil, 0.25}, {[]string{"--speed", "2"}, 2}} {
		o, err := parse(append([]string{"--search", "capacity", "x.csv"}, tt.args...), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		var speeds []float64
		once := func(cfg *replay.Config, _ func(replay.Progress)) (*schema.Result, error) {
			speeds = append(speeds, cfg.Speed)
			return &schema.Result{Complete: true}, nil
		}
		prog := &setup.SearchProgress{W: &bytes.Buffer{}, Now: time.Now, Max: 12}
		if err := searchWith(o, &replay.Plan{}, 0, once, prog, nil, true, &bytes.Buffer{}); err != nil || len(speeds) == 0 || speeds[0] != tt.want {
			t.Errorf("%v: speeds %v (%v), want from %v", tt.args, speeds, err, tt.want)
		}
	}
	if _, err := parse([]string{"--search", "capacity", "--speed", "max", "x.csv"}, &bytes.Buffer{}); cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), "--speed max") {
		t.Errorf("--speed max: %v", err)
	}
}

// TestSearchUsersNeedsPrescan: a users search samples each probe's users
// by QoS class from the prescan, so --no-prescan is refused (exit 2) at
// the flags, and a plan that only the sidecars made (their count of users,
// not their classes) before any probe runs: a probe of the first n users
// to appear would measure which classes come first (issue 23).
func TestSearchUsersNeedsPrescan(t *testing.T) {
	_, err := parse([]string{"--search", "users", "--no-prescan", "x.csv"}, &bytes.Buffer{})
	if cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), "--search users --no-prescan") {
		t.Errorf("--no-prescan: %v", err)
	}
	f := &fakeProbes{clock: time.Unix(1e9, 0), serves: 8}
	prog := &setup.SearchProgress{W: &bytes.Buffer{}, Now: f.now, Max: 12}
	var stdout bytes.Buffer
	err = searchWith(searchOptions(search.KindUsers), &replay.Plan{FromMeta: true}, 8, f.replay, prog, nil, true, &stdout)
	if cli.ExitCode(err) != 2 || f.calls != 0 || stdout.Len() != 0 || !strings.Contains(err.Error(), "--no-prescan") {
		t.Errorf("a plan from sidecars: exit %d (%v), %d probes, document %q", cli.ExitCode(err), err, f.calls, stdout.String())
	}
}

// TestSearchOfferedLoadOneUnit: a capacity search shows a probe's
// offered load (bytes over its elapsed time) in the unit its reason gives
// the peak in, GB/s (decimal) as every kvbench bandwidth, never MB/s or
// binary units beside it ("2.61 GiB/s" and "peak 2800.0 MB/s" for one
// figure, issue 23), and names it the offered load.
func TestSearchOfferedLoadOneUnit(t *testing.T) {
	f := &fakeProbes{clock: time.Unix(1e9, 0), serves: 8}
	once := func(cfg *replay.Config, progress func(replay.Progress)) (*schema.Result, error) {
		res, err := f.replay(cfg, progress)
		res.Tiers = []schema.TierTotals{{Tier: schema.TierNVMe.String(), ReadOfferedBps: 2.8e9}}
		return res, err
	}
	var stderr bytes.Buffer
	prog := &setup.SearchProgress{W: &stderr, Now: f.now, Max: 5}
	o := searchOptions(search.KindCapacity)
	o.search.Probes = 5
	if err := searchWith(o, mixedPlan(), 8, once, prog, nil, true, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out := stderr.String()
	if !strings.Contains(out, "speed=0.25x: offered load 2.80 GB/s, ") || !strings.Contains(out, "peak offered load 2.80 GB/s") ||
		strings.Contains(out, "iB/s") || strings.Contains(out, "MB/s") || strings.Contains(out, "bandwidth") {
		t.Errorf("stderr:\n%s", out)
	}
}

// TestSearchFitsDisk: a search whose plan needs more of --dir than it has
// free runs, with a warning that names the figures and what a full disk
// does to the search (its probes replay windows that may fit; the one
// that fills the disk stops it, done: false), where a replay is refused
// (exit 2); a search that does not fit memory is refused as a replay is.
func TestSearchFitsDisk(t *testing.T) {
	plan := func(disk, objects int64) *replay.Plan {
		return &replay.Plan{Scanned: true, Objects: objects, Used: [schema.NumTiers]bool{schema.TierNVMe: true},
			Peak: map[string]int64{"nvme": disk}, MaxObjectOf: map[string]int64{"nvme": 1 << 20}, PeakObjects: map[string]int64{"nvme": 1}}
	}
	for _, kind := range []string{search.KindCapacity, search.KindUsers} {
		var stderr bytes.Buffer
		o := searchOptions(kind)
		o.tiers.Dir, o.tiers.Stderr = t.TempDir(), &stderr
		if err := setup.CheckFits(&o.cfg, plan(1<<60, 1), &o.tiers); cli.ExitCode(err) != 2 {
			t.Fatalf("a replay of 1 EiB on %s: %v, want refused", o.tiers.Dir, err)
		}
		if err := searchFits(o, plan(1<<60, 1)); err != nil {
			t.Errorf("--search %s, 1 EiB on disk: %v, want a warning", kind, err)
		}
		if len(o.warnings) != 1 || !o.tiers.MayFill || !strings.Contains(o.warnings[0], "disk: the trace keeps 1.00 EiB live") ||
			!strings.Contains(o.warnings[0], "done: false") || !strings.Contains(stderr.String(), "kvreplay: warning: --search "+kind) {
			t.Errorf("--search %s: warnings %q, stderr %q", kind, o.warnings, stderr.String())
		}
		if err := searchFits(searchOptions(kind), plan(1<<20, 1<<50)); cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), "memory") {
			t.Errorf("--search %s, 2^50 objects: %v, want refused for memory", kind, err)
		}
	}
}

// TestSearchHelpOfferedLoad: --help says what a capacity search raises
// until it stops improving by its name, the offered load it delivers (bytes
// over the elapsed time), not a bandwidth, which is a device rate (issue
// 23).
func TestSearchHelpOfferedLoad(t *testing.T) {
	var out, errb bytes.Buffer
	if code := cli.Main("kvreplay", []string{"--help"}, &out, &errb, run); code != 0 {
		t.Fatalf("--help: exit %d: %s", code, errb.String())
	}
	help := strings.Join(strings.Fields(out.String()), " ")
	if !strings.Contains(help, "until the offered load it delivers (bytes over the elapsed time, in GB/s) stops improving") ||
		strings.Contains(help, "until bandwidth stops improving") {
		t.Errorf("--search in --help:\n%s", out.String())
	}
}

// TestSearchCapacityOneMeasure: a capacity search of a trace with Tier-2
// rows measures every probe on Tier-2's backend, also a probe whose window
// reached none (its offered load there is 0), never the RAM tier's bytes
// for one probe and Tier-2's for the next. The search of a 20-user trace
// made with --cpu-mem-gb 128 (Tier-2 from 3.8 s), 10 s probes at 1/1024,
// said "saturated from the first probe: ... -90.9 % (0.0412 GB/s to
// 0.00374 GB/s ...)": 0.0412 was Tier-1's, 0.00374 Tier-2's, and
// requests/s had doubled. The figures here are that run's. With every
// tier on NVMe (--tier-map Tier-1=nvme,Tier-2=nvme, the README's stress
// case), the measure is every tier's on it: Tier-2's alone left out 40 %
// of the NVMe bytes. The reason names the measure.
func TestSearchCapacityOneMeasure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tier1  string  // Tier-1's backend
		first  float64 // the first probe's offered load (--speed 0.25)
		reason string
		caps   string // the result's name of the nvme backend ("extent" for --layout extent); "": nvme
	}{
		{"default map", "ram", 0, "; offered load: Tier-2's reads and writes over each probe's elapsed time", ""},
		{"every tier on nvme", "nvme", 0.0412e9, "; offered load: the reads and writes of every tier on Tier-2's backend, nvme (Tier-1, Tier-2), over each probe's elapsed time", ""},
		// The result names a tier's backend as it reports itself (Caps),
		// not as --tier-map does: --layout extent's nvme tier is "extent".
		{"default map, --layout extent", "ram", 0, "; offered load: Tier-2's reads and writes over each probe's elapsed time", "extent"},
		{"every tier on nvme, --layout extent", "nvme", 0.0412e9, "; offered load: the reads and writes of every tier on Tier-2's backend, nvme (Tier-1, Tier-2), over each probe's elapsed time", "extent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeProbes{clock: time.Unix(1e9, 0), serves: 8}
			once := func(cfg *replay.Config, progress func(replay.Progress)) (*schema.Result, error) {
				res, err := f.replay(cfg, progress)
				tier2 := min(3.74e6*cfg.Speed/0.5, 1.5e7) // saturates from --speed 2
				if cfg.Speed < 0.5 {
					tier2 = 0
				}
				caps := func(t schema.Tier) string {
					if b := cfg.TierMap[t]; b != "nvme" || tc.caps == "" {
						return b
					}
					return tc.caps
				}
				res.Tiers = []schema.TierTotals{{Tier: schema.TierCPU.String(), Backend: caps(schema.TierCPU), ReadOfferedBps: 0.0412e9 * cfg.Speed / 0.25},
					{Tier: schema.TierNVMe.String(), Backend: caps(schema.TierNVMe), ReadBytes: int64(tier2 * 10), ReadOfferedBps: tier2}}
				return res, err
			}
			plan := mixedPlan()
			plan.Used[schema.TierCPU], plan.Used[schema.TierNVMe] = true, true
			o := searchOptions(search.KindCapacity)
			o.cfg.TierMap[schema.TierCPU] = tc.tier1
			var stdout bytes.Buffer
			prog := &setup.SearchProgress{W: &bytes.Buffer{}, Now: f.now, Max: 12}
			if err := searchWith(o, plan, 8, once, prog, nil, true, &stdout); err != nil {
				t.Fatal(err)
			}
			var d schema.SearchResult
			if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
				t.Fatal(err)
			}
			var loads []float64
			for _, p := range d.Probes {
				loads = append(loads, p.OfferedBps)
			}
			if loads[0] != tc.first || !strings.HasSuffix(d.Reason, tc.reason) {
				t.Errorf("offered loads %v: %s", loads, d.Reason)
			}
			if tc.tier1 == "ram" && (d.SaturatedFromFirstProbe || !d.Plateau || d.PeakOfferedBps != 1.5e7 || d.PeakSpeed != 4 || loads[1] != 3.74e6) {
				t.Errorf("offered loads %v: saturated from the first %v, plateau %v, peak %v at %v: %s", loads, d.SaturatedFromFirstProbe, d.Plateau, d.PeakOfferedBps, d.PeakSpeed, d.Reason)
			}
		})
	}
}

// TestSearchKeepsEveryProbesWarnings: the search document carries the
// warnings of every probe, each text once; it kept the first probe's
// alone, so what only a later probe met (here the closed loop's rows run
// out of their objects' order at 4 users) was in no document.
func TestSearchKeepsEveryProbesWarnings(t *testing.T) {
	f := &fakeProbes{clock: time.Unix(1e9, 0), serves: 3}
	once := func(cfg *replay.Config, progress func(replay.Progress)) (*schema.Result, error) {
		res, err := f.replay(cfg, progress)
		res.Warnings = []string{"SCALED RUN: every object is 0.00390625 of its trace size"}
		if cfg.Users == 4 {
			res.Warnings = append(res.Warnings, "--closed-loop: 3 rows ran before an earlier row of their object")
		}
		return res, err
	}
	var stdout bytes.Buffer
	prog := &setup.SearchProgress{W: &bytes.Buffer{}, Now: f.now, Max: 12}
	if err := searchWith(searchOptions(search.KindUsers), mixedPlan(), 8, once, prog, nil, true, &stdout); err != nil {
		t.Fatal(err)
	}
	var d schema.SearchResult
	if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	// Only the probes of 4 users gave the second: the line says how many.
	fours := len(slices.DeleteFunc(slices.Clone(f.users), func(u int) bool { return u != 4 }))
	want := []string{"SCALED RUN: every object is 0.00390625 of its trace size",
		fmt.Sprintf("%d of %d probes: --closed-loop: 3 rows ran before an earlier row of their object", fours, len(d.Probes))}
	if strings.Join(d.Warnings, "\n") != strings.Join(want, "\n") || fours == 0 {
		t.Errorf("probes of %v users: warnings %q, want %q", f.users, d.Warnings, want)
	}
}

// TestSearchWarningsOnceAKind: a warning every probe gives in its own
// figures (a closed loop's RAM arena, sized within the memory available
// as each probe starts) is one line of the search document, the sizes'
// range and how many probes gave it; a users search of the 8B trace had
// it once a probe, word for word but for the size.
func TestSearchWarningsOnceAKind(t *testing.T) {
	f := &fakeProbes{clock: time.Unix(1e9, 0), serves: 3}
	arena := func(mib int) string {
		return fmt.Sprintf("the RAM tier's arena of a closed loop, %d.00 MiB, holds every object its users put there; its first 3.91 MiB, the trace's peak, were prefaulted", mib)
	}
	once := func(cfg *replay.Config, progress func(replay.Progress)) (*schema.Result, error) {
		res, err := f.replay(cfg, progress)
		res.Warnings = []string{"SCALED RUN: every object is 0.00390625 of its trace size", arena(900 + 10*cfg.Users)}
		return res, err
	}
	var stdout bytes.Buffer
	prog := &setup.SearchProgress{W: &bytes.Buffer{}, Now: f.now, Max: 12}
	if err := searchWith(searchOptions(search.KindUsers), mixedPlan(), 8, once, prog, nil, true, &stdout); err != nil {
		t.Fatal(err)
	}
	var d schema.SearchResult
	if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	lo, hi := slices.Min(f.users), slices.Max(f.users)
	want := []string{"SCALED RUN: every object is 0.00390625 of its trace size",
		fmt.Sprintf("%d of %d probes, their figures least to most: the RAM tier's arena of a closed loop, %d.00 MiB to %d.00 MiB, holds every object its users put there; "+
			"its first 3.91 MiB, the trace's peak, were prefaulted", len(d.Probes), len(d.Probes), 900+10*lo, 900+10*hi)}
	if lo == hi || strings.Join(d.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("probes of %v users: warnings\n%s\nwant\n%s", f.users, strings.Join(d.Warnings, "\n"), strings.Join(want, "\n"))
	}
}

// TestSearchProbesWriteTheirOwnBytes: each probe of a search replays with
// its own data seed, the first with --seed's, so that no probe writes the
// bytes an earlier one wrote. Every probe wrote the same bytes under the
// same keys (at the same offsets of a --device under --layout extent), which
// a deduplicating store or a file system's nop-write serves without
// writing: the later probes measured that, not the device.
func TestSearchProbesWriteTheirOwnBytes(t *testing.T) {
	for _, kind := range []string{search.KindUsers, search.KindCapacity} {
		f := &fakeProbes{clock: time.Unix(1e9, 0), serves: 5}
		var seeds []uint64
		once := func(cfg *replay.Config, progress func(replay.Progress)) (*schema.Result, error) {
			seeds = append(seeds, cfg.Seed)
			return f.replay(cfg, progress)
		}
		o := searchOptions(kind)
		o.cfg.Seed = 42
		prog := &setup.SearchProgress{W: &bytes.Buffer{}, Now: f.now, Max: 12}
		if err := searchWith(o, mixedPlan(), 8, once, prog, nil, true, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		distinct := slices.Compact(slices.Sorted(slices.Values(seeds)))
		if len(seeds) < 3 || seeds[0] != 42 || len(distinct) != len(seeds) {
			t.Errorf("--search %s: the probes' data seeds %v: want each its own, the first --seed's (42)", kind, seeds)
		}
	}
}

// TestSearchProbeRefusedMidSearchExits1: a probe refused as the input's
// error after earlier probes measured (an S3 tier whose credentials
// expired an hour into the search; a check of this machine that a later,
// larger probe fails) stops the search as any probe that did not complete
// does (design section 6): its document written, not done, its answer a
// lower bound, exit status 1, not the 2 of bad usage, which said the
// command line was wrong after the search had measured with it. Refused
// at the first probe, when nothing was measured, it stays the input's
// error (exit 2).
func TestSearchProbeRefusedMidSearchExits1(t *testing.T) {
	for _, tc := range []struct {
		refuseAt, code, probes int
	}{{3, 1, 2}, {1, 2, 0}} {
		f := &fakeProbes{clock: time.Unix(1e9, 0), serves: 3}
		once := func(cfg *replay.Config, progress func(replay.Progress)) (*schema.Result, error) {
			if f.calls+1 == tc.refuseAt {
				f.calls++
				return nil, cli.Input(errors.New("s3: bucket kv: the credentials were rejected (403 ExpiredToken)"))
			}
			return f.replay(cfg, progress)
		}
		var stdout bytes.Buffer
		prog := &setup.SearchProgress{W: &bytes.Buffer{}, Now: f.now, Max: 12}
		err := searchWith(searchOptions(search.KindUsers), mixedPlan(), 8, once, prog, nil, true, &stdout)
		if cli.ExitCode(err) != tc.code || !strings.Contains(fmt.Sprint(err), "ExpiredToken") {
			t.Errorf("refused at probe %d: exit %d (%v), want %d", tc.refuseAt, cli.ExitCode(err), err, tc.code)
		}
		var d schema.SearchResult
		if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
			t.Fatalf("refused at probe %d: document: %v", tc.refuseAt, err)
		}
		if d.Done || !d.AnswerIsLowerBound || len(d.Probes) != tc.probes {
			t.Errorf("refused at probe %d: done %v, lower bound %v, %d probes: %s", tc.refuseAt, d.Done, d.AnswerIsLowerBound, len(d.Probes), d.Reason)
		}
	}
}

// TestSearchKeepsItsTrial: --trial names a search's document as it names
// a result (kvreplay --search users --system A --trial 2): it was
// accepted and then dropped, so three trials of one system's search read
// as three unnamed searches.
func TestSearchKeepsItsTrial(t *testing.T) {
	f := &fakeProbes{clock: time.Unix(1e9, 0), serves: 3}
	o := searchOptions(search.KindUsers)
	o.system, o.trial = "A", 2
	var stdout bytes.Buffer
	prog := &setup.SearchProgress{W: &bytes.Buffer{}, Quiet: true, Now: f.now, Max: 12}
	if err := searchWith(o, mixedPlan(), 8, f.replay, prog, []string{"--search", "users", "--system", "A", "--trial", "2"}, true, &stdout); err != nil {
		t.Fatal(err)
	}
	var d schema.SearchResult
	if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.System != "A" || d.Trial != 2 {
		t.Errorf("system %q, trial %d; want A, 2", d.System, d.Trial)
	}
}
