package uring

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestProbe checks that io_uring works on this machine. Where it does not,
// the error must say why and wrap ErrUnavailable; with io_uring_disabled
// at 0 only a seccomp-style refusal (EPERM, ENOSYS) is an acceptable
// reason to skip.
func TestProbe(t *testing.T) {
	err := Probe()
	if err == nil {
		return
	}
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Probe: %v does not wrap ErrUnavailable", err)
	}
	disabled, _ := os.ReadFile(disabledSysctl)
	if strings.TrimSpace(string(disabled)) == "0" && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.ENOSYS) {
		t.Fatalf("Probe with io_uring_disabled=0: %v", err)
	}
	t.Skipf("io_uring unavailable: %v", err)
}

func TestSetupHint(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		disabled string
		want     string
	}{
		{"enosys", unix.ENOSYS, "", "kernel built without io_uring"},
		{"sysctl 2", unix.EPERM, "2", "io_uring_disabled is 2"},
		{"sysctl 1", unix.EPERM, "1", "io_uring_disabled is 1"},
		{"seccomp", unix.EPERM, "0", "seccomp"},
		{"memlock", unix.ENOMEM, "0", "RLIMIT_MEMLOCK"},
		{"other", unix.EINVAL, "0", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := setupHint(tc.err, tc.disabled)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("setupHint(%v, %q) = %q, want it to contain %q", tc.err, tc.disabled, got, tc.want)
			}
		})
	}
}

func TestErrno(t *testing.T) {
	for _, tc := range []struct {
		res  int32
		want error
	}{
		{0, nil},
		{4096, nil},
		{-int32(unix.EBADF), syscall.EBADF},
		{-int32(unix.EAGAIN), syscall.EAGAIN},
		{-int32(unix.ECANCELED), syscall.ECANCELED},
	} {
		if got := Errno(tc.res); got != tc.want {
			t.Errorf("Errno(%d) = %v, want %v", tc.res, got, tc.want)
		}
	}
	if !errors.Is(Errno(-int32(unix.EAGAIN)), syscall.EAGAIN) {
		t.Error("Errno(-EAGAIN) does not match syscall.EAGAIN with errors.Is")
	}
}

// TestNewParams checks validation (every problem reported at once) and the
// sizes the kernel picks.
func TestNewParams(t *testing.T) {
	for _, tc := range []struct {
		p    Params
		want []string
	}{
		{Params{}, []string{"entries 0: must be between 1 and 32768"}},
		{Params{Entries: 40000}, []string{"entries 40000"}},
		{Params{Entries: 8, CQEntries: 4}, []string{"cq entries 4: must be 0 or between entries (8) and 65536"}},
		{Params{Entries: 0, CQEntries: 70000}, []string{"entries 0", "cq entries 70000"}},
	} {
		_, err := New(tc.p)
		if err == nil {
			t.Errorf("New(%+v): no error", tc.p)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("New(%+v) = %q, want it to contain %q", tc.p, err, w)
			}
		}
	}

	r := newRing(t, Params{Entries: 5})
	if r.SQEntries() != 8 || r.CQEntries() != 16 {
		t.Errorf("Entries 5: SQ %d, CQ %d entries, want 8 and 16", r.SQEntries(), r.CQEntries())
	}
	r = newRing(t, Params{Entries: 4, CQEntries: 100})
	if r.SQEntries() != 4 || r.CQEntries() != 128 {
		t.Errorf("Entries 4, CQEntries 100: SQ %d, CQ %d entries, want 4 and 128", r.SQEntries(), r.CQEntries())
	}
}

// TestDirectWriteRead writes blocks of several sizes with O_DIRECT from
// aligned memory, reads them back into other aligned memory and compares
// the bytes.
func TestDirectWriteRead(t *testing.T) {
	r := newRing(t, Params{Entries: 8})
	fd := openFile(t, filepath.Join(t.TempDir(), "direct"), unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT)
	sizes := []int{blockSize, 2 * blockSize, 64 * blockSize}
	total := 0
	for _, n := range sizes {
		total += n
	}
	src, dst := alignedBuf(t, total), alignedBuf(t, total)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range src {
		src[i] = byte(rng.Uint32())
	}

	off := 0
	for i, n := range sizes {
		if err := r.PrepWrite(fd, src[off:off+n], uint64(off), uint64(i)); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	expectAll(t, r, len(sizes), func(c CQE) int { return sizes[c.UserData] })

	off = 0
	for i, n := range sizes {
		if err := r.PrepRead(fd, dst[off:off+n], uint64(off), uint64(i)); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	expectAll(t, r, len(sizes), func(c CQE) int { return sizes[c.UserData] })
	if !bytes.Equal(src, dst) {
		t.Fatal("bytes read back differ from bytes written")
	}
}

// expectAll submits, waits for n completions and checks each has the
// result want returns for it.
func expectAll(t *testing.T, r *Ring, n int, want func(CQE) int) {
	t.Helper()
	if _, err := r.SubmitAndWait(uint32(n)); err != nil {
		t.Fatal(err)
	}
	got := r.Reap(func(c CQE) {
		if w := want(c); int(c.Res) != w {
			t.Errorf("request %d: result %d (%v), want %d", c.UserData, c.Res, Errno(c.Res), w)
		}
	})
	if got != n {
		t.Fatalf("reaped %d completions, want %d", got, n)
	}
}

// TestWrapAround pushes 10,000 O_DIRECT reads through an 8-entry ring in
// batches of random size, so the SQ and CQ indices wrap over a thousand
// times, and checks every completion arrives exactly once with the right
// block in its buffer. Buffers are reused as soon as their completion is
// consumed.
func TestWrapAround(t *testing.T) {
	const (
		total  = 10000
		blocks = 64
	)
	r := newRing(t, Params{Entries: 8})
	fd := openFile(t, patternFile(t, t.TempDir(), blocks), unix.O_RDONLY|unix.O_DIRECT)
	slots := r.CQEntries()
	mem := alignedBuf(t, slots*blockSize)
	free := make([]int, 0, slots) // buffer slots not in flight
	for i := range slots {
		free = append(free, i)
	}
	slotOf := make(map[uint64]int, slots)
	seen := make([]bool, total)
	rng := rand.New(rand.NewPCG(3, 4))
	next, done := 0, 0
	for done < total {
		batch := 1 + rng.IntN(8)
		for ; batch > 0 && next < total && len(free) > 0; batch-- {
			s := free[len(free)-1]
			blk := uint64(next % blocks)
			err := r.PrepRead(fd, mem[s*blockSize:(s+1)*blockSize], blk*blockSize, uint64(next))
			if errors.Is(err, ErrSQFull) || errors.Is(err, ErrCQFull) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			free = free[:len(free)-1]
			slotOf[uint64(next)] = s
			next++
		}
		wait := uint32(1 + rng.IntN(r.InFlight()))
		if _, err := r.SubmitAndWait(wait); err != nil {
			t.Fatal(err)
		}
		r.Reap(func(c CQE) {
			if c.UserData >= total || seen[c.UserData] {
				t.Fatalf("completion for request %d: unknown or seen twice", c.UserData)
			}
			seen[c.UserData] = true
			done++
			if c.Res != blockSize {
				t.Fatalf("request %d: result %d (%v), want %d", c.UserData, c.Res, Errno(c.Res), blockSize)
			}
			s := slotOf[c.UserData]
			delete(slotOf, c.UserData)
			if err := checkBlock(mem[s*blockSize:(s+1)*blockSize], c.UserData%blocks); err != nil {
				t.Fatalf("request %d: %v", c.UserData, err)
			}
			free = append(free, s)
		})
	}
	if r.InFlight() != 0 || *r.cqOverflow != 0 {
		t.Errorf("after the run: %d in flight, %d completions overflowed", r.InFlight(), *r.cqOverflow)
	}
	if wraps := r.sqeTail / r.sqEntries; wraps < 1000 {
		t.Errorf("submission ring wrapped %d times, want at least 1000", wraps)
	}
}

// TestShortRead checks per-request results at and past end of file: a
// read that crosses it returns the bytes before it, one at or past it
// returns 0, buffered and O_DIRECT alike.
func TestShortRead(t *testing.T) {
	const size = 2*blockSize + 1808
	path := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(path, bytes.Repeat([]byte{0xa5}, size), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []struct {
		name  string
		flags int
	}{{"buffered", unix.O_RDONLY}, {"direct", unix.O_RDONLY | unix.O_DIRECT}} {
		t.Run(mode.name, func(t *testing.T) {
			r := newRing(t, Params{Entries: 4})
			fd := openFile(t, path, mode.flags)
			mem := alignedBuf(t, 4*blockSize)
			offsets := []uint64{0, 2 * blockSize, 3 * blockSize, 8 * blockSize}
			want := []int{blockSize, 1808, 0, 0}
			for i, off := range offsets {
				if err := r.PrepRead(fd, mem[i*blockSize:(i+1)*blockSize], off, uint64(i)); err != nil {
					t.Fatal(err)
				}
			}
			expectAll(t, r, len(offsets), func(c CQE) int { return want[c.UserData] })
			if got := mem[blockSize : blockSize+1808]; !bytes.Equal(got, bytes.Repeat([]byte{0xa5}, 1808)) {
				t.Error("short read: bytes differ")
			}
		})
	}
}

// TestPerRequestErrors mixes requests that fail with ones that succeed in
// one submission: each failure is carried by its own completion only.
func TestPerRequestErrors(t *testing.T) {
	r := newRing(t, Params{Entries: 8})
	dir := t.TempDir()
	fd := openFile(t, patternFile(t, dir, 4), unix.O_RDONLY|unix.O_DIRECT)
	mem := alignedBuf(t, 8*blockSize)
	buf := func(i int) []byte { return mem[i*blockSize : (i+1)*blockSize] }
	type req struct {
		fd   int
		buf  []byte
		off  uint64
		want error
	}
	reqs := []req{
		{fd, buf(0), 0, nil},
		{-1, buf(1), 0, syscall.EBADF},
		{fd, buf(2), blockSize, nil},
		{math.MaxInt32, buf(3), 0, syscall.EBADF},
		{fd, buf(4), 1, syscall.EINVAL}, // O_DIRECT at a misaligned offset
		{fd, buf(5), 3 * blockSize, nil},
	}
	for i, q := range reqs {
		if err := r.PrepRead(q.fd, q.buf, q.off, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.SubmitAndWait(uint32(len(reqs))); err != nil {
		t.Fatal(err)
	}
	n := r.Reap(func(c CQE) {
		q := reqs[c.UserData]
		if err := Errno(c.Res); !errors.Is(err, q.want) || (q.want == nil) != (err == nil) {
			t.Errorf("request %d: result %d (%v), want %v", c.UserData, c.Res, err, q.want)
		}
		if q.want == nil {
			if c.Res != blockSize {
				t.Errorf("request %d: result %d, want %d", c.UserData, c.Res, blockSize)
			}
			if err := checkBlock(q.buf, q.off/blockSize); err != nil {
				t.Errorf("request %d: %v", c.UserData, err)
			}
		}
	})
	if n != len(reqs) {
		t.Fatalf("reaped %d completions, want %d", n, len(reqs))
	}
}

// scriptedEnter returns an enter hook that fails with errs in turn, then
// calls the kernel, counting calls.
func scriptedEnter(calls *int, errs ...error) enterFunc {
	return func(fd int, toSubmit, minComplete, flags uint32) (int, error) {
		*calls++
		if len(errs) > 0 {
			err := errs[0]
			errs = errs[1:]
			return 0, err
		}
		return sysEnter(fd, toSubmit, minComplete, flags)
	}
}

// TestEINTRRetried checks the retry loops with injected EINTRs: Submit,
// SubmitAndWait and WaitCQE all come back with the request done, having
// called io_uring_enter once per EINTR more.
func TestEINTRRetried(t *testing.T) {
	r := newRing(t, Params{Entries: 4})
	for _, tc := range []struct {
		name string
		do   func() error
	}{
		{"Submit", func() error {
			if n, err := r.Submit(); err != nil || n != 1 {
				return errors.Join(err, fmt.Errorf("submitted %d, want 1", n))
			}
			return nil
		}},
		{"SubmitAndWait", func() error {
			_, err := r.SubmitAndWait(1)
			return err
		}},
		{"WaitCQE", func() error {
			_, err := r.WaitCQE()
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			r.enter = scriptedEnter(&calls, unix.EINTR, unix.EINTR)
			defer func() { r.enter = sysEnter }()
			if err := r.PrepNop(7); err != nil {
				t.Fatal(err)
			}
			if err := tc.do(); err != nil {
				t.Fatal(err)
			}
			got := calls
			r.enter = sysEnter
			c, err := r.WaitCQE()
			if err != nil || c.UserData != 7 || c.Res != 0 {
				t.Fatalf("completion %+v, %v; want user data 7, result 0", c, err)
			}
			r.SeenCQE()
			if calls := got; calls != 3 {
				t.Errorf("%d calls to io_uring_enter, want 3 (two EINTRs, one success)", calls)
			}
		})
	}
}

// TestEINTRFromSignal blocks a thread in io_uring_enter on a pipe read and
// sends that thread signals: the kernel interrupts the wait with EINTR
// (Go's handlers use SA_RESTART, which io_uring_enter's wait ignores), and
// WaitCQE must resume waiting until the data arrives.
func TestEINTRFromSignal(t *testing.T) {
	r := newRing(t, Params{Entries: 4})
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	var eintrs atomic.Int32
	r.enter = func(fd int, toSubmit, minComplete, flags uint32) (int, error) {
		n, err := sysEnter(fd, toSubmit, minComplete, flags)
		if err == unix.EINTR {
			eintrs.Add(1)
		}
		return n, err
	}
	buf := make([]byte, 16)
	if err := r.PrepRead(p[0], buf, math.MaxUint64, 1); err != nil {
		t.Fatal(err)
	}
	tid := make(chan int)
	type result struct {
		c   CQE
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		c, err := r.WaitCQE()
		done <- result{c, err}
	}()
	thread := <-tid
	deadline := time.Now().Add(10 * time.Second)
	for eintrs.Load() < 3 && time.Now().Before(deadline) {
		if err := unix.Tgkill(unix.Getpid(), thread, unix.SIGURG); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case res := <-done:
		t.Fatalf("WaitCQE returned before the pipe had data: %+v, %v", res.c, res.err)
	default:
	}
	if _, err := unix.Write(p[1], []byte("hello")); err != nil {
		t.Fatal(err)
	}
	res := <-done
	runtime.KeepAlive(buf)
	if res.err != nil || res.c.Res != 5 || string(buf[:5]) != "hello" {
		t.Fatalf("WaitCQE: %+v, %v, buffer %q; want 5 bytes \"hello\"", res.c, res.err, buf[:5])
	}
	r.SeenCQE()
	if n := eintrs.Load(); n < 3 {
		t.Errorf("io_uring_enter saw %d EINTRs from 3 signals or more", n)
	}
}

// TestEnterErrors checks that EAGAIN and EBUSY from io_uring_enter reach
// the caller as ErrAgain and ErrBusy (matching the errno too), other
// errnos as themselves, and that the request stays queued for the next
// submission.
func TestEnterErrors(t *testing.T) {
	r := newRing(t, Params{Entries: 4})
	for _, tc := range []struct {
		errno    error
		sentinel error
	}{
		{unix.EAGAIN, ErrAgain},
		{unix.EBUSY, ErrBusy},
		{unix.EFAULT, nil},
	} {
		t.Run(tc.errno.Error(), func(t *testing.T) {
			calls := 0
			r.enter = scriptedEnter(&calls, tc.errno)
			defer func() { r.enter = sysEnter }()
			if err := r.PrepNop(9); err != nil {
				t.Fatal(err)
			}
			n, err := r.SubmitAndWait(1)
			if n != 0 || !errors.Is(err, tc.errno) || tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Fatalf("SubmitAndWait = %d, %v; want 0 and an error matching %v and %v", n, err, tc.errno, tc.sentinel)
			}
			for _, s := range []error{ErrAgain, ErrBusy} {
				if s != tc.sentinel && errors.Is(err, s) {
					t.Errorf("error %v matches %v too", err, s)
				}
			}
			if n, err := r.SubmitAndWait(1); n != 1 || err != nil {
				t.Fatalf("SubmitAndWait after the error = %d, %v; want the queued request submitted", n, err)
			}
			if c, ok := r.PeekCQE(); !ok || c.UserData != 9 {
				t.Fatalf("completion %+v (present %t), want user data 9", c, ok)
			}
			r.SeenCQE()
		})
	}
}

// TestRefusedSubmitWaits: when io_uring_enter refuses new requests
// (EAGAIN), SubmitAndWait still waits, as io_uring_enter(2) asks, for a
// completion of the requests the kernel holds before it returns ErrAgain,
// so a caller that submits again after it does not spin on the refusal
// (the uring engine's Wait did, a core at 100 % until memory came back).
// Before, it returned at once with nothing complete.
func TestRefusedSubmitWaits(t *testing.T) {
	r := newRing(t, Params{Entries: 4})
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := make([]byte, 8)
	if err := r.PrepRead(p[0], buf, math.MaxUint64, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	calls := 0
	r.enter = scriptedEnter(&calls, unix.EAGAIN)
	defer func() { r.enter = sysEnter }()
	if err := r.PrepNop(2); err != nil {
		t.Fatal(err)
	}
	var written atomic.Bool
	go func() {
		time.Sleep(50 * time.Millisecond)
		written.Store(true)
		unix.Write(p[1], []byte("hello"))
	}()
	n, err := r.SubmitAndWait(1)
	if n != 0 || !errors.Is(err, ErrAgain) {
		t.Fatalf("SubmitAndWait = %d, %v; want 0 and ErrAgain", n, err)
	}
	if c, ok := r.PeekCQE(); !written.Load() || !ok || c.UserData != 1 || c.Res != 5 {
		t.Fatalf("SubmitAndWait returned before the read in the kernel completed (written %t, completion %+v present %t)", written.Load(), c, ok)
	}
	r.SeenCQE()
	runtime.KeepAlive(buf)
	if n, err := r.SubmitAndWait(1); n != 1 || err != nil {
		t.Fatalf("SubmitAndWait after the refusal = %d, %v; want the no-op submitted", n, err)
	}
	if c, ok := r.PeekCQE(); !ok || c.UserData != 2 {
		t.Fatalf("completion %+v (present %t), want user data 2", c, ok)
	}
	r.SeenCQE()
}

// TestPipeReads documents io_uring's reads of an empty pipe: they wait for
// data (the kernel arms a poll) whether or not the pipe is O_NONBLOCK; a
// request with RWF_NOWAIT instead completes with -EAGAIN, which Errno maps
// to syscall.EAGAIN.
func TestPipeReads(t *testing.T) {
	for _, flags := range []int{0, unix.O_NONBLOCK} {
		t.Run(map[int]string{0: "blocking", unix.O_NONBLOCK: "nonblocking"}[flags], func(t *testing.T) {
			r := newRing(t, Params{Entries: 4})
			var p [2]int
			if err := unix.Pipe2(p[:], unix.O_CLOEXEC|flags); err != nil {
				t.Fatal(err)
			}
			defer unix.Close(p[0])
			defer unix.Close(p[1])
			buf := make([]byte, 16)

			if err := r.PrepRead(p[0], buf, math.MaxUint64, 1); err != nil {
				t.Fatal(err)
			}
			r.sqes[(r.sqeTail-1)&r.sqMask].opFlags = unix.RWF_NOWAIT
			c, err := r.WaitCQE()
			if err != nil || !errors.Is(Errno(c.Res), syscall.EAGAIN) {
				t.Fatalf("RWF_NOWAIT read of an empty pipe: %+v, %v; want result -EAGAIN", c, err)
			}
			r.SeenCQE()

			if err := r.PrepRead(p[0], buf, math.MaxUint64, 2); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Submit(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
			if c, ok := r.PeekCQE(); ok {
				t.Fatalf("read of an empty pipe completed: %+v (%v)", c, Errno(c.Res))
			}
			if _, err := unix.Write(p[1], []byte("abc")); err != nil {
				t.Fatal(err)
			}
			c, err = r.WaitCQE()
			if err != nil || c.UserData != 2 || c.Res != 3 || string(buf[:3]) != "abc" {
				t.Fatalf("read after a write: %+v, %v, %q; want 3 bytes \"abc\"", c, err, buf[:3])
			}
			r.SeenCQE()
		})
	}
}

// TestFixed round-trips data through WRITE_FIXED and READ_FIXED with
// registered buffers (whole and sub-slices) and registered-file indexes,
// and checks that a buffer outside the registered one fails its request
// with -EFAULT.
func TestFixed(t *testing.T) {
	r := newRing(t, Params{Entries: 8})
	dir := t.TempDir()
	other := openFile(t, filepath.Join(dir, "other"), unix.O_RDWR|unix.O_CREAT)
	fd := openFile(t, filepath.Join(dir, "fixed"), unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT)
	src, dst := alignedBuf(t, 4*blockSize), alignedBuf(t, 4*blockSize)
	for i := range 4 {
		fillBlock(src[i*blockSize:(i+1)*blockSize], uint64(i))
	}
	if err := r.RegisterBuffers([][]byte{src, dst}); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterFiles([]int{other, fd}); err != nil {
		t.Fatal(err)
	}
	r.SetFixedFile(true)
	const fixedFD = 1 // fd's index in the registered table

	if err := r.PrepWriteFixed(fixedFD, src[:2*blockSize], 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.PrepWriteFixed(fixedFD, src[2*blockSize:], 2*blockSize, 0, 1); err != nil {
		t.Fatal(err)
	}
	expectAll(t, r, 2, func(CQE) int { return 2 * blockSize })

	if err := r.PrepReadFixed(fixedFD, dst[blockSize:], blockSize, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.PrepReadFixed(fixedFD, dst[:blockSize], 0, 1, 1); err != nil {
		t.Fatal(err)
	}
	expectAll(t, r, 2, func(c CQE) int { return []int{3 * blockSize, blockSize}[c.UserData] })
	if !bytes.Equal(src, dst) {
		t.Fatal("bytes read back through fixed buffers differ from bytes written")
	}

	// dst is not inside registered buffer 0.
	if err := r.PrepReadFixed(fixedFD, dst[:blockSize], 0, 0, 5); err != nil {
		t.Fatal(err)
	}
	expectAll(t, r, 1, func(CQE) int { return -int(unix.EFAULT) })

	r.SetFixedFile(false)
	if err := r.UnregisterFiles(); err != nil {
		t.Fatal(err)
	}
	if err := r.UnregisterBuffers(); err != nil {
		t.Fatal(err)
	}
	if err := r.PrepReadFixed(fd, dst[:blockSize], 0, 0, 6); err != nil {
		t.Fatal(err)
	}
	expectAll(t, r, 1, func(CQE) int { return -int(unix.EFAULT) })

	for _, bad := range [][][]byte{nil, {src, nil}} {
		if err := r.RegisterBuffers(bad); err == nil {
			t.Errorf("RegisterBuffers(%d buffers, one empty or none): no error", len(bad))
		}
	}
}

// TestCQBudget checks the accounting that keeps the completion ring from
// overflowing: prepares stop with ErrSQFull when the submission ring is
// full and ErrCQFull when as many requests are in flight as the
// completion ring holds, even after the kernel has completed them, until
// they are consumed.
func TestCQBudget(t *testing.T) {
	r := newRing(t, Params{Entries: 4, CQEntries: 8})
	for i := range 4 {
		if err := r.PrepNop(uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.PrepNop(99); !errors.Is(err, ErrSQFull) {
		t.Fatalf("prepare into a full submission ring: %v, want ErrSQFull", err)
	}
	if n, err := r.Submit(); n != 4 || err != nil {
		t.Fatalf("Submit = %d, %v; want 4", n, err)
	}
	if got := r.SQSpace(); got != 4 {
		t.Errorf("SQSpace with 4 of 8 in flight = %d, want 4", got)
	}
	for i := 4; i < 8; i++ {
		if err := r.PrepNop(uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.SubmitAndWait(8); err != nil {
		t.Fatal(err)
	}
	if got := r.SQSpace(); got != 0 {
		t.Errorf("SQSpace with 8 of 8 completed but not consumed = %d, want 0", got)
	}
	if err := r.PrepNop(99); !errors.Is(err, ErrCQFull) {
		t.Fatalf("prepare with the completion ring's worth in flight: %v, want ErrCQFull", err)
	}
	if _, err := r.SubmitAndWait(9); !errors.Is(err, ErrNothingInFlight) {
		t.Errorf("SubmitAndWait(9) with 8 in flight: %v, want ErrNothingInFlight", err)
	}
	r.SeenCQE()
	if got := r.SQSpace(); got != 1 {
		t.Errorf("SQSpace after consuming one = %d, want 1", got)
	}
	if err := r.PrepNop(8); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SubmitAndWait(8); err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	r.Reap(func(c CQE) { ids = append(ids, c.UserData) })
	if want := []uint64{1, 2, 3, 4, 5, 6, 7, 8}; !equalIDs(ids, want) {
		t.Errorf("reaped %v, want %v", ids, want)
	}
	if r.InFlight() != 0 || *r.cqOverflow != 0 {
		t.Errorf("%d in flight, %d overflowed; want 0 and 0", r.InFlight(), *r.cqOverflow)
	}
}

func equalIDs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReapRefills checks that Reap hands completions over in order and
// that its callback may prepare new requests into the room they free.
func TestReapRefills(t *testing.T) {
	r := newRing(t, Params{Entries: 2, CQEntries: 2})
	for i := range 2 {
		if err := r.PrepNop(uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	const total = 100
	next, seen := 2, 0
	for seen < total {
		if _, err := r.SubmitAndWait(1); err != nil {
			t.Fatal(err)
		}
		r.Reap(func(c CQE) {
			if c.UserData != uint64(seen) {
				t.Fatalf("completion %d, want %d", c.UserData, seen)
			}
			seen++
			if next < total {
				if err := r.PrepNop(uint64(next)); err != nil {
					t.Fatalf("prepare from Reap's callback: %v", err)
				}
				next++
			}
		})
	}
}

// TestWaitNothingInFlight checks that waits which could never end fail
// instead of blocking.
func TestWaitNothingInFlight(t *testing.T) {
	r := newRing(t, Params{Entries: 2})
	if _, err := r.WaitCQE(); !errors.Is(err, ErrNothingInFlight) {
		t.Errorf("WaitCQE on an idle ring: %v, want ErrNothingInFlight", err)
	}
	if _, err := r.SubmitAndWait(1); !errors.Is(err, ErrNothingInFlight) {
		t.Errorf("SubmitAndWait(1) on an idle ring: %v, want ErrNothingInFlight", err)
	}
	if n, err := r.SubmitAndWait(0); n != 0 || err != nil {
		t.Errorf("SubmitAndWait(0) on an idle ring = %d, %v; want 0, nil", n, err)
	}
	if n, err := r.Submit(); n != 0 || err != nil {
		t.Errorf("Submit on an idle ring = %d, %v; want 0, nil", n, err)
	}
}

// idlePipeRead returns a Ring with a read of an idle pipe in flight, one
// that completes only when the test writes to the pipe (p[1]), and the
// read's buffer; the pipe is closed when the test ends.
func idlePipeRead(t *testing.T) (*Ring, [2]int, []byte) {
	t.Helper()
	requireURing(t)
	r, err := New(Params{Entries: 4})
	if err != nil {
		t.Fatal(err)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unix.Close(p[0])
		unix.Close(p[1])
	})
	buf := make([]byte, 8)
	if err := r.PrepRead(p[0], buf, math.MaxUint64, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	return r, p, buf
}

// TestClose checks that Close cancels a request that would never complete
// (a read of an idle pipe), drops one never submitted, returns promptly,
// and that the Ring then refuses everything with ErrClosed.
func TestClose(t *testing.T) {
	r, p, buf := idlePipeRead(t)
	if err := r.PrepNop(2); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked on a request in flight")
	}
	runtime.KeepAlive(buf)
	// The pipe read is gone: data written now stays in the pipe.
	if _, err := unix.Write(p[1], []byte("x")); err != nil {
		t.Fatal(err)
	}
	var got [1]byte
	if n, err := unix.Read(p[0], got[:]); n != 1 || err != nil {
		t.Errorf("pipe read after Close = %d, %v; want the byte the cancelled request did not take", n, err)
	}

	if err := r.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
	for name, err := range map[string]error{
		"PrepNop":    r.PrepNop(1),
		"PrepRead":   r.PrepRead(p[0], buf, 0, 1),
		"PrepWrite":  r.PrepWrite(p[1], buf, 0, 1),
		"Register":   r.RegisterFiles([]int{p[0]}),
		"Unregister": r.UnregisterBuffers(),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	if _, err := r.Submit(); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Close: %v, want ErrClosed", err)
	}
	if _, err := r.WaitCQE(); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitCQE after Close: %v, want ErrClosed", err)
	}
	if _, ok := r.PeekCQE(); ok || r.SQSpace() != 0 || r.Reap(func(CQE) {}) != 0 {
		t.Error("a closed Ring reports completions or space")
	}
	r.SeenCQE() // must not fault on the unmapped ring
}

// TestCloseCancelRefused: when the kernel refuses Close's cancel request
// (io_uring_enter says EAGAIN, short of memory), Close still waits for
// the requests in flight, so that none writes a buffer after it returns.
// Before, Close returned the error at once and the pipe read stayed in
// the kernel, its buffer the kernel's to write.
func TestCloseCancelRefused(t *testing.T) {
	r, p, buf := idlePipeRead(t)
	r.enter = func(fd int, toSubmit, minComplete, flags uint32) (int, error) {
		if toSubmit > 0 {
			return 0, unix.EAGAIN // the cancel request
		}
		return sysEnter(fd, toSubmit, minComplete, flags)
	}
	var written atomic.Bool
	go func() {
		time.Sleep(50 * time.Millisecond)
		written.Store(true)
		unix.Write(p[1], []byte("hello"))
	}()
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if !written.Load() || string(buf[:5]) != "hello" {
		t.Errorf("Close returned with the pipe read in flight (buffer %q)", buf[:5])
	}
	runtime.KeepAlive(buf)
}

// TestCoopTaskrun: a ring set up with CoopTaskrun works as any other, and
// a completion whose work waits for the submitting thread (a pipe read
// completed by a write from another thread) is posted by RunTaskwork.
func TestCoopTaskrun(t *testing.T) {
	r := newRing(t, Params{Entries: 4, CoopTaskrun: true})
	if !r.Coop() {
		t.Skip("the kernel set the ring up without COOP_TASKRUN (before Linux 5.19)")
	}
	// The request's work goes to the thread that submitted it: keep this
	// goroutine on one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := make([]byte, 16)
	if err := r.PrepRead(p[0], buf, math.MaxUint64, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	var wrote atomic.Int32 // 1 written, 2 failed
	go func() {
		runtime.LockOSThread() // another thread
		defer runtime.UnlockOSThread()
		if _, err := unix.Write(p[1], []byte("coop")); err != nil {
			wrote.Store(2)
			return
		}
		wrote.Store(1)
	}()
	// Spin in user space, out of the kernel, until the write is done.
	for spin := time.Now(); wrote.Load() == 0; {
		if time.Since(spin) > 5*time.Second {
			t.Fatal("the write did not happen in 5 s")
		}
	}
	if wrote.Load() == 2 {
		t.Fatal("write to the pipe failed")
	}
	// The completion is posted when this thread next enters the kernel:
	// TaskrunPending says so meanwhile (unless something entered it
	// already: a signal, a sleep).
	deadline := time.Now().Add(5 * time.Second)
	sawPending := false
	for {
		if r.TaskrunPending() {
			sawPending = true
			if err := r.RunTaskwork(); err != nil {
				t.Fatal(err)
			}
		}
		if c, ok := r.PeekCQE(); ok {
			if c.UserData != 7 || c.Res != 4 || string(buf[:4]) != "coop" {
				t.Fatalf("read: %+v, %q; want 4 bytes \"coop\"", c, buf[:4])
			}
			r.SeenCQE()
			t.Logf("the completion waited for this thread: %v", sawPending)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completion 5 s after the write (pending work: %v)", r.TaskrunPending())
		}
		time.Sleep(time.Millisecond)
	}
	if r.TaskrunPending() {
		t.Error("work still pending after the completion was reaped")
	}
	r.Close()
	if err := r.RunTaskwork(); !errors.Is(err, ErrClosed) {
		t.Errorf("RunTaskwork after Close = %v, want ErrClosed", err)
	}
	if r.TaskrunPending() {
		t.Error("a closed ring reports pending work")
	}
}
