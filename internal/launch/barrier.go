package launch

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/parsemsg"
)

// A start barrier: ranks that share a directory start together without a
// launcher. Each rank creates its ready file there, and waits until every
// rank's is there; all then start at one instant, startBarrierGrace after
// the last one's modification time, so that ranks that saw it a poll apart
// still start in step. A rank that gives up takes its file back so that no
// rank passes counting it (leave).
const (
	startBarrierPoll  = 100 * time.Millisecond
	startBarrierGrace = time.Second
	// staleSlack is how much older than the timeout another rank's ready
	// file may be before it is an earlier run's (clocks of the hosts
	// writing to a shared file system differ a little).
	staleSlack = time.Minute
	// rejoinWait is how long past its timeout a rank that took its ready
	// file back waits on (leave): every rank was there then, and is
	// ready within a poll or two, but one killed as it left.
	rejoinWait = time.Minute
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

// The names of a rank's files at the barrier: ready, and left, while it
// leaves.
const (
	readyPrefix = "kvreplay-ready."
	leftPrefix  = "kvreplay-left."
)

// readyName is rank's ready file in a run of ranks whose id is run (""
// when none is known): the run's size is in the name, so ranks started
// with different --ranks are told apart, and its id, so an earlier run's
// files are, whatever their age.
func readyName(rank, ranks int, run string) string {
	return readyPrefix + fileSuffix(rank, ranks, run)
}

// fileSuffix is "RANK-of-RANKS", and ".RUN" with a run id (runTag).
func fileSuffix(rank, ranks int, run string) string {
	s := strconv.Itoa(rank) + "-of-" + strconv.Itoa(ranks)
	if run != "" {
		s += "." + runTag(run)
	}
	return s
}

// runTag is a run id as a part of a file name: the id itself where it is
// short and of letters, digits, '.', '_' and '-' (a Slurm job step's
// 77.3, a Kubernetes uid), else its FNV-1a hash.
func runTag(run string) string {
	plain := len(run) <= 64
	for _, c := range run {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			plain = false
		}
	}
	if plain {
		return run
	}
	h := fnv.New64a()
	h.Write([]byte(run))
	return fmt.Sprintf("%016x", h.Sum64())
}

// Wait marks r's rank ready and waits for every rank of r.Ranks, then
// returns the instant they all start at (a second after the last was
// ready, on this host's clock: WaitUntil it). A ready file of this rank already there is an
// earlier run's: an error, since the barrier would pass at once (kvreplay
// removes nothing it did not make in this run); so is another rank's of
// another run id (r.Run), or of no run id where r has one, or one older
// than the timeout. Once all are ready, the
// ready files stay: their times record when each rank was ready. A rank
// that gives up (the timeout, ctx's end, an error) removes its ready file,
// and the directories Wait made for it if nothing else is in them, so that
// a rank arriving later does not count it ready and start without it; at
// its timeout it takes the file back first, and waits on if another rank
// may have counted it (leave). When ctx ends, Wait returns its cause.
func (b *Barrier) Wait(ctx context.Context, r Rank) (time.Time, error) {
	made := missingDirs(b.dir)
	mine := filepath.Join(b.dir, readyName(r.Rank, r.Ranks, r.Run))
	ready := false
	fail := func(format string, args ...any) (time.Time, error) {
		b.withdraw(mine, ready, made)
		return time.Time{}, fmt.Errorf("--start-barrier %s: "+format, append([]any{parsemsg.Arg(b.dir)}, args...)...)
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
		last, missing, err := b.scan(r.Ranks, r.Run, since)
		if err != nil {
			return fail("%w", err)
		}
		if len(missing) == 0 {
			return last.Add(startBarrierGrace - skew), nil
		}
		if now := b.now(); !now.Before(deadline) {
			back, err := b.leave(r, now.Before(deadline.Add(rejoinWait)))
			ready = back
			if err != nil {
				return fail("%w", err)
			}
			if !back {
				return fail("%d of %d ranks ready after %s (missing: %s): the others did not start, or do not share this directory", r.Ranks-len(missing), r.Ranks, b.timeout, joinInts(missing, 8))
			}
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

// leave withdraws r's ready file at its timeout, unless a rank may have
// passed the barrier counting it. Removing it outright raced with such a
// rank: one that listed the file just before it went started, and this
// one failed. So the file is first renamed to its left name (its time
// kept), which no rank counts, and then every other rank's file is looked
// for under either name. A rank that passes found every rank's ready file
// there at once (scan), and none of them leaves for good after that, since
// each finds all the others' in turn: so this one finds them all, takes
// its file back and waits on (true). When one is missing, no rank passed
// counting this one, and it removes its file. Past rejoinWait (rejoin
// false) it removes it whatever it finds: a rank killed as it left keeps
// its left file there.
func (b *Barrier) leave(r Rank, rejoin bool) (bool, error) {
	mine := filepath.Join(b.dir, readyName(r.Rank, r.Ranks, r.Run))
	left := filepath.Join(b.dir, leftPrefix+fileSuffix(r.Rank, r.Ranks, r.Run))
	if err := os.Rename(mine, left); err != nil {
		return false, err
	}
	if rejoin && b.allThere(r) {
		if err := os.Rename(left, mine); err != nil {
			os.Remove(left)
			return false, err
		}
		return true, nil
	}
	os.Remove(left)
	return false, nil
}

// allThere reports whether every rank of r's run but r has its file in the
// directory, ready or left. Each is looked up by name, not in a listing,
// which may miss a file renamed as it is read; and ready, left, then ready
// again, since a rank that takes its file back between the first two looks
// is in neither.
func (b *Barrier) allThere(r Rank) bool {
	there := func(name string) bool {
		_, err := os.Lstat(filepath.Join(b.dir, name))
		return !errors.Is(err, fs.ErrNotExist)
	}
	for q := range r.Ranks {
		ready, left := readyName(q, r.Ranks, r.Run), leftPrefix+fileSuffix(q, r.Ranks, r.Run)
		if q != r.Rank && !there(ready) && !there(left) && !there(ready) {
			return false
		}
	}
	return true
}

// scan returns the latest modification time of the ready files of a run of
// ranks whose id is run and the ranks whose file is missing. A ready file
// of another run id (or of none, where run is one) is an error: an earlier
// run's; so is one made before since; so is one of a run of another size:
// its rank was given another --ranks. The files are listed, then each is
// looked at: every rank counted was there when the listing ended.
func (b *Barrier) scan(ranks int, run string, since time.Time) (last time.Time, missing []int, err error) {
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
		n, tag, _ := strings.Cut(n, ".")
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
		if want := runOf(run); runOf(tag) != want {
			return last, nil, fmt.Errorf("%s is of %s, and this rank of %s: an earlier run's; give each run a new directory, or remove its kvreplay-ready.* files (the ranks of a run share an id: their launcher's job, or %s)",
				e.Name(), runOf(tag), want, runVar)
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

// runOf names the run of a ready file's tag, or of a run id, in a message.
func runOf(tag string) string {
	if tag == "" {
		return "no run id"
	}
	return "run " + runTag(tag)
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
