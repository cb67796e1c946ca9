package extent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	alloc "github.com/kvbench/kvbench/internal/extent"

	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/replaytest"
)

func newExtent(t testing.TB, path string, opt Options) *Backend {
	t.Helper()
	b, err := New(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// directFS skips t unless dir's file system is one known to take O_DIRECT.
func directFS(t testing.TB, dir string) {
	t.Helper()
	switch fs := host.FSType(dir); fs {
	case "ext4", "xfs", "btrfs", "f2fs":
	default:
		t.Skipf("%s is on %s, not a file system known to take O_DIRECT", dir, fs)
	}
}

// image returns the path of a file that does not exist yet, in a fresh
// directory.
func image(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	return filepath.Join(dir, "kv.img")
}

func TestConformance(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		path := image(t)
		t.Cleanup(func() {
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Close left %s behind (%v)", path, err)
			}
		})
		return newExtent(t, path, Options{Size: 16 << 20, Direct: true})
	})
}

func TestConformanceFallback(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		return newExtent(t, image(t), Options{Size: 16 << 20, Direct: true, refuseDirect: true})
	})
}

func TestConformanceBuffered(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		return newExtent(t, image(t), Options{Size: 16 << 20})
	})
}

// TestConformanceDevice runs the suite on a loop device, where the test
// may make one.
func TestConformanceDevice(t *testing.T) {
	dev := loopDevice(t, 16<<20)
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		return newExtent(t, dev, Options{Direct: true, AllowDevice: true})
	})
}

// loopDevice attaches a loop device to a fresh file of size bytes and
// returns its path; the test's clean-up detaches it. It skips the test
// where it cannot (not root, no loop driver, no free device node).
func loopDevice(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a loop device needs root")
	}
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no loop devices: %v", err)
	}
	defer ctl.Close()
	backing, err := os.Create(filepath.Join(t.TempDir(), "backing"))
	if err != nil {
		t.Fatal(err)
	}
	defer backing.Close()
	if err := backing.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			t.Skipf("no free loop device: %v", err)
		}
		dev := fmt.Sprintf("/dev/loop%d", n)
		lf, err := os.OpenFile(dev, os.O_RDWR, 0)
		if err != nil {
			t.Skipf("loop device %d has no usable node: %v", n, err)
		}
		cfg := unix.LoopConfig{Fd: uint32(backing.Fd())}
		copy(cfg.Info.File_name[:], "kvbench-extent-test")
		err = unix.IoctlLoopConfigure(int(lf.Fd()), &cfg)
		if errors.Is(err, unix.EBUSY) {
			lf.Close() // taken meanwhile: try the next free one
			continue
		}
		if err != nil {
			lf.Close()
			t.Skipf("LOOP_CONFIGURE %s: %v", dev, err)
		}
		t.Cleanup(func() {
			if _, err := unix.IoctlRetInt(int(lf.Fd()), unix.LOOP_CLR_FD); err != nil {
				t.Errorf("detach %s: %v", dev, err)
			}
			lf.Close()
		})
		return dev
	}
	t.Skip("no loop device stayed free")
	return ""
}

// TestDevice checks what a device backend declares and that Close leaves
// the device alone.
func TestDevice(t *testing.T) {
	dev := loopDevice(t, 8<<20)
	b := newExtent(t, dev, Options{Direct: true, AllowDevice: true})
	c := b.Caps()
	if c.Name != "extent" || c.Capacity != 8<<20 || c.Align < 4096 || !c.Direct || len(c.Warnings) != 0 {
		t.Errorf("Caps() = %+v, want extent, Capacity %d, Direct, no warnings", c, 8<<20)
	}
	o, err := b.Open("k", 8192, true)
	if err != nil {
		t.Fatal(err)
	}
	p := replaytest.AlignedBuffer(8192, c.Align)
	replaytest.Fill(p, 1, 0)
	if _, err := o.WriteAt(p, 0); err != nil {
		t.Fatal(err)
	}
	// A second exclusive open of the device fails: it is held.
	if _, err := New(dev, Options{AllowDevice: true}); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("New of a device in use = %v, want EBUSY", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dev)
	if err != nil || fi.Mode().Type() != os.ModeDevice {
		t.Fatalf("after Close: %v, %v: the device is gone", fi, err)
	}
	// The bytes went to the device, at the object's offset (0: the first
	// object of an empty device).
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make([]byte, 8192)
	if _, err := f.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, p) {
		t.Error("the device does not hold the bytes written")
	}
	// Size limits the space used; more than the device is refused.
	b = newExtent(t, dev, Options{Size: 4 << 20, AllowDevice: true})
	if c := b.Caps().Capacity; c != 4<<20 {
		t.Errorf("Size 4 MiB of an 8 MiB device: Capacity %d", c)
	}
	b.Close()
	if _, err := New(dev, Options{Size: 16 << 20, AllowDevice: true}); err == nil || !strings.Contains(err.Error(), "the device has 8388608 bytes") {
		t.Errorf("Size 16 MiB of an 8 MiB device: %v", err)
	}
}

// TestDeviceRefused checks that a block device needs AllowDevice, before
// anything opens it. The device node is made in a temporary directory
// (with a device number nothing answers to) where the test may make one;
// block devices under /dev are tried too: refused, they are never opened.
func TestDeviceRefused(t *testing.T) {
	var devs []string
	node := filepath.Join(t.TempDir(), "fake-nvme0n1")
	if err := unix.Mknod(node, unix.S_IFBLK|0o600, int(unix.Mkdev(259, 1<<19))); err == nil {
		devs = append(devs, node)
	} else {
		t.Logf("mknod of a block device: %v: trying /dev only", err)
	}
	ents, _ := os.ReadDir("/dev")
	for _, e := range ents {
		if e.Type() == os.ModeDevice {
			devs = append(devs, filepath.Join("/dev", e.Name()))
			break
		}
	}
	if len(devs) == 0 {
		t.Skip("no block device to try: mknod refused and none under /dev")
	}
	for _, dev := range devs {
		_, err := New(dev, Options{Direct: true})
		if !errors.Is(err, ErrDevice) {
			t.Errorf("New(%q) = %v, want ErrDevice", dev, err)
			continue
		}
		want := "extent: " + dev + ": a raw block device: its data will be overwritten: pass --allow-device"
		if err.Error() != want {
			t.Errorf("New(%q):\n%s\nwant\n%s", dev, err, want)
		}
		// Through a link, the message names both.
		link := filepath.Join(t.TempDir(), "by-id")
		if err := os.Symlink(dev, link); err != nil {
			t.Fatal(err)
		}
		_, err = New(link, Options{})
		if want := "extent: " + link + " (" + dev + "): a raw block device"; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("New(%q) = %v, want %q...", link, err, want)
		}
	}
	if len(devs) > 0 && devs[0] == node {
		// Allowed, it is opened: nothing answers to that device number.
		if _, err := New(node, Options{AllowDevice: true}); err == nil || errors.Is(err, ErrDevice) || !strings.HasPrefix(err.Error(), "extent: ") {
			t.Errorf("New(%q, AllowDevice) = %v, want an extent: error from opening it", node, err)
		}
	}
}

func TestSystemPaths(t *testing.T) {
	for _, p := range []string{"/kv.img", "/etc/kv.img", "/etc/kvbench/kv.img", "/usr/local/kv.img", "/bin/kv", "/lib64/x/kv", "/boot/kv", "/proc/self/kv", "/sys/kv", "/dev/kv.img", "/dev/null", "/dev/zero", "/proc/self/mem"} {
		_, err := New(p, Options{Size: 1 << 20, Direct: true, AllowDevice: true})
		if !errors.Is(err, ErrSystemPath) {
			t.Errorf("New(%q) = %v, want ErrSystemPath", p, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "extent: ") {
			t.Errorf("New(%q): %q does not start with extent:", p, err)
		}
		if _, err := os.Stat(p); err == nil && !strings.HasPrefix(p, "/dev/") && !strings.HasPrefix(p, "/proc/") {
			t.Errorf("%s exists after a refused New", p)
		}
	}
	// A link into a system directory is one too.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(link, "kv.img"), filepath.Join(link, "sub", "kv.img")} {
		if _, err := New(p, Options{Size: 1 << 20}); !errors.Is(err, ErrSystemPath) {
			t.Errorf("New(%q) = %v, want ErrSystemPath", p, err)
		}
	}
	// /dev/shm is allowed.
	if host.FSType("/dev/shm") == "tmpfs" && unix.Access("/dev/shm", unix.W_OK) == nil {
		p := filepath.Join("/dev/shm", fmt.Sprintf("kvbench-extent-test-%d", os.Getpid()))
		t.Cleanup(func() { os.Remove(p) })
		b := newExtent(t, p, Options{Size: 1 << 20, Direct: true})
		c := b.Caps()
		if c.Direct || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "(tmpfs): memory file system") {
			t.Errorf("on tmpfs: Caps() = %+v, want buffered with a warning", c)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Close left %s (%v)", p, err)
		}
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		opt  Options
		msg  string
	}{
		{"", Options{Size: 1 << 20}, "extent: empty path"},
		{filepath.Join(dir, "new"), Options{}, "extent: " + dir + "/new: a new file needs a size"},
		{filepath.Join(dir, "neg"), Options{Size: -1}, "extent: " + dir + "/neg: size -1: must not be negative"},
		{dir, Options{Size: 1 << 20}, "extent: " + dir + ": a directory: the extent layout needs a file or a block device"},
		{fifo, Options{Size: 1 << 20}, "extent: " + fifo + ": a named pipe, not a regular file nor a block device"},
		{empty, Options{}, "extent: " + empty + ": an empty file: give a size"},
		{filepath.Join(dir, "missing", "kv.img"), Options{Size: 1 << 20}, "extent: open " + dir + "/missing/kv.img: no such file or directory"},
	} {
		_, err := New(tc.path, tc.opt)
		if err == nil || err.Error() != tc.msg {
			t.Errorf("New(%q, %+v) = %v, want %q", tc.path, tc.opt, err, tc.msg)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("failed News left files: %v", ents)
	}
}

// TestFile checks the file New makes: its size, preallocation, O_DIRECT,
// and what Close removes.
func TestFile(t *testing.T) {
	path := image(t)
	directFS(t, filepath.Dir(path))
	b := newExtent(t, path, Options{Size: 10<<20 + 1, Direct: true, Prewrite: true})
	c := b.Caps()
	want := int64(10<<20 + c.Align) // rounded up
	if c.Name != "extent" || c.Capacity != want || !c.Direct || len(c.Warnings) != 0 || c.Align < 4096 || c.Align&(c.Align-1) != 0 {
		t.Fatalf("Caps() = %+v, want extent, Capacity %d, Direct, no warnings", c, want)
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Size != want || st.Blocks*512 < want {
		t.Errorf("the file has %d bytes in %d blocks of 512, want %d bytes preallocated", st.Size, st.Blocks, want)
	}
	fl, err := unix.FcntlInt(b.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fl&unix.O_DIRECT == 0 {
		t.Errorf("the file is not open O_DIRECT: flags %#x", fl)
	}
	if b.Path() != path {
		t.Errorf("Path() = %q, want %q", b.Path(), path)
	}
	// Creating and removing objects changes nothing in the file system.
	for i := range 100 {
		o, err := b.Open(fmt.Sprint(i), 4096, true)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			o.Remove()
		}
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("objects made files: %v", ents)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left the file it created (%v)", err)
	}
}

func TestBuffered(t *testing.T) {
	path := image(t)
	b := newExtent(t, path, Options{Size: 1 << 20, Prewrite: true})
	defer b.Close()
	c := b.Caps()
	want := fmt.Sprintf("extent: %s (%s): buffered I/O requested: page cache in the numbers", path, host.FSType(path))
	if c.Direct || len(c.Warnings) != 1 || c.Warnings[0] != want {
		t.Fatalf("Caps() = %+v, want buffered with the warning\n%s", c, want)
	}
	if fl, _ := unix.FcntlInt(b.Fd(), unix.F_GETFL, 0); fl&unix.O_DIRECT != 0 {
		t.Error("buffered, yet the file is open O_DIRECT")
	}
}

func TestFallbackSimulated(t *testing.T) {
	path := image(t)
	b := newExtent(t, path, Options{Size: 1 << 20, Direct: true, refuseDirect: true, Prewrite: true})
	defer b.Close()
	c := b.Caps()
	want := fmt.Sprintf("extent: %s (%s): file system refuses O_DIRECT: buffered I/O, page cache in the numbers", path, host.FSType(path))
	if c.Direct || len(c.Warnings) != 1 || c.Warnings[0] != want {
		t.Fatalf("Caps() = %+v, want Direct false and the warning\n%s", c, want)
	}
	if fl, _ := unix.FcntlInt(b.Fd(), unix.F_GETFL, 0); fl&unix.O_DIRECT != 0 {
		t.Error("the fallback left the file O_DIRECT")
	}
}

// TestKeep checks that Keep leaves the file, that a later New reuses it
// (holding no objects: placement is not persisted) and never removes a
// file it did not create.
func TestKeep(t *testing.T) {
	path := image(t)
	b := newExtent(t, path, Options{Size: 1 << 20, Direct: true, Keep: true})
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != 1<<20 {
		t.Fatalf("Keep: %v, %v", fi, err)
	}
	// Reopened with its own size, then with a bigger one: extended.
	b = newExtent(t, path, Options{Direct: true})
	if c := b.Caps().Capacity; c != 1<<20 {
		t.Errorf("an existing file of 1 MiB: Capacity %d", c)
	}
	if _, err := b.Open("k", 4096, false); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Open of an object of a previous backend: %v, want ErrNotFound", err)
	}
	b.Close()
	b = newExtent(t, path, Options{Size: 2 << 20, Direct: true})
	if c := b.Caps().Capacity; c != 2<<20 {
		t.Errorf("Size 2 MiB of an existing file of 1 MiB: Capacity %d", c)
	}
	b.Close()
	if fi, err := os.Stat(path); err != nil || fi.Size() != 2<<20 {
		t.Errorf("Close removed or shrank a file it did not create: %v, %v", fi, err)
	}
}

// TestNeighbours writes distinct patterns to objects that lie next to each
// other in the file, and checks that each holds its own bytes, at its
// Offset in the file, and that failed writes spill into no neighbour.
func TestNeighbours(t *testing.T) {
	path := image(t)
	b := newExtent(t, path, Options{Size: 4 << 20, Direct: true})
	defer b.Close()
	blk := b.Caps().Align
	type obj struct {
		o    backend.Object
		size int64
		seed uint64
	}
	var objs []obj
	var end int64
	for i := range 12 {
		size := int64((1 + i%3) * blk)
		o, err := b.Open(fmt.Sprintf("n%d", i), size, true)
		if err != nil {
			t.Fatal(err)
		}
		// First fit in an empty file: objects are packed one after the
		// other.
		if off := o.(*Object).Offset(); off != end {
			t.Fatalf("object %d at %d, want %d", i, off, end)
		}
		end += size
		objs = append(objs, obj{o, size, uint64(i + 1)})
	}
	// Write all, the odd ones in reverse order of blocks.
	for _, x := range objs {
		p := replaytest.AlignedBuffer(blk, blk)
		for off := int64(0); off < x.size; off += int64(blk) {
			at := off
			if x.seed%2 == 0 {
				at = x.size - int64(blk) - off
			}
			replaytest.Fill(p, x.seed, at)
			if _, err := x.o.WriteAt(p, at); err != nil {
				t.Fatal(err)
			}
		}
		// A write across the end and one just past it fail.
		q := replaytest.AlignedBuffer(2*blk, blk)
		replaytest.Fill(q, 999, 0)
		if _, err := x.o.WriteAt(q, x.size-int64(blk)); err == nil {
			t.Fatal("a write across the end of an object succeeded")
		}
		if _, err := x.o.WriteAt(q[:blk], x.size); err == nil {
			t.Fatal("a write past the end of an object succeeded")
		}
	}
	// Read back through the objects, and through the file at Offset.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, x := range objs {
		want := make([]byte, x.size)
		replaytest.Fill(want, x.seed, 0)
		got := replaytest.AlignedBuffer(int(x.size), blk)
		if _, err := x.o.ReadAt(got, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("object %d does not hold its bytes", i)
		}
		raw := make([]byte, x.size)
		if _, err := f.ReadAt(raw, x.o.(*Object).Offset()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(raw, want) {
			t.Errorf("the file at object %d's Offset does not hold its bytes", i)
		}
	}
}

// TestStale checks that an Object whose object was removed or replaced can
// neither read, write nor remove what now lies in its extent.
func TestStale(t *testing.T) {
	b := newExtent(t, image(t), Options{Size: 1 << 20, Direct: true})
	defer b.Close()
	blk := b.Caps().Align
	old, err := b.Open("k", int64(blk), true)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := b.Open("k", int64(blk), false)
	// Replace k: the new object takes the freed extent.
	o, err := b.Open("k", int64(blk), true)
	if err != nil {
		t.Fatal(err)
	}
	if o.(*Object).Offset() != old.(*Object).Offset() {
		t.Fatalf("the replacement is at %d, not in the freed extent at %d", o.(*Object).Offset(), old.(*Object).Offset())
	}
	p := replaytest.AlignedBuffer(blk, blk)
	replaytest.Fill(p, 1, 0)
	if _, err := o.WriteAt(p, 0); err != nil {
		t.Fatal(err)
	}
	q := replaytest.AlignedBuffer(blk, blk)
	if _, err := old.WriteAt(q, 0); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("WriteAt through a replaced Object: %v, want ErrClosed", err)
	}
	if _, err := old.ReadAt(q, 0); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("ReadAt through a replaced Object: %v, want ErrClosed", err)
	}
	if err := old.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := other.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := o.ReadAt(q, 0); err != nil || !bytes.Equal(p, q) {
		t.Errorf("a stale Remove touched the replacement: %v", err)
	}
}

// TestRemoveDuringIO replaces objects while others read and write them,
// which the engine never does, and checks that every I/O either ran
// whole before the replacement or failed with ErrClosed, and that no
// stale write reached a new object (run with -race).
func TestRemoveDuringIO(t *testing.T) {
	b := newExtent(t, image(t), Options{Size: 4 << 20, Direct: true})
	defer b.Close()
	blk := b.Caps().Align
	const keys, rounds = 4, 200
	var wg sync.WaitGroup
	for k := range keys {
		key := fmt.Sprint(k)
		o, err := b.Open(key, int64(4*blk), true)
		if err != nil {
			t.Fatal(err)
		}
		cur := o
		var mu sync.Mutex
		wg.Go(func() {
			// The writer: stale writes of pattern 7 into whatever Object
			// it holds.
			p := replaytest.AlignedBuffer(blk, blk)
			replaytest.Fill(p, 7, 0)
			for range rounds {
				mu.Lock()
				o := cur
				mu.Unlock()
				if _, err := o.WriteAt(p, 0); err != nil && !errors.Is(err, backend.ErrClosed) {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			// The replacer: a new object, filled with zeros, replaces the
			// old one; the writer may still hold the old.
			zero := replaytest.AlignedBuffer(4*blk, blk)
			for range rounds {
				o, err := b.Open(key, int64(4*blk), true)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := o.WriteAt(zero, 0); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				cur = o
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if st := b.Stats(); st.Objects != keys || st.Used != int64(keys*4*blk) {
		t.Errorf("Stats() = %+v, want %d objects of %d bytes", st, keys, 4*blk)
	}
}

// TestChurn creates and removes many objects of mixed sizes in a small
// file: a create succeeds exactly when the allocator says it fits, and
// every object keeps its bytes throughout.
func TestChurn(t *testing.T) {
	b := newExtent(t, image(t), Options{Size: 8 << 20, Direct: true})
	defer b.Close()
	blk := int64(b.Caps().Align)
	rng := rand.New(rand.NewPCG(7, 8))
	type live struct {
		key  string
		size int64
		seed uint64
	}
	var objs []live
	p := replaytest.AlignedBuffer(int(blk), int(blk))
	want := make([]byte, blk)
	check := func(x live) {
		t.Helper()
		o, err := b.Open(x.key, x.size, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, off := range []int64{0, x.size - blk} {
			if _, err := o.ReadAt(p, off); err != nil {
				t.Fatal(err)
			}
			replaytest.Fill(want, x.seed, off)
			if !bytes.Equal(p, want) {
				t.Fatalf("object %s: block at %d lost its bytes", x.key, off)
			}
		}
		o.Close()
	}
	ops := 20000
	if testing.Short() {
		ops = 2000
	}
	var creates, refused int
	for i := range ops {
		if len(objs) > 0 && rng.IntN(2) == 0 {
			k := rng.IntN(len(objs))
			x := objs[k]
			check(x)
			o, err := b.Open(x.key, x.size, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := o.Remove(); err != nil {
				t.Fatal(err)
			}
			objs[k] = objs[len(objs)-1]
			objs = objs[:len(objs)-1]
			continue
		}
		// 4 KiB to 1 MiB, log-uniform.
		size := blk << rng.IntN(9)
		fits := b.Stats().LargestFree >= size
		x := live{fmt.Sprintf("c%d", i), size, uint64(i)}
		o, err := b.Open(x.key, size, true)
		creates++
		if !fits {
			refused++
			if !errors.Is(err, backend.ErrNoSpace) {
				t.Fatalf("create of %d bytes with %+v: %v, want ErrNoSpace", size, b.Stats(), err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("create of %d bytes with %+v: %v", size, b.Stats(), err)
		}
		for _, off := range []int64{0, size - blk} {
			replaytest.Fill(p, x.seed, off)
			if _, err := o.WriteAt(p, off); err != nil {
				t.Fatal(err)
			}
		}
		o.Close()
		objs = append(objs, x)
	}
	for _, x := range objs {
		check(x)
	}
	st := b.Stats()
	t.Logf("%d creates, %d refused for want of an extent; at the end %+v", creates, refused, st)
	if refused == 0 {
		t.Error("the file never filled up: the test proves nothing about ErrNoSpace")
	}
	for _, x := range objs {
		o, _ := b.Open(x.key, x.size, false)
		if err := o.Remove(); err != nil {
			t.Fatal(err)
		}
	}
	if st := b.Stats(); st.FreeExtents != 1 || st.Free != st.Capacity || st.Objects != 0 {
		t.Errorf("after removing everything: %+v, want one free extent of the whole file", st)
	}
}

func TestNoSpaceMessage(t *testing.T) {
	path := image(t)
	b := newExtent(t, path, Options{Size: 8 * 4096, Direct: true})
	defer b.Close()
	blk := int64(b.Caps().Align)
	if blk != 4096 {
		t.Skipf("alignment %d: the message below assumes 4096", blk)
	}
	objs := make([]backend.Object, 8)
	for i := range objs {
		o, err := b.Open(fmt.Sprint(i), blk, true)
		if err != nil {
			t.Fatal(err)
		}
		objs[i] = o
	}
	for _, i := range []int{1, 3, 6} {
		if err := objs[i].Remove(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := b.Open("big", 2*blk, true)
	want := `extent: create "big" of 8192 bytes: 12288 bytes free, largest free extent 4096 bytes (` + path + `, 32768 bytes): no space left`
	if !errors.Is(err, backend.ErrNoSpace) || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
	if st := b.Stats(); st != (Stats{Stats: alloc.Stats{Capacity: 8 * blk, Used: 5 * blk, Free: 3 * blk, LargestFree: blk, FreeExtents: 3}, Objects: 5}) {
		t.Errorf("Stats() = %+v", st)
	}
}

// TestFdOffset checks the optional capabilities an io_uring engine uses:
// bytes written through Fd at Offset are the object's.
func TestFdOffset(t *testing.T) {
	b := newExtent(t, image(t), Options{Size: 1 << 20, Direct: true})
	defer b.Close()
	blk := b.Caps().Align
	if _, err := b.Open("first", int64(blk), true); err != nil {
		t.Fatal(err)
	}
	obj, err := b.Open("k", int64(2*blk), true)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	x, ok := obj.(interface {
		Fd() uintptr
		Offset() int64
	})
	if !ok {
		t.Fatal("the Object has no Fd and Offset methods")
	}
	if x.Fd() != b.Fd() || x.Offset() != int64(blk) {
		t.Fatalf("Fd %d, Offset %d; want %d, %d", x.Fd(), x.Offset(), b.Fd(), blk)
	}
	p := replaytest.AlignedBuffer(blk, blk)
	replaytest.Fill(p, 3, int64(blk))
	if _, err := unix.Pwrite(int(x.Fd()), p, x.Offset()+int64(blk)); err != nil {
		t.Fatal(err)
	}
	q := replaytest.AlignedBuffer(blk, blk)
	if _, err := obj.ReadAt(q, int64(blk)); err != nil || !bytes.Equal(p, q) {
		t.Errorf("ReadAt does not see the bytes written through Fd at Offset: %v", err)
	}
}

// TestMisalignedBeforeSyscall checks that an I/O O_DIRECT would refuse
// fails with ErrMisaligned before reaching the kernel.
func TestMisalignedBeforeSyscall(t *testing.T) {
	path := image(t)
	directFS(t, filepath.Dir(path))
	b := newExtent(t, path, Options{Size: 1 << 20, Direct: true})
	defer b.Close()
	a := b.Caps().Align
	o, err := b.Open("k", int64(2*a), true)
	if err != nil {
		t.Fatal(err)
	}
	buf := replaytest.AlignedBuffer(2*a, a)
	for _, p := range [][]byte{buf[1 : 1+a], buf[512 : 512+a]} {
		if n, err := o.WriteAt(p, 0); n != 0 || !errors.Is(err, backend.ErrMisaligned) || errors.Is(err, syscall.EINVAL) {
			t.Errorf("WriteAt(misaligned buffer) = %d, %v; want 0, ErrMisaligned", n, err)
		}
		if n, err := o.ReadAt(p, 0); n != 0 || !errors.Is(err, backend.ErrMisaligned) {
			t.Errorf("ReadAt(misaligned buffer) = %d, %v; want 0, ErrMisaligned", n, err)
		}
	}
	if _, err := b.Open("odd", int64(a)+512, true); !errors.Is(err, backend.ErrMisaligned) {
		t.Errorf("create of a misaligned size: %v, want ErrMisaligned", err)
	}
}

// TestErrors checks the wrapping of system errors.
func TestErrors(t *testing.T) {
	o := &Object{b: &Backend{file: "/d/kv.img"}, key: "k"}
	for _, tc := range []struct {
		in    error
		is    []error
		isNot []error
		msg   string
	}{
		{&os.PathError{Op: "write", Path: "/d/kv.img", Err: syscall.ENOSPC}, []error{backend.ErrNoSpace, syscall.ENOSPC}, nil, `write "k" at offset 8192 (/d/kv.img at 1056768): no space left on device`},
		{syscall.EDQUOT, []error{backend.ErrNoSpace, syscall.EDQUOT}, nil, `write "k" at offset 8192 (/d/kv.img at 1056768): disk quota exceeded`},
		{&os.PathError{Op: "write", Path: "/d/kv.img", Err: syscall.EIO}, []error{syscall.EIO}, []error{backend.ErrNoSpace}, `write "k" at offset 8192 (/d/kv.img at 1056768): input/output error`},
		{io.EOF, []error{io.ErrUnexpectedEOF}, []error{io.EOF}, `write "k" at offset 8192 (/d/kv.img at 1056768): unexpected EOF`},
		{os.ErrClosed, []error{backend.ErrClosed}, nil, `write "k": closed`},
	} {
		err := o.ioErr("write", 8192, 1056768, tc.in)
		for _, target := range tc.is {
			if !errors.Is(err, target) {
				t.Errorf("%v: not %v", err, target)
			}
		}
		for _, target := range tc.isNot {
			if errors.Is(err, target) {
				t.Errorf("%v: is %v", err, target)
			}
		}
		if want := "extent: " + tc.msg; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	}
}

// TestPreallocateNoSpace checks that a file bigger than the file system
// can hold fails at New, leaving no file, with ErrNoSpace.
func TestPreallocateNoSpace(t *testing.T) {
	path := image(t)
	_, err := New(path, Options{Size: 1 << 60})
	if !errors.Is(err, backend.ErrNoSpace) && !errors.Is(err, syscall.EFBIG) {
		t.Errorf("New of 1 EiB = %v, want ErrNoSpace (or EFBIG)", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed New left %s (%v)", path, err)
	}
}
