// Package gpu owns the Tier-0 (GPU memory) replay backend: one arena of
// device memory allocated with cudaMalloc on one GPU, the memory tiers'
// placement rules over it (replay/arena: objects in pieces, never failing
// from fragmentation), and host-device copies through the CUDA
// runtime that internal/cuda loads at run time.
//
// A copy goes through a slot: a pinned host buffer (cudaHostAlloc, so
// the copy runs at the link's speed, as from pageable memory it does not)
// and two events. A write through the backend's WriteAt fills the slot's
// buffer and copies it host-to-device; a read copies device-to-host into
// it. An engine with pinned buffers of its own (replay/ioengine/devcopy,
// which serves the tier in a replay) copies from them instead, through
// CopyDirect, and the slot lends only its events. The slots serve the
// concurrent callers (the I/O engine's workers), and every copy of a
// direction is queued on that direction's stream between its slot's
// events, so the link carries one direction's copies one after another,
// as a plain cudaMemcpyAsync loop does, while the other direction's run
// beside them. A copy's events time it alone on the device, not its wait
// behind the others, and Copies adds them up per direction: the bytes
// over that sum are the rate the link carried the tier's copies while it
// was busy with them, comparable with a copy loop's, beside the replay's
// wall-clock latencies.
//
// A goroutine per direction waits for the copies, in the order they were
// queued (the order the stream runs them), by polling their end events
// (cudaEventQuery), and wakes each caller as its copy finishes. On an
// H100 in a virtual machine, a copy of 1 MiB queued on an idle stream and
// waited for took 62 to 72 us with the caller asleep in
// cudaEventSynchronize (a blocking-sync event) and 29 to 32 us polled
// (internal/cuda's TestRealCallCost, with one untimed event after the
// copy; the tier records two timed ones, 2 to 4 us each on the host).
// The poller spins while a copy is in flight, a core per direction, and
// sleeps while none is.
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

// Direction counts the copies of one direction and their device time.
type Direction struct {
	Copies  int64
	Bytes   int64
	DeviceS float64 // the sum of the copies' times between their events
}

// GBps is the direction's bytes over the sum of its copies' device times,
// in GB/s (10^9). A direction's copies run one after another on its
// stream, so the sum is the time the stream spent copying and this is the
// rate the link carried them at (the time a copy waited for the host to
// queue it included), not slowed by the copies queued beside it.
func (d Direction) GBps() float64 {
	if d.DeviceS <= 0 {
		return 0
	}
	return float64(d.Bytes) / d.DeviceS / 1e9
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
		if m.queues[i].stream, err = rt.NewStream(); err != nil {
			m.Release()
			return nil, info, fmt.Errorf("gpu: device %d: a copy stream: %w", opt.Device, err)
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
	g.Copies = fmt.Sprintf("host-to-device and device-to-host from the I/O engine's pinned buffers (the tier's own reads and writes through up to %d pinned staging buffers of %d KiB), in order on a stream per direction, each copy timed by CUDA events",
		b.opt.Slots, b.opt.StageBytes>>10)
	c := b.Copies()
	g.HostToDevice, g.DeviceToHost = c.H2D.path(), c.D2H.path()
}

// path is the direction as a result records it.
func (d Direction) path() schema.GPUDirection {
	return schema.GPUDirection{Copies: d.Copies, Bytes: d.Bytes, DeviceS: d.DeviceS, CopyGBps: d.GBps()}
}

// slot is the events that time a copy, where the poller tells how the
// copy went, and a staging buffer of stage bytes, made on the slot's
// first staged copy: in a replay, devcopy copies from buffers of its own,
// and the staging buffers, pinned memory that stays resident, are never
// made.
type slot struct {
	start, stop cuda.Event
	done        chan copied
	stage       int64
	buf         []byte
}

// copied is what the poller tells of a copy: its device time, or why it
// could not tell.
type copied struct {
	s   float64
	err error
}

func newSlot(rt *cuda.Runtime, n int64) (s *slot, err error) {
	s = &slot{done: make(chan copied, 1), stage: n}
	if s.start, err = rt.NewEvent(); err == nil {
		s.stop, err = rt.NewEvent()
	}
	if err != nil {
		s.free(rt)
		return nil, err
	}
	return s, nil
}

// free releases what the slot holds.
func (s *slot) free(rt *cuda.Runtime) error {
	var errs []error
	if s.stop != 0 {
		errs = append(errs, rt.DestroyEvent(s.stop))
	}
	if s.start != 0 {
		errs = append(errs, rt.DestroyEvent(s.start))
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
			b, err := m.rt.HostAlloc(uint64(s.stage))
			if err != nil {
				return fmt.Errorf("a staging buffer of %d bytes: %w", s.stage, err)
			}
			s.buf = b
		}
		for done := 0; done < len(p); {
			n := min(len(p)-done, len(s.buf))
			dev := m.base + uintptr(off) + uintptr(done)
			host := uintptr(unsafe.Pointer(unsafe.SliceData(s.buf)))
			if write {
				copy(s.buf, p[done:done+n])
			}
			t, err := m.copyOn(s, dev, host, n, write)
			if err != nil {
				return err
			}
			if !write {
				copy(p[done:done+n], s.buf[:n])
			}
			m.count(write, n, t)
			done += n
		}
		return nil
	})
}

// queue is a direction's stream and the slots of the copies queued on it
// that its poller has not yet seen finish, in the stream's order: a copy
// is queued between its slot's events, and the slot sent to the poller,
// under the lock.
type queue struct {
	mu       sync.Mutex
	stream   cuda.Stream
	inflight chan *slot
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
			m.poller(in)
		}()
	}
}

// poller waits for the copies of the slots sent on in (a queue's) in
// order, polling each one's stop event, and tells its slot the copy's device time, the
// time between its events. It spins while a copy is in flight, yielding
// to other goroutines between polls, and sleeps on the channel while none
// is.
func (m *deviceMemory) poller(in <-chan *slot) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	setErr := m.rt.SetDevice(m.device)
	for s := range in {
		err := setErr
		for err == nil {
			var done bool
			if done, err = m.rt.Done(s.stop); done {
				break
			}
			runtime.Gosched()
		}
		var c copied
		if c.err = err; err == nil {
			c.s, c.err = m.rt.Elapsed(s.start, s.stop)
		}
		s.done <- c
	}
}

// queueOf returns the direction's queue.
func (m *deviceMemory) queueOf(toDevice bool) *queue {
	if toDevice {
		return &m.queues[0]
	}
	return &m.queues[1]
}

// withSlot runs fn with a free slot, on a thread whose current device is
// the arena's (the streams and the slot's events belong to it).
func (m *deviceMemory) withSlot(fn func(s *slot) error) (err error) {
	s := <-m.slots
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer func() {
		if err != nil {
			// A copy may still be running after a failed call that
			// followed it: the slot's buffer is free only once the
			// streams are done with it.
			for i := range m.queues {
				m.rt.SyncStream(m.queues[i].stream)
			}
		}
		m.slots <- s
	}()
	if err := m.rt.SetDevice(m.device); err != nil {
		return err
	}
	return fn(s)
}

// copyOn copies n bytes between the device address and host (the slot's
// buffer, or pinned memory) on the direction's stream, waits for the
// poller to see it done, and returns its device time.
func (m *deviceMemory) copyOn(s *slot, dev, host uintptr, n int, write bool) (float64, error) {
	if err := m.enqueue(s, dev, host, n, write); err != nil {
		return 0, err
	}
	c := <-s.done
	return c.s, c.err
}

// enqueue queues the copy between the slot's events on the direction's
// stream, with no other copy of the direction between them, and hands it
// to the direction's poller.
func (m *deviceMemory) enqueue(s *slot, dev, host uintptr, n int, write bool) error {
	dst, src, kind := host, dev, cuda.DeviceToHost
	if write {
		dst, src, kind = dev, host, cuda.HostToDevice
	}
	q := m.queueOf(write)
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := m.rt.Record(s.start, q.stream); err != nil {
		return err
	}
	if err := m.rt.CopyAsync(dst, src, uint64(n), kind, q.stream); err != nil {
		return err
	}
	if err := m.rt.Record(s.stop, q.stream); err != nil {
		return err
	}
	q.inflight <- s
	return nil
}

func (m *deviceMemory) count(write bool, n int, t float64) {
	m.mu.Lock()
	d := &m.d2h
	if write {
		d = &m.h2d
	}
	d.Copies++
	d.Bytes += int64(n)
	d.DeviceS += t
	m.mu.Unlock()
	m.copied.Add(1)
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
	var errs []error
	if err := m.rt.SetDevice(m.device); err != nil {
		return err
	}
	for _, s := range m.all {
		errs = append(errs, s.free(m.rt))
	}
	m.all = nil
	for i := range m.queues {
		if q := &m.queues[i]; q.stream != 0 {
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
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := a.Runtime.SetDevice(a.Device); err != nil {
		return err
	}
	return a.Runtime.HostRegister(p, n)
}

// HostAlloc allocates n bytes of pinned host memory (cudaHostAlloc) on
// the arena's device, for an engine that fills and checks blocks where
// CopyDirect copies them; FreeHost frees it.
func (a Arena) HostAlloc(n int64) ([]byte, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := a.Runtime.SetDevice(a.Device); err != nil {
		return nil, err
	}
	return a.Runtime.HostAlloc(uint64(n))
}

// FreeHost frees memory from HostAlloc.
func (a Arena) FreeHost(b []byte) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := a.Runtime.SetDevice(a.Device); err != nil {
		return err
	}
	return a.Runtime.FreeHost(b)
}

// Unpin undoes Pin of the memory at p, on the arena's device.
func (a Arena) Unpin(p uintptr) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := a.Runtime.SetDevice(a.Device); err != nil {
		return err
	}
	return a.Runtime.HostUnregister(p)
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
		t, err := m.copyOn(s, m.base+uintptr(off), host, n, toDevice)
		if err != nil {
			return err
		}
		m.count(toDevice, n, t)
		return nil
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
