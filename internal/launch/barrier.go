package launch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A start barrier: ranks that share a directory start together without a
// launcher. Each rank creates its ready file there, and waits until every
// rank's is there; all then start at one instant, startBarrierGrace after
// the last one's modification time, so that ranks that saw it a poll apart
// still start in step.
const (
	startBarrierPoll  = 100 * time.Millisecond
	startBarrierGrace = time.Second
	// staleSlack is how much older than the timeout another rank's ready
	// file may be before it is an earlier run's (clocks of the hosts
	// writing to a shared file system differ a little).
	staleSlack = time.Minute
	// DefaultBarrierTimeout is how long a rank waits for the others
	// (--start-barrier-timeout): pods of a Job can take minutes to be
	// scheduled and pull their image.
	DefaultBarrierTimeout = 10 * time.Minute
)

// Barrier is --start-barrier DIR: a directory the ranks of a run share,
// where each marks itself ready and waits for the others. now and sleep
// are the clock (a test's fake one), readDir the directory's listing (a
// test's, to withdraw a file between it and its stat). A Barrier is used
// by one goroutine.
type Barrier struct {
	dir     string
	timeout time.Duration
	poll    time.Duration
	now     func() time.Time
	sleep   func(ctx context.Context, d time.Duration) error
	readDir func(dir string) ([]os.DirEntry, error)
}

// NewBarrier returns the barrier in dir (made at Wait if missing), where a
// rank waits at most timeout for the others.
func NewBarrier(dir string, timeout time.Duration) *Barrier {
	return &Barrier{dir: dir, timeout: timeout, poll: startBarrierPoll, now: time.Now, sleep: sleepCtx, readDir: os.ReadDir}
}

// readyName is rank's ready file in a run of ranks: the run's size is in
// the name, so ranks started with different --ranks are told apart.
func readyName(rank, ranks int) string {
	return "kvreplay-ready." + strconv.Itoa(rank) + "-of-" + strconv.Itoa(ranks)
}

// Wait marks r's rank ready and waits for every rank of r.Ranks, then
// returns the instant they all start at (a second after the last was
// ready, on this host's clock: WaitUntil it). A ready file of this rank already there is an
// earlier run's: an error, since the barrier would pass at once (kvreplay
// removes nothing it did not make in this run). Once all are ready, the
// ready files stay: their times record when each rank was ready. A rank
// that gives up (the timeout, ctx's end, an error) removes its ready file,
// and the directories Wait made for it if nothing else is in them, so that
// a rank arriving later does not count it ready and start without it. When
// ctx ends, Wait returns its cause.
func (b *Barrier) Wait(ctx context.Context, r Rank) (time.Time, error) {
	made := missingDirs(b.dir)
	mine := filepath.Join(b.dir, readyName(r.Rank, r.Ranks))
	ready := false
	fail := func(format string, args ...any) (time.Time, error) {
		b.withdraw(mine, ready, made)
		return time.Time{}, fmt.Errorf("--start-barrier %s: "+format, append([]any{b.dir}, args...)...)
	}
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return fail("%w", err)
	}
	before := b.now()
	f, err := os.OpenFile(mine, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	after := b.now()
	if errors.Is(err, fs.ErrExist) {
		return fail("%s exists, from an earlier run: give each run a new directory, or remove its kvreplay-ready.* files", filepath.Base(mine))
	}
	if err != nil {
		return fail("%w", err)
	}
	ready = true
	// Empty: its modification time, when it was made, is what the others
	// read, and a write after would move it under a rank that has read it.
	if err := f.Close(); err != nil {
		return fail("%w", err)
	}
	// A rank that waits gives up, and withdraws its file, after its
	// timeout: a ready file older than that, by the file system's clock,
	// is an earlier run's whose rank is gone (killed before it could
	// withdraw, or a run whose ranks all started), and must not let this
	// one start alone.
	info, err := os.Stat(mine)
	if err != nil {
		return fail("%w", err)
	}
	since := info.ModTime().Add(-b.timeout - staleSlack)
	skew := clockSkew(info.ModTime(), before, after)
	deadline := b.now().Add(b.timeout)
	for {
		last, missing, err := b.scan(r.Ranks, since)
		if err != nil {
			return fail("%w", err)
		}
		if len(missing) == 0 {
			return last.Add(startBarrierGrace - skew), nil
		}
		if !b.now().Before(deadline) {
			return fail("%d of %d ranks ready after %s (missing: %s): the others did not start, or do not share this directory", r.Ranks-len(missing), r.Ranks, b.timeout, joinInts(missing, 8))
		}
		if err := b.sleep(ctx, b.poll); err != nil {
			b.withdraw(mine, ready, made)
			return time.Time{}, err
		}
	}
}

// clockSkew is how far the file system's clock, which stamped this rank's
// ready file at mtime, is ahead of this host's, read at before and after
// around the file's making: the start instant, read from the ready files'
// times, is waited for on this host's clock. A skew
// within startBarrierGrace is none: the grace absorbs it, and a file
// system that keeps whole seconds (Lustre) would otherwise put each host's
// start up to a second apart; beyond it (a shared file system's server
// whose clock is minutes off the hosts'), the ranks would wait that long
// for the start, or start at once, not in step, all late.
func clockSkew(mtime, before, after time.Time) time.Duration {
	skew := mtime.Sub(before.Add(after.Sub(before) / 2))
	if skew.Abs() <= startBarrierGrace {
		return 0
	}
	return skew
}

// missingDirs returns dir and those of its parents that do not exist yet,
// innermost first: what MkdirAll of dir makes.
func missingDirs(dir string) []string {
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return made
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			return made
		}
	}
}

// withdraw undoes what a rank that gives up made at the barrier: its ready
// file (when ready: Wait made it), then each directory of made, innermost
// first, while it is empty (another rank's file keeps it and those above).
func (b *Barrier) withdraw(mine string, ready bool, made []string) {
	if ready {
		os.Remove(mine)
	}
	for _, d := range made {
		if os.Remove(d) != nil {
			return
		}
	}
}

// scan returns the latest modification time of the ready files of a run of
// ranks and the ranks whose file is missing. A ready file of a run of
// another size is an error: its rank was given another --ranks; so is one
// made before since: an earlier run's.
func (b *Barrier) scan(ranks int, since time.Time) (last time.Time, missing []int, err error) {
	entries, err := b.readDir(b.dir)
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
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // withdrawn since ReadDir: that rank is missing
		}
		if err != nil {
			return last, nil, err
		}
		// Its age first: an earlier run's file is that, whatever the
		// size of that run, and no --ranks of this one is to change.
		if t := info.ModTime(); t.Before(since) {
			return last, nil, fmt.Errorf("%s was made at %s, more than --start-barrier-timeout %s before this rank's: an earlier run's, whose rank no longer waits; "+
				"give each run a new directory, or remove its kvreplay-ready.* files (and give every rank the same --start-barrier-timeout)",
				e.Name(), t.UTC().Format(time.RFC3339), b.timeout)
		}
		if size != ranks {
			return last, nil, fmt.Errorf("%s: a rank of a run of %d ranks, this one has %d (give every rank the same --ranks)", e.Name(), size, ranks)
		}
		if rank < 0 || rank >= ranks {
			continue
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
