// Package cuda loads the CUDA runtime (libcudart) at run time, without
// cgo, through github.com/ebitengine/purego, and binds the few calls
// kvreplay's GPU tier needs: devices and their memory, device and pinned
// host allocations, copies, streams and events. One static binary serves
// machines with and without GPUs: where the library or a device is
// missing, Load says why, and nothing falls back quietly.
//
// Errors carry CUDA's own strings (cudaGetErrorString) and codes.
package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ErrNoRuntime is wrapped by Load when no CUDA runtime library could be
// loaded, and ErrNoDevice when it loaded and reports no device.
var (
	ErrNoRuntime = errors.New("no CUDA runtime (libcudart)")
	ErrNoDevice  = errors.New("no CUDA device")
)

// Libraries are the names Load tries, in order: the unversioned name of a
// CUDA toolkit, then the sonames of the runtimes in use (CUDA 12's
// libcudart.so.12, 13's libcudart.so.13, 11's libcudart.so.11.0), each
// through the loader's search path first and then in the directories of
// a CUDA toolkit (CUDADirs), which the loader often does not search.
var Libraries = []string{"libcudart.so", "libcudart.so.12", "libcudart.so.13", "libcudart.so.11.0"}

// CUDADirs are the directories of a CUDA toolkit's libraries where Load
// and LoadCuFile look after the loader's search path: $CUDA_HOME's and
// $CUDA_PATH's lib64 and targets/<arch>-linux/lib, then /usr/local/cuda's.
func CUDADirs() []string {
	arch := map[string]string{"amd64": "x86_64", "arm64": "sbsa"}[runtime.GOARCH]
	var dirs []string
	seen := map[string]bool{}
	for _, root := range []string{os.Getenv("CUDA_HOME"), os.Getenv("CUDA_PATH"), "/usr/local/cuda"} {
		if root == "" {
			continue
		}
		for _, d := range []string{filepath.Join(root, "lib64"), filepath.Join(root, "targets", arch+"-linux", "lib")} {
			if !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// candidates are names as the loader finds them, then each name in each
// of CUDADirs that exists.
func candidates(names []string) []string {
	out := append([]string(nil), names...)
	for _, d := range CUDADirs() {
		for _, n := range names {
			if p := filepath.Join(d, n); fileExists(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Memcpy kinds (cudaMemcpyKind of driver_types.h: cudaMemcpyHostToHost 0,
// HostToDevice 1, DeviceToHost 2, DeviceToDevice 3, Default 4).
const (
	HostToDevice = 1
	DeviceToHost = 2
)

// Device attributes (cudaDeviceAttr of driver_types.h) Device reads.
const (
	attrPCIBusID    = 33 // cudaDevAttrPciBusId
	attrPCIDeviceID = 34 // cudaDevAttrPciDeviceId: the device (slot) number on its bus
	attrPCIDomainID = 50 // cudaDevAttrPciDomainId
)

// Runtime is a loaded CUDA runtime. Its methods are safe for concurrent
// use as CUDA's are; the current device is per OS thread, so callers that
// use more than one device lock their goroutine to its thread.
type Runtime struct {
	// Path is the library that was loaded.
	Path string

	getErrorString      func(code int32) *byte
	getDeviceCount      func(n *int32) int32
	setDevice           func(dev int32) int32
	getDeviceProperties func(prop unsafe.Pointer, dev int32) int32
	deviceGetAttribute  func(value *int32, attr int32, dev int32) int32
	memGetInfo          func(free, total *uint64) int32
	driverGetVersion    func(v *int32) int32
	runtimeGetVersion   func(v *int32) int32
	malloc              func(p *uintptr, size uint64) int32
	free                func(p uintptr) int32
	hostAlloc           func(p *unsafe.Pointer, size uint64, flags uint32) int32
	freeHost            func(p unsafe.Pointer) int32
	hostRegister        func(p uintptr, size uint64, flags uint32) int32
	hostUnregister      func(p uintptr) int32
	memcpyAsync         func(dst, src uintptr, count uint64, kind int32, stream uintptr) int32
	streamCreate        func(s *uintptr, flags uint32) int32
	streamDestroy       func(s uintptr) int32
	streamSynchronize   func(s uintptr) int32
	eventCreate         func(e *uintptr, flags uint32) int32
	eventRecord         func(e, stream uintptr) int32
	eventSynchronize    func(e uintptr) int32
	eventQuery          func(e uintptr) int32
	eventElapsedTime    func(ms *float32, start, end uintptr) int32
	eventDestroy        func(e uintptr) int32
}

// Load opens the first of paths (Libraries when none) that loads and
// binds every call; the error wraps ErrNoRuntime with each attempt's
// reason when none does.
func Load(paths ...string) (*Runtime, error) {
	return loadFirst(paths, candidates(Libraries), ErrNoRuntime, load)
}

// loadFirst returns what bind makes of the first of paths (defaults when
// none) that dlopen loads and bind accepts; the library stays open then,
// and is closed otherwise. The error wraps none with each attempt's
// reason when no path serves.
func loadFirst[T any](paths, defaults []string, none error, bind func(lib uintptr, path string) (T, error)) (T, error) {
	if len(paths) == 0 {
		paths = defaults
	}
	var why []string
	for _, p := range paths {
		lib, err := dlopen(p)
		if err == nil {
			var v T
			if v, err = bind(lib, p); err == nil {
				return v, nil
			}
			purego.Dlclose(lib)
		}
		why = append(why, err.Error())
	}
	var zero T
	return zero, fmt.Errorf("cuda: %w: %s", none, strings.Join(why, "; "))
}

// dlopen opens the library at path. dlopen's reason for a failure is
// the calling thread's (dlerror): the call and the reading of it stay on
// one thread, or a goroutine moved between them reads no reason.
func dlopen(path string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil && err.Error() == "" {
		err = fmt.Errorf("%s: dlopen failed", path)
	}
	return lib, err
}

func load(lib uintptr, path string) (*Runtime, error) {
	r := &Runtime{Path: path}
	err := bindAll(lib, path, []symbol{
		{&r.getErrorString, []string{"cudaGetErrorString"}},
		{&r.getDeviceCount, []string{"cudaGetDeviceCount"}},
		{&r.setDevice, []string{"cudaSetDevice"}},
		// CUDA 12's cuda_runtime_api.h maps cudaGetDeviceProperties to
		// its _v2 (the cudaDeviceProp of 12.x); the plain symbol stays for
		// programs built against 11.x's layout. Both start with name.
		{&r.getDeviceProperties, []string{"cudaGetDeviceProperties_v2", "cudaGetDeviceProperties"}},
		{&r.deviceGetAttribute, []string{"cudaDeviceGetAttribute"}},
		{&r.memGetInfo, []string{"cudaMemGetInfo"}},
		{&r.driverGetVersion, []string{"cudaDriverGetVersion"}},
		{&r.runtimeGetVersion, []string{"cudaRuntimeGetVersion"}},
		{&r.malloc, []string{"cudaMalloc"}},
		{&r.free, []string{"cudaFree"}},
		{&r.hostAlloc, []string{"cudaHostAlloc"}},
		{&r.freeHost, []string{"cudaFreeHost"}},
		{&r.hostRegister, []string{"cudaHostRegister"}},
		{&r.hostUnregister, []string{"cudaHostUnregister"}},
		{&r.memcpyAsync, []string{"cudaMemcpyAsync"}},
		{&r.streamCreate, []string{"cudaStreamCreateWithFlags"}},
		{&r.streamDestroy, []string{"cudaStreamDestroy"}},
		{&r.streamSynchronize, []string{"cudaStreamSynchronize"}},
		{&r.eventCreate, []string{"cudaEventCreateWithFlags"}},
		{&r.eventRecord, []string{"cudaEventRecord"}},
		{&r.eventSynchronize, []string{"cudaEventSynchronize"}},
		{&r.eventQuery, []string{"cudaEventQuery"}},
		{&r.eventElapsedTime, []string{"cudaEventElapsedTime"}},
		{&r.eventDestroy, []string{"cudaEventDestroy"}},
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// symbol is a call to bind: fn, a pointer to a func variable, to the
// first of names that the library exports.
type symbol struct {
	fn    any
	names []string
}

// bindAll binds each of syms, and fails at the first that lib lacks.
func bindAll(lib uintptr, path string, syms []symbol) error {
	for _, s := range syms {
		if err := bindAny(lib, path, s.fn, s.names...); err != nil {
			return err
		}
	}
	return nil
}

// bindAny binds fn to the first of names lib exports.
func bindAny(lib uintptr, path string, fn any, names ...string) error {
	for _, name := range names {
		if sym, err := purego.Dlsym(lib, name); err == nil {
			purego.RegisterFunc(fn, sym)
			return nil
		}
	}
	return fmt.Errorf("%s: no %s", path, strings.Join(names, " or "))
}

// Error is a CUDA call's failure.
type Error struct {
	Call string
	Code int32
	Text string // cudaGetErrorString's
}

func (e *Error) Error() string { return fmt.Sprintf("cuda: %s: %s (%d)", e.Call, e.Text, e.Code) }

// check turns a cudaError_t into an *Error, nil for cudaSuccess.
func (r *Runtime) check(call string, code int32) error {
	if code == 0 {
		return nil
	}
	return &Error{Call: call, Code: code, Text: cString(r.getErrorString(code))}
}

// cString copies a NUL-terminated C string.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0 && len(b) < 4096; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}

// DeviceCount returns the number of devices the runtime sees.
func (r *Runtime) DeviceCount() (int, error) {
	var n int32
	if err := r.check("cudaGetDeviceCount", r.getDeviceCount(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Device describes one GPU.
type Device struct {
	Index      int
	Name       string
	TotalBytes uint64
	FreeBytes  uint64
	PCIBusID   string // domain:bus:device, as nvidia-smi prints it
}

// propBytes is room for cudaDeviceProp, whose size grows with CUDA
// releases (about 1 KiB in 12.x); its first field is char name[256].
const propBytes = 8 << 10

// Device returns what the runtime says of device i. It makes i the
// calling thread's current device: cudaMemGetInfo reports the current
// device's memory, so the calls stay on one thread.
func (r *Runtime) Device(i int) (Device, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := Device{Index: i}
	if err := r.check("cudaSetDevice", r.setDevice(int32(i))); err != nil {
		return d, err
	}
	prop := make([]byte, propBytes)
	if err := r.check("cudaGetDeviceProperties", r.getDeviceProperties(unsafe.Pointer(&prop[0]), int32(i))); err != nil {
		return d, err
	}
	d.Name = cString(&prop[0])
	if err := r.check("cudaMemGetInfo", r.memGetInfo(&d.FreeBytes, &d.TotalBytes)); err != nil {
		return d, err
	}
	var dom, bus, dev int32
	if r.deviceGetAttribute(&dom, attrPCIDomainID, int32(i)) == 0 && r.deviceGetAttribute(&bus, attrPCIBusID, int32(i)) == 0 &&
		r.deviceGetAttribute(&dev, attrPCIDeviceID, int32(i)) == 0 {
		d.PCIBusID = fmt.Sprintf("%08x:%02x:%02x", dom, bus, dev)
	}
	return d, nil
}

// Versions returns the driver's and the runtime's CUDA versions as CUDA
// encodes them (1000*major + 10*minor).
func (r *Runtime) Versions() (driver, runtime int, err error) {
	var d, rt int32
	if err := r.check("cudaDriverGetVersion", r.driverGetVersion(&d)); err != nil {
		return 0, 0, err
	}
	if err := r.check("cudaRuntimeGetVersion", r.runtimeGetVersion(&rt)); err != nil {
		return 0, 0, err
	}
	return int(d), int(rt), nil
}

// VersionString renders a CUDA version number ("12.4").
func VersionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// Malloc allocates n bytes of device memory on the current device.
func (r *Runtime) Malloc(n uint64) (uintptr, error) {
	var p uintptr
	if err := r.check("cudaMalloc", r.malloc(&p, n)); err != nil {
		return 0, err
	}
	return p, nil
}

// Free frees device memory from Malloc.
func (r *Runtime) Free(p uintptr) error { return r.check("cudaFree", r.free(p)) }

// HostAlloc allocates n bytes of pinned host memory, for copies at the
// link's full speed; FreeHost frees it.
func (r *Runtime) HostAlloc(n uint64) ([]byte, error) {
	var p unsafe.Pointer
	if err := r.check("cudaHostAlloc", r.hostAlloc(&p, n, 0)); err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), n), nil // memory CUDA owns, outside the Go heap
}

// FreeHost frees pinned host memory from HostAlloc.
func (r *Runtime) FreeHost(b []byte) error {
	return r.check("cudaFreeHost", r.freeHost(unsafe.Pointer(unsafe.SliceData(b))))
}

// SetDevice makes device i the calling thread's current device.
func (r *Runtime) SetDevice(i int) error { return r.check("cudaSetDevice", r.setDevice(int32(i))) }

// Stream is a CUDA stream: copies on one stream run in order, copies on
// different streams may overlap.
type Stream uintptr

// streamNonBlocking is cudaStreamNonBlocking: no implicit synchronisation
// with the legacy default stream.
const streamNonBlocking = 1

// NewStream creates a non-blocking stream on the current device.
func (r *Runtime) NewStream() (Stream, error) {
	s, err := r.create("cudaStreamCreateWithFlags", r.streamCreate, streamNonBlocking)
	return Stream(s), err
}

// create makes a stream or an event with flags through call.
func (r *Runtime) create(call string, fn func(*uintptr, uint32) int32, flags uint32) (uintptr, error) {
	var h uintptr
	if err := r.check(call, fn(&h, flags)); err != nil {
		return 0, err
	}
	return h, nil
}

// DestroyStream destroys a stream from NewStream.
func (r *Runtime) DestroyStream(s Stream) error {
	return r.check("cudaStreamDestroy", r.streamDestroy(uintptr(s)))
}

// SyncStream blocks until every copy queued on s is done.
func (r *Runtime) SyncStream(s Stream) error {
	return r.check("cudaStreamSynchronize", r.streamSynchronize(uintptr(s)))
}

// hostRegisterPortable is cudaHostRegisterPortable: the memory counts as
// pinned in every CUDA context, not only the calling thread's current
// device's (the RAM arena serves the GPUs of every rank's device).
const hostRegisterPortable = 0x01

// HostRegister pins n bytes of host memory at p (cudaHostRegister) so
// that copies to and from them run at the link's speed, as from
// HostAlloc's memory; HostUnregister undoes it. Registering a range that
// overlaps one registered already fails (cudaErrorHostMemoryAlreadyRegistered).
func (r *Runtime) HostRegister(p uintptr, n uint64) error {
	return r.check("cudaHostRegister", r.hostRegister(p, n, hostRegisterPortable))
}

// HostUnregister undoes HostRegister of the memory at p.
func (r *Runtime) HostUnregister(p uintptr) error {
	return r.check("cudaHostUnregister", r.hostUnregister(p))
}

// CopyAsync queues a copy of n bytes from src to dst (HostToDevice or
// DeviceToHost) on stream s; it returns before the copy is done. Host
// memory must be pinned (HostAlloc, HostRegister) for the copy to be
// asynchronous and must stay untouched until an event recorded after it
// completes.
func (r *Runtime) CopyAsync(dst, src uintptr, n uint64, kind int, s Stream) error {
	return r.check("cudaMemcpyAsync", r.memcpyAsync(dst, src, n, int32(kind), uintptr(s)))
}

// Event is a CUDA event: a point in a stream whose completion can be
// waited for and timed on the device.
type Event uintptr

// Event flags (cudaEventBlockingSync: a thread waiting for the event
// sleeps instead of spinning; cudaEventDisableTiming: the event keeps no
// time) and cudaErrorNotReady, cudaEventQuery's answer for an event whose
// work is still running.
const (
	eventBlockingSync  = 1
	eventDisableTiming = 2
	errNotReady        = 600
)

// NewEvent creates an event with timing, whose waiters sleep.
func (r *Runtime) NewEvent() (Event, error) {
	e, err := r.create("cudaEventCreateWithFlags", r.eventCreate, eventBlockingSync)
	return Event(e), err
}

// NewMark creates an event without timing (cudaEventDisableTiming): one
// to wait for, by polling Done, never to time. Recording one costs the
// host about half what a timed event's does, and, unlike a timed one,
// it does not slow a stream's back-to-back copies (on an H100, timed
// events between 1 MiB copies slowed them by 8 %; internal/cuda's
// TestRealCopyShapes).
func (r *Runtime) NewMark() (Event, error) {
	e, err := r.create("cudaEventCreateWithFlags", r.eventCreate, eventDisableTiming)
	return Event(e), err
}

// Done reports whether the work before e's record has finished
// (cudaEventQuery), without waiting: a poller's wait, which wakes sooner
// than Wait's sleep on a blocking-sync event.
func (r *Runtime) Done(e Event) (bool, error) {
	code := r.eventQuery(uintptr(e))
	if code == errNotReady {
		return false, nil
	}
	return code == 0, r.check("cudaEventQuery", code)
}

// Record records e at the current end of stream s.
func (r *Runtime) Record(e Event, s Stream) error {
	return r.check("cudaEventRecord", r.eventRecord(uintptr(e), uintptr(s)))
}

// Wait blocks until the work before e's record is done.
func (r *Runtime) Wait(e Event) error {
	return r.check("cudaEventSynchronize", r.eventSynchronize(uintptr(e)))
}

// Elapsed returns the device time between two completed events (CUDA's
// resolution is about half a microsecond).
func (r *Runtime) Elapsed(start, end Event) (float64, error) {
	var ms float32
	if err := r.check("cudaEventElapsedTime", r.eventElapsedTime(&ms, uintptr(start), uintptr(end))); err != nil {
		return 0, err
	}
	return float64(ms) / 1e3, nil
}

// DestroyEvent destroys an event from NewEvent.
func (r *Runtime) DestroyEvent(e Event) error {
	return r.check("cudaEventDestroy", r.eventDestroy(uintptr(e)))
}
