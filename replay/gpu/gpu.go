// Package gpu owns the Tier-0 (GPU memory) replay backend: one arena of
// device memory allocated with cudaMalloc on one GPU, the memory tiers'
// placement rules over it (replay/arena: objects in pieces, never failing
// from fragmentation), and host-device copies through the CUDA
// runtime that internal/cuda loads at run time.
//
// A copy goes through a slot: a pinned host buffer (cudaHostAlloc, so
// the copy runs at the link's speed, as from pageable memory it does not)
// and an untimed event recorded after the copy. A write through the
// backend's WriteAt fills the slot's buffer and copies it host-to-device;
// a read copies device-to-host into it. An engine with pinned buffers of
// its own (replay/ioengine/devcopy, which serves the tier in a replay)
// copies from them instead, through CopyDirect, and the slot lends only
// its event. The slots serve the concurrent callers (the I/O engine's
// workers), and every copy of a direction is queued on that direction's
// stream, so the link carries one direction's copies one after another,
// as a plain cudaMemcpyAsync loop does, while the other direction's run
// beside them.
//
// What the copies measured is a direction's bytes over the time its
// stream was busy with them, on the device's clock, as a copy loop is
// timed: a stretch of back-to-back copies opens with a timed event
// recorded before a copy queued when none was in flight, and closes with
// one recorded when the last copy queued is seen done. A stretch so
// counts the time from before its first copy starts to after its last
// ends, never less than the link spent on them: the time a copy queued on
// an idle stream waits for the host's call to reach the device, and the
// poller's wait to see the last one done, are in it, and the gaps between
// stretches, while the host had no copy for the stream, are not. Timed
// events only ever run on an idle stream: on an H100, a timed event
// between back-to-back 1 MiB copies slowed them by 8 %, an untimed one
// not at all (internal/cuda's TestRealCopyShapes), so timing each copy
// between two events, as the tier did before, held its 1 MiB copies to
// about 90 % of a copy loop's rate at best, whatever else it did. A
// stretch also counts the gaps between its copies where the host queued
// the next copy after the last one ended but before the poller saw it
// done: a host that cannot keep the stream fed lowers the figure, which
// is so a lower bound on the rate the link carried the copies at.
//
// A goroutine per direction waits for the copies, in the order they were
// queued (the order the stream runs them), by polling their events
// (cudaEventQuery), and wakes each caller as its copy finishes. On an
// H100 in a virtual machine, a copy of 1 MiB queued on an idle stream and
// waited for took 62 to 72 us with the caller asleep in
// cudaEventSynchronize (a blocking-sync event) and 29 to 32 us polled
// (internal/cuda's TestRealCallCost). The poller spins while a copy is in
// flight, a core per direction, and sleeps while none is.
//
// It is tested against a fake CUDA runtime (internal/cuda's testdata) and
// ran on an H100 (bench/gpu-check.sh; the README's GPU section has the
// figures).
package gpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/replay/arena"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// Info describes the device behind a backend, for results.
type Info struct {
	Device  cuda.Device
	Driver  string
	Runtime string
	// Link is the device's PCIe link as sysfs reports it ("16.0 GT/s
	// PCIe x16"), empty where it does not.
	Link string
}

// Options configure a backend.
type Options struct {
	// Device is the GPU's index.
	Device int
	// Capacity is the arena's bytes, rounded up to arena.Align.
	Capacity int64
	// Slots is how many copies may run at once (the I/O engine's queue
	// depth); StageBytes each one's pinned staging buffer (the largest
	// copy the engine makes, its block size), made when the tier's own
	// ReadAt or WriteAt first uses the slot. A copy larger than
	// StageBytes goes through in pieces.
	Slots      int
	StageBytes int64
}

// Copies is what the backend's copies measured, per direction.
type Copies struct {
	H2D, D2H Direction
}

// Direction counts the copies of one direction and the time its stream
// was busy with them. Copies and bytes are counted with their stretch's
// time, when it closes: a copy whose stretch is still open is in none of
// them, and a stretch whose end cannot be timed (a failed query or
// record, which fails the copy that closes it) is in none, so that
// bytes are never counted without their time.
type Direction struct {
	Copies int64
	Bytes  int64
	BusyS  float64 // the stretches' device times, from their timed events
}

// GBps is the direction's bytes over the time its stream was busy with
// them, in GB/s (10^9): the rate the link carried the tier's copies at
// while it had them, comparable with a copy loop's, with what each
// stretch of copies cost to start and to see done, and the gaps where
// the host queued its next copy late, in it.
func (d Direction) GBps() float64 {
	if d.BusyS <= 0 {
		return 0
	}
	return float64(d.Bytes) / d.BusyS / 1e9
}

// Backend is the GPU tier: the arena and its copy statistics.
type Backend struct {
	*arena.Backend
	mem  *deviceMemory
	info Info
	opt  Options
}

// Copies returns what the copies so far measured.
func (b *Backend) Copies() Copies { return b.mem.copies() }

// New allocates the arena and the staging slots on GPU opt.Device of rt.
func New(rt *cuda.Runtime, opt Options) (*Backend, Info, error) {
	var info Info
	if opt.Capacity <= 0 {
		return nil, info, fmt.Errorf("gpu: capacity %d: must be positive", opt.Capacity)
	}
	if opt.Slots < 1 || opt.StageBytes < 1 {
		return nil, info, fmt.Errorf("gpu: %d staging slots of %d bytes: want at least one of one byte", opt.Slots, opt.StageBytes)
	}
	// The current device is the calling thread's: New's calls stay on one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d, err := rt.Device(opt.Device)
	if err != nil {
		return nil, info, fmt.Errorf("gpu: device %d: %w", opt.Device, err)
	}
	info.Device = d
	info.Link = pcieLink(sysfsPCI, d.PCIBusID)
	if drv, run, err := rt.Versions(); err == nil {
		info.Driver, info.Runtime = cuda.VersionString(drv), cuda.VersionString(run)
	}
	size := (opt.Capacity + arena.Align - 1) / arena.Align * arena.Align
	if uint64(size) > d.FreeBytes {
		return nil, info, fmt.Errorf("gpu: device %d (%s) has %d bytes free and the tier needs %d: use --size-scale, or a smaller trace",
			opt.Device, d.Name, d.FreeBytes, size)
	}
	base, err := rt.Malloc(uint64(size))
	if err != nil {
		return nil, info, fmt.Errorf("gpu: device %d: an arena of %d bytes: %w", opt.Device, size, err)
	}
	m := &deviceMemory{rt: rt, device: opt.Device, base: base, size: size, slots: make(chan *slot, opt.Slots)}
	for i := range m.queues {
		q := &m.queues[i]
		if q.stream, err = rt.NewStream(); err == nil {
			err = q.newEdges(rt)
		}
		if err != nil {
			m.Release()
			return nil, info, fmt.Errorf("gpu: device %d: a copy stream and its timing events: %w", opt.Device, err)
		}
	}
	m.poll(opt.Slots)
	for range opt.Slots {
		s, err := newSlot(rt, opt.StageBytes)
		if err != nil {
			m.Release()
			return nil, info, fmt.Errorf("gpu: device %d: staging (%d slots of %d bytes): %w", opt.Device, opt.Slots, opt.StageBytes, err)
		}
		m.slots <- s
		m.all = append(m.all, s)
	}
	return &Backend{Backend: arena.New("gpu", size, m), mem: m, info: info, opt: opt}, info, nil
}

// Describe says, for a result's tier path, which device the tier is on
// and what its copies measured so far (replay/setup's Describer).
func (b *Backend) Describe(pi *schema.PathInfo) {
	d := b.info.Device
	pi.Device = fmt.Sprintf("%s (PCI %s, driver %s, runtime %s)", d.Name, d.PCIBusID, b.info.Driver, b.info.Runtime)
	pi.Model = d.Name
	if pi.GPU == nil {
		pi.GPU = &schema.GPUPath{}
	}
	g := pi.GPU
	g.Name, g.PCIBusID, g.PCIeLink, g.Driver, g.Runtime = d.Name, d.PCIBusID, b.info.Link, b.info.Driver, b.info.Runtime
	g.Copies = fmt.Sprintf("host-to-device and device-to-host from the I/O engine's pinned buffers (the tier's own reads and writes through up to %d pinned staging buffers of %d KiB), in order on a stream per direction, timed by CUDA events around each stretch of back-to-back copies",
		b.opt.Slots, b.opt.StageBytes>>10)
	c := b.Copies()
	g.HostToDevice, g.DeviceToHost = c.H2D.path(), c.D2H.path()
}

// path is the direction as a result records it.
func (d Direction) path() schema.GPUDirection {
	return schema.GPUDirection{Copies: d.Copies, Bytes: d.Bytes, BusyS: d.BusyS, BusyGBps: d.GBps()}
}

// slot is the untimed event recorded after a copy, where the poller
// tells how the copy went, the copy's bytes, and a staging buffer of
// stage bytes, made on the slot's first staged copy: in a replay, devcopy
// copies from buffers of its own, and the staging buffers, pinned memory
// that stays resident, are never made.
type slot struct {
	mark  cuda.Event
	n     int64 // the bytes of the copy queued
	done  chan error
	stage int64
	buf   []byte
}

func newSlot(rt *cuda.Runtime, n int64) (s *slot, err error) {
	s = &slot{done: make(chan error, 1), stage: n}
	if s.mark, err = rt.NewMark(); err != nil {
		return nil, err
	}
	return s, nil
}

// free releases what the slot holds.
func (s *slot) free(rt *cuda.Runtime) error {
	var errs []error
	if s.mark != 0 {
		errs = append(errs, rt.DestroyEvent(s.mark))
	}
	if s.buf != nil {
		errs = append(errs, rt.FreeHost(s.buf))
	}
	return errors.Join(errs...)
}

// deviceMemory is an arena of device memory, copied through staging
// slots.
type deviceMemory struct {
	rt     *cuda.Runtime
	device int
	base   uintptr
	size   int64
	slots  chan *slot // free slots
	all    []*slot
	// The streams of the two directions, host-to-device first, each
	// with its poller.
	queues  [2]queue
	pollers sync.WaitGroup

	mu       sync.Mutex // guards h2d and d2h
	h2d, d2h Direction
	copied   atomic.Int64 // copies made, for tests
}

// Copy copies p to (write) or from the arena at off, through a slot.
func (m *deviceMemory) Copy(p []byte, off int64, write bool) error {
	return m.withSlot(func(s *slot) error {
		if s.buf == nil {
			// Pinned memory belongs to the current device's context.
			if err := m.onDevice(func() (err error) {
				s.buf, err = m.rt.HostAlloc(uint64(s.stage))
				return err
			}); err != nil {
				return fmt.Errorf("a staging buffer of %d bytes: %w", s.stage, err)
			}
		}
		for done := 0; done < len(p); {
			n := min(len(p)-done, len(s.buf))
			dev := m.base + uintptr(off) + uintptr(done)
			host := uintptr(unsafe.Pointer(unsafe.SliceData(s.buf)))
			if write {
				copy(s.buf, p[done:done+n])
			}
			if err := m.copyOn(s, dev, host, n, write); err != nil {
				return err
			}
			if !write {
				copy(p[done:done+n], s.buf[:n])
			}
			done += n
		}
		return nil
	})
}

// queue is a direction's stream and the slots of the copies queued on it
// that its poller has not yet seen finish, in the stream's order: a copy
// is queued before its slot's event, and the slot sent to the poller,
// under the lock.
type queue struct {
	mu       sync.Mutex
	stream   cuda.Stream
	inflight chan *slot
	// queued counts the copies queued and not yet seen done by the
	// poller, which takes the lock only when it counts the last one
	// down. A copy queued while no stretch is open (stretch false) opens
	// one, recording edges[open][0] before it, and the poller closes it,
	// recording edges[open][1], when it sees the last one done and none
	// has been queued since. Two pairs of timed events take turns, so
	// that the poller reads a stretch's time while the next one opens.
	queued  atomic.Int64
	stretch bool
	open    int
	edges   [2][2]cuda.Event
	// The open stretch's copies and bytes, the poller's only: counted
	// with its time when it closes.
	copies, bytes int64
}

// newEdges creates the queue's timed events.
func (q *queue) newEdges(rt *cuda.Runtime) error {
	for i := range q.edges {
		for j := range q.edges[i] {
			e, err := rt.NewEvent()
			if err != nil {
				return err
			}
			q.edges[i][j] = e
		}
	}
	return nil
}

// poll starts each direction's poller; Release stops them. A queue's
// channel holds a copy of every slot.
func (m *deviceMemory) poll(slots int) {
	for i := range m.queues {
		q := &m.queues[i]
		in := make(chan *slot, slots)
		q.inflight = in
		m.pollers.Add(1)
		go func() {
			defer m.pollers.Done()
			m.poller(q, i == 0, in)
		}()
	}
}

// poller waits for the copies of the slots sent on in (q's) in order,
// polling each one's event, and tells its slot how the copy went. It
// spins while a copy is in flight, on a thread of its own whose current
// device is the arena's, and sleeps on the channel while none is. When
// the copy seen done is the last one queued, it closes the stretch, and
// counts the stretch's copies with its time before it wakes that copy's
// caller: a caller that got its last copy back finds it counted.
func (m *deviceMemory) poller(q *queue, toDevice bool, in <-chan *slot) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	setErr := m.rt.SetDevice(m.device)
	for s := range in {
		err := m.wait(s.mark, setErr)
		if err == nil {
			q.copies++
			q.bytes += s.n
		}
		var edges [2]cuda.Event
		last := false
		if q.queued.Add(-1) == 0 {
			// The last copy queued, unless one is being queued now.
			q.mu.Lock()
			if last = q.queued.Load() == 0; last {
				edges = q.edges[q.open]
				q.open ^= 1
				q.stretch = false
				if err == nil {
					err = m.rt.Record(edges[1], q.stream)
				}
			}
			q.mu.Unlock()
		}
		if last {
			if err = m.wait(edges[1], err); err == nil {
				var busy float64
				if busy, err = m.rt.Elapsed(edges[0], edges[1]); err == nil {
					m.count(toDevice, q.copies, q.bytes, busy)
				}
			}
			q.copies, q.bytes = 0, 0
		}
		s.done <- err
	}
}

// yieldEvery is how many polls the poller makes between yields to other
// goroutines. A goroutine locked to its thread that yields hands its P to
// another thread and waits to be handed one back, two switches of
// threads: the poller yielded after each poll until 2026-11-27, which
// made it see each copy done late and slowed the host's side of every
// copy. 64 polls are 38-83 us on an H100's host (cudaEventQuery 0.6-1.3
// us), two to four 1 MiB copies.
const yieldEvery = 64

// wait polls until the work before e is done, unless err says the wait
// cannot be had; it returns err or the query's failure.
func (m *deviceMemory) wait(e cuda.Event, err error) error {
	for polls := 1; err == nil; polls++ {
		var done bool
		if done, err = m.rt.Done(e); done {
			break
		}
		if polls%yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return err
}

// queueOf returns the direction's queue.
func (m *deviceMemory) queueOf(toDevice bool) *queue {
	if toDevice {
		return &m.queues[0]
	}
	return &m.queues[1]
}

// withSlot runs fn with a free slot.
func (m *deviceMemory) withSlot(fn func(s *slot) error) (err error) {
	s := <-m.slots
	defer func() {
		if err != nil {
			// A copy may still be running after a failed call that
			// followed it: the slot's buffer is free only once the
			// streams are done with it.
			m.onDevice(func() error {
				for i := range m.queues {
					m.rt.SyncStream(m.queues[i].stream)
				}
				return nil
			})
		}
		m.slots <- s
	}()
	return fn(s)
}

// onDevice runs fn's CUDA calls on a thread whose current device is the
// arena's (the streams and the events belong to it), the thread held
// only while fn runs: a caller waiting for its copy waits as any
// goroutine does, and the poller that wakes it need not wake its thread.
func (m *deviceMemory) onDevice(fn func() error) error { return onDevice(m.rt, m.device, fn) }

// onDevice runs fn on a thread locked to the goroutine whose current
// device is device: what a CUDA call that belongs to a device's context
// needs (a thread with none would make one on device 0 for it).
func onDevice(rt *cuda.Runtime, device int, fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := rt.SetDevice(device); err != nil {
		return err
	}
	return fn()
}

// copyOn copies n bytes between the device address and host (the slot's
// buffer, or pinned memory) on the direction's stream, and waits for the
// poller to see it done.
func (m *deviceMemory) copyOn(s *slot, dev, host uintptr, n int, write bool) error {
	if err := m.enqueue(s, dev, host, n, write); err != nil {
		return err
	}
	return <-s.done
}

// enqueue queues the copy on the direction's stream, opening a stretch
// when none is in flight, with the slot's event after it, and hands it to
// the direction's poller.
func (m *deviceMemory) enqueue(s *slot, dev, host uintptr, n int, write bool) error {
	dst, src, kind := host, dev, cuda.DeviceToHost
	if write {
		dst, src, kind = dev, host, cuda.HostToDevice
	}
	q := m.queueOf(write)
	// The lock before the thread: a goroutine that waits for a lock
	// while it holds its thread makes two switches of threads to wake
	// (on an H100, with the lock taken second, the tier's copies waited
	// 157 us for it on average).
	q.mu.Lock()
	defer q.mu.Unlock()
	return m.onDevice(func() error {
		if !q.stretch {
			if err := m.rt.Record(q.edges[q.open][0], q.stream); err != nil {
				return err
			}
		}
		if err := m.rt.CopyAsync(dst, src, uint64(n), kind, q.stream); err != nil {
			return err
		}
		if err := m.rt.Record(s.mark, q.stream); err != nil {
			return err
		}
		// Open only once a copy is handed to the poller, which will
		// close it: a stretch opened for a copy that failed to queue
		// would stay open, and count the idle time until the next.
		q.stretch = true
		s.n = int64(n)
		q.queued.Add(1)
		q.inflight <- s
		return nil
	})
}

// count adds a closed stretch's copies, bytes and time to its direction.
func (m *deviceMemory) count(write bool, copies, bytes int64, busy float64) {
	m.mu.Lock()
	d := &m.d2h
	if write {
		d = &m.h2d
	}
	d.Copies += copies
	d.Bytes += bytes
	d.BusyS += busy
	m.mu.Unlock()
	m.copied.Add(copies)
}

func (m *deviceMemory) copies() Copies {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Copies{H2D: m.h2d, D2H: m.d2h}
}

// Release frees the slots and the arena, after every copy, on the
// arena's device.
func (m *deviceMemory) Release() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// The pollers stop first: they need no device, and a failure below
	// must not leave them waiting.
	for i := range m.queues {
		if q := &m.queues[i]; q.inflight != nil {
			close(q.inflight)
			q.inflight = nil
		}
	}
	m.pollers.Wait()
	// A failed cudaSetDevice is said, and the rest freed all the same:
	// returning at it left the arena, the pinned buffers, the streams and
	// the events to the process's end.
	errs := []error{m.rt.SetDevice(m.device)}
	for _, s := range m.all {
		errs = append(errs, s.free(m.rt))
	}
	m.all = nil
	for i := range m.queues {
		q := &m.queues[i]
		for _, pair := range q.edges {
			for _, e := range pair {
				if e != 0 {
					errs = append(errs, m.rt.DestroyEvent(e))
				}
			}
		}
		q.edges = [2][2]cuda.Event{}
		if q.stream != 0 {
			errs = append(errs, m.rt.DestroyStream(q.stream))
			q.stream = 0
		}
	}
	errs = append(errs, m.rt.Free(m.base))
	return errors.Join(errs...)
}

// Arena is a gpu backend's device memory as an engine that moves bytes
// to and from it itself sees it (replay/ioengine/gds).
type Arena struct {
	Runtime *cuda.Runtime
	Device  int
	Base    uintptr
	Size    int64
}

// ArenaOf returns the arena mem is, when it is a gpu backend's (the
// memory arena.Spanner's Arena and Span give).
func ArenaOf(mem arena.Memory) (Arena, bool) {
	m, ok := mem.(*deviceMemory)
	if !ok {
		return Arena{}, false
	}
	return Arena{Runtime: m.rt, Device: m.device, Base: m.base, Size: m.size}, true
}

// Pin pins n bytes of host memory at p (cudaHostRegister, portable) for
// copies with the arena's GPU, on a thread whose current device is the
// arena's: the registration belongs to the calling thread's context, and
// a thread with none would make one on device 0 for it.
func (a Arena) Pin(p uintptr, n uint64) error {
	return onDevice(a.Runtime, a.Device, func() error { return a.Runtime.HostRegister(p, n) })
}

// HostAlloc allocates n bytes of pinned host memory (cudaHostAlloc) on
// the arena's device, for an engine that fills and checks blocks where
// CopyDirect copies them; FreeHost frees it.
func (a Arena) HostAlloc(n int64) (b []byte, err error) {
	err = onDevice(a.Runtime, a.Device, func() error {
		b, err = a.Runtime.HostAlloc(uint64(n))
		return err
	})
	return b, err
}

// FreeHost frees memory from HostAlloc.
func (a Arena) FreeHost(b []byte) error {
	return onDevice(a.Runtime, a.Device, func() error { return a.Runtime.FreeHost(b) })
}

// Unpin undoes Pin of the memory at p, on the arena's device.
func (a Arena) Unpin(p uintptr) error {
	return onDevice(a.Runtime, a.Device, func() error { return a.Runtime.HostUnregister(p) })
}

// CopyDirect copies n bytes between host memory at host and the arena
// mem at off (toDevice: host to device), without a staging buffer, on a
// slot's stream, timed and counted as Copy's copies are: for host memory
// that is pinned already (cudaHostRegister). mem must be a gpu backend's.
func CopyDirect(mem arena.Memory, host uintptr, off int64, n int, toDevice bool) error {
	m, ok := mem.(*deviceMemory)
	if !ok {
		return errors.New("gpu: not a gpu arena")
	}
	return m.withSlot(func(s *slot) error {
		return m.copyOn(s, m.base+uintptr(off), host, n, toDevice)
	})
}

// Holds reports whether obj lives in a gpu backend's arena.
func Holds(obj backend.Object) bool {
	s, ok := obj.(arena.Spanner)
	if !ok {
		return false
	}
	_, ok = ArenaOf(s.Arena())
	return ok
}

// sysfsPCI is where Linux lists PCI devices.
var sysfsPCI = "/sys/bus/pci/devices"

// PCIeLink is the current PCIe link of the GPU at busID (Device's
// PCIBusID) as sysfs reports it ("32.0 GT/s PCIe x16"), "" where it does
// not.
func PCIeLink(busID string) string { return pcieLink(sysfsPCI, busID) }

// pcieLink reads the current link speed and width of the PCI device
// busID (CUDA's domain:bus:device, eight hex digits of domain) under
// root: "16.0 GT/s PCIe x16", or "" where sysfs does not say.
func pcieLink(root, busID string) string {
	parts := strings.Split(busID, ":")
	if len(parts) != 3 {
		return ""
	}
	dom := parts[0]
	if len(dom) > 4 {
		dom = dom[len(dom)-4:]
	}
	dir := filepath.Join(root, dom+":"+parts[1]+":"+parts[2]+".0")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	speed, width := read("current_link_speed"), read("current_link_width")
	if speed == "" || width == "" {
		return ""
	}
	return speed + " x" + width
}

var _ backend.Backend = (*Backend)(nil)
