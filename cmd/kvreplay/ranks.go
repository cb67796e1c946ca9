package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// A multi-host run is launched by mpirun or srun: each process finds its
// rank in the launcher's environment (or --rank/--ranks), its paths from
// templates with {rank}, and its start from --start-at. kvbench has no
// protocol of its own between ranks: kvreport merge joins their results.

// launcherVars are the environment variables launchers set, in the order
// they are trusted: rank, size and local rank (empty when the launcher
// sets none).
var launcherVars = []struct{ rank, size, local string }{
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
	{"PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
	{"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
	{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
}

// rankInfo is where a process stands in its run.
type rankInfo struct {
	rank, ranks, local int
	source             string // "--rank", a variable's name, or "" alone
}

// findRank reads the rank from the flags (rank >= 0) or the environment.
func findRank(flagRank, flagRanks int, getenv func(string) string) (rankInfo, error) {
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
			return rankInfo{}, fmt.Errorf("%s=%s but %s=%q: the launcher's size is missing or below the rank", v.rank, r, v.size, getenv(v.size))
		}
		local, _ := strconv.Atoi(getenv(v.local))
		return rankInfo{rank: rank, ranks: size, local: local, source: v.rank}, nil
	}
	return rankInfo{ranks: 1}, nil
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
