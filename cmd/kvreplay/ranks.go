package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A multi-host run is launched by mpirun, srun or a Kubernetes Indexed Job:
// each process finds its rank in the launcher's environment (or
// --rank/--ranks), its paths from templates with {rank}, and its start from
// --start-at or --start-barrier. kvbench has no protocol of its own between
// ranks but files in a shared directory: kvreport merge joins their results.

// launcherVars are the environment variables launchers set, in the order
// they are trusted: rank, size and local rank (empty when the launcher
// sets none).
var launcherVars = []struct{ rank, size, local string }{
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
	{"PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
	{"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
	{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
	// A Kubernetes Indexed Job sets JOB_COMPLETION_INDEX in each pod, but
	// not the number of completions: --ranks gives it, or KVBENCH_RANKS,
	// set in the manifest from spec.completions. A pod is a host of its
	// own: its local rank is 0.
	{k8sIndex, k8sRanks, ""},
}

// The variables of a Kubernetes Indexed Job's ranks.
const (
	k8sIndex = "JOB_COMPLETION_INDEX"
	k8sRanks = "KVBENCH_RANKS"
)

// rankInfo is where a process stands in its run.
type rankInfo struct {
	rank, ranks, local int
	source             string // "--rank", a variable's name, or "" alone
}

// findRank reads the rank from the flags (rank >= 0) or the environment.
func findRank(flagRank, flagRanks int, getenv func(string) string) (rankInfo, error) {
	if idx := getenv(k8sIndex); flagRank < 0 && flagRanks >= 1 && idx != "" && !otherLauncher(getenv) {
		// An Indexed Job with --ranks (its spec.completions).
		rank, err := strconv.Atoi(idx)
		if err != nil || rank < 0 {
			return rankInfo{}, fmt.Errorf("%s=%q: not a rank", k8sIndex, idx)
		}
		if rank >= flagRanks {
			return rankInfo{}, fmt.Errorf("%s=%d: must be below --ranks %d (the Job's spec.completions)", k8sIndex, rank, flagRanks)
		}
		return rankInfo{rank: rank, ranks: flagRanks, source: k8sIndex}, nil
	}
	if flagRank >= 0 || flagRanks >= 0 {
		if flagRank < 0 || flagRanks < 1 {
			return rankInfo{}, errors.New("--rank and --ranks: give both, or neither (the launcher's environment then says)")
		}
		if flagRank >= flagRanks {
			return rankInfo{}, fmt.Errorf("--rank %d: must be below --ranks %d", flagRank, flagRanks)
		}
		return rankInfo{rank: flagRank, ranks: flagRanks, source: "--rank"}, nil
	}
	for _, v := range launcherVars {
		r := getenv(v.rank)
		if r == "" {
			continue
		}
		rank, err := strconv.Atoi(r)
		if err != nil || rank < 0 {
			return rankInfo{}, fmt.Errorf("%s=%q: not a rank", v.rank, r)
		}
		size, err := strconv.Atoi(getenv(v.size))
		if err != nil || size < 1 || rank >= size {
			if v.rank == k8sIndex {
				return rankInfo{}, fmt.Errorf("%s=%s but %s=%q: give the Job's spec.completions as --ranks, or set %s from it in the pod's env", v.rank, r, v.size, getenv(v.size), v.size)
			}
			return rankInfo{}, fmt.Errorf("%s=%s but %s=%q: the launcher's size is missing or below the rank", v.rank, r, v.size, getenv(v.size))
		}
		local := 0
		if v.local != "" {
			local, _ = strconv.Atoi(getenv(v.local))
		}
		return rankInfo{rank: rank, ranks: size, local: local, source: v.rank}, nil
	}
	return rankInfo{ranks: 1}, nil
}

// otherLauncher reports whether a launcher other than Kubernetes set its
// rank: mpirun inside a pod (an MPIJob) is trusted before the pod's index.
func otherLauncher(getenv func(string) string) bool {
	for _, v := range launcherVars {
		if v.rank != k8sIndex && getenv(v.rank) != "" {
			return true
		}
	}
	return false
}

// rankTemplate puts the rank into a path template ({rank}); under several
// ranks a path without {rank} would be shared by all of them, which is an
// error for what a rank writes.
func rankTemplate(flag, path string, ri rankInfo) (string, error) {
	if path == "" || path == "-" {
		return path, nil
	}
	if !strings.Contains(path, "{rank}") {
		if ri.ranks > 1 {
			return "", fmt.Errorf("%s %s: %d ranks would share it: put {rank} in it (e.g. %s)", flag, path, ri.ranks, example(flag))
		}
		return path, nil
	}
	return strings.ReplaceAll(path, "{rank}", strconv.Itoa(ri.rank)), nil
}

func example(flag string) string {
	switch flag {
	case "-o":
		return "-o out.{rank}.json"
	case "--device":
		return "--device /mnt/nvme0/kv.{rank}.extent"
	}
	return "--dir /mnt/nvme0/rank{rank}"
}

// Bounds of --start-at, against the clock when the flags are parsed: an
// instant further in the future is a typo (or milliseconds given as
// seconds), not a start that ranks wait a day for; one further in the past
// is a stale command line. Within startAtPast, a start more than
// startAtLate ago is a rank launched late: the replay starts at once, with
// a warning in the result and on stderr.
const (
	startAtFuture = 24 * time.Hour
	startAtPast   = time.Hour
	startAtLate   = 5 * time.Second
)

// parseStartAt parses --start-at, RFC 3339 or Unix seconds, and checks it
// against now: an instant more than startAtFuture after now, or more than
// startAtPast before it, is an error; one more than startAtLate before it
// comes with a warning.
func parseStartAt(s string, now time.Time) (at time.Time, warning string, err error) {
	if at, err = time.Parse(time.RFC3339Nano, s); err != nil {
		f, perr := strconv.ParseFloat(s, 64)
		if perr != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return time.Time{}, "", fmt.Errorf("--start-at %s: want RFC 3339 (2026-11-24T20:00:00Z) or Unix seconds", s)
		}
		// Checked as seconds before the conversion, which would overflow.
		nowS := float64(now.UnixNano()) / 1e9
		switch {
		case f > nowS+startAtFuture.Seconds():
			return time.Time{}, "", startAtErr(s, "after", startAtFuture, now)
		case f < nowS-startAtPast.Seconds():
			return time.Time{}, "", startAtErr(s, "before", startAtPast, now)
		}
		sec, frac := math.Modf(f)
		at = time.Unix(int64(sec), int64(frac*1e9))
	}
	switch d := at.Sub(now); {
	case d > startAtFuture:
		return time.Time{}, "", startAtErr(s, "after", startAtFuture, now)
	case d < -startAtPast:
		return time.Time{}, "", startAtErr(s, "before", startAtPast, now)
	case d < -startAtLate:
		warning = fmt.Sprintf("--start-at %s: %s ago when kvreplay started: the replay starts at once, not in step with ranks that started on time", s, (-d).Round(time.Millisecond))
	}
	return at, warning, nil
}

func startAtErr(s, rel string, bound time.Duration, now time.Time) error {
	return fmt.Errorf("--start-at %s: more than %s %s now (%s): want an instant within %s before and %s after it",
		s, shortDuration(bound), rel, now.UTC().Format(time.RFC3339), shortDuration(startAtPast), shortDuration(startAtFuture))
}

// shortDuration writes whole hours as "24h", not "24h0m0s".
func shortDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	return d.String()
}

// waitUntil sleeps until t, or until ctx ends.
func waitUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// envRankFlags is findRank with the flags as given ("" when not) and the
// process's environment.
func envRankFlags(rank, ranks string) (rankInfo, error) {
	num := func(flag, v string) (int, error) {
		if v == "" {
			return -1, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s %s: want a non-negative integer", flag, v)
		}
		return n, nil
	}
	r, err := num("--rank", rank)
	if err != nil {
		return rankInfo{}, err
	}
	n, err := num("--ranks", ranks)
	if err != nil {
		return rankInfo{}, err
	}
	return findRank(r, n, os.Getenv)
}

// A start barrier: ranks that share a directory start together without a
// launcher. Each rank creates its ready file there, and waits until every
// rank's is there; all then start at one instant, startBarrierGrace after
// the last one's modification time, so that ranks that saw it a poll apart
// still start in step.
const (
	startBarrierPoll  = 100 * time.Millisecond
	startBarrierGrace = time.Second
	// defaultStartBarrierTimeout is how long a rank waits for the others
	// (--start-barrier-timeout): pods of a Job can take minutes to be
	// scheduled and pull their image.
	defaultStartBarrierTimeout = 10 * time.Minute
)

// barrier is --start-barrier DIR. now and sleep are the clock (a test's
// fake one).
type barrier struct {
	dir     string
	timeout time.Duration
	poll    time.Duration
	now     func() time.Time
	sleep   func(ctx context.Context, d time.Duration) error
}

func newBarrier(dir string, timeout time.Duration) *barrier {
	return &barrier{dir: dir, timeout: timeout, poll: startBarrierPoll, now: time.Now, sleep: sleepCtx}
}

// readyName is rank's ready file in a run of ranks: the run's size is in
// the name, so ranks started with different --ranks are told apart.
func readyName(rank, ranks int) string {
	return "kvreplay-ready." + strconv.Itoa(rank) + "-of-" + strconv.Itoa(ranks)
}

// wait marks ri's rank ready and waits for every rank of ri.ranks, then
// returns the instant they all start at. A ready file of this rank already
// there is an earlier run's: an error, since the barrier would pass at
// once (kvreplay removes nothing it did not make in this run). The ready
// files stay: their times record when each rank was ready.
func (b *barrier) wait(ctx context.Context, ri rankInfo) (time.Time, error) {
	fail := func(format string, args ...any) (time.Time, error) {
		return time.Time{}, fmt.Errorf("--start-barrier %s: "+format, append([]any{b.dir}, args...)...)
	}
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return fail("%w", err)
	}
	mine := filepath.Join(b.dir, readyName(ri.rank, ri.ranks))
	f, err := os.OpenFile(mine, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fail("%s exists, from an earlier run: give each run a new directory, or remove its kvreplay-ready.* files", filepath.Base(mine))
	}
	if err != nil {
		return fail("%w", err)
	}
	// Empty: its modification time, when it was made, is what the others
	// read, and a write after would move it under a rank that has read it.
	if err := f.Close(); err != nil {
		return fail("%w", err)
	}
	deadline := b.now().Add(b.timeout)
	for {
		last, missing, err := b.scan(ri.ranks)
		if err != nil {
			return fail("%w", err)
		}
		if len(missing) == 0 {
			return last.Add(startBarrierGrace), nil
		}
		if !b.now().Before(deadline) {
			return fail("%d of %d ranks ready after %s (missing: %s): the others did not start, or do not share this directory", ri.ranks-len(missing), ri.ranks, b.timeout, joinInts(missing, 8))
		}
		if err := b.sleep(ctx, b.poll); err != nil {
			return time.Time{}, err
		}
	}
}

// scan returns the latest modification time of the ready files of a run of
// ranks and the ranks whose file is missing. A ready file of a run of
// another size is an error: its rank was given another --ranks.
func (b *barrier) scan(ranks int) (last time.Time, missing []int, err error) {
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return last, nil, err
	}
	seen := make([]bool, ranks)
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), "kvreplay-ready.")
		if !ok {
			continue
		}
		r, n, ok := strings.Cut(name, "-of-")
		rank, err1 := strconv.Atoi(r)
		size, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		if size != ranks {
			return last, nil, fmt.Errorf("%s: a rank of a run of %d ranks, this one has %d (give every rank the same --ranks)", e.Name(), size, ranks)
		}
		if rank < 0 || rank >= ranks {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return last, nil, err
		}
		seen[rank] = true
		if t := info.ModTime(); t.After(last) {
			last = t
		}
	}
	for r, ok := range seen {
		if !ok {
			missing = append(missing, r)
		}
	}
	return last, missing, nil
}

// joinInts lists up to most numbers, then how many more.
func joinInts(v []int, most int) string {
	var b strings.Builder
	for i, n := range v {
		if i == most {
			fmt.Fprintf(&b, " and %d more", len(v)-most)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// sleepCtx sleeps for d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
