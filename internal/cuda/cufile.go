package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ErrNoCuFile is wrapped by LoadCuFile when no GPUDirect Storage library
// (libcufile) could be loaded.
var ErrNoCuFile = errors.New("no GPUDirect Storage library (libcufile)")

// CuFileLibraries are the names LoadCuFile tries, in order: libcufile's
// soname (libcufile.so.0 in CUDA 11.4 to 13), then the toolkit's
// unversioned link, each through the loader's search path and then in
// CUDADirs.
var CuFileLibraries = []string{"libcufile.so.0", "libcufile.so"}

// CuFile is a loaded libcufile, the GPUDirect Storage API: reads and
// writes between files and GPU memory that do not stage through host
// memory (the NVMe device moves the bytes to or from the GPU by DMA where
// the platform supports it). It binds the synchronous calls kvreplay's
// --gds path needs; the batch and stream (asynchronous) APIs are not bound.
//
// cuFile's calls return CUfileError_t by value: struct { CUfileOpError err;
// CUresult cu_err; }, two 4-byte enums, 8 bytes. The System V amd64 ABI
// returns an 8-byte struct of integer class in RAX, and AAPCS64 a
// composite of up to 16 bytes in x0 (and x1): one register either way,
// with err in its low 32 bits (both little-endian). The register is read
// here as a uint64 (TestStatusRegister checks purego's own struct return
// reads the same).
// cuFileRead and cuFileWrite return ssize_t: the bytes moved, -1 with
// errno set for a file system error, or minus a CUfileOpError.
type CuFile struct {
	// Path is the library that was loaded.
	Path string

	driverOpen       func() uint64
	driverClose      func() uint64
	handleRegister   func(fh *uintptr, descr unsafe.Pointer) uint64
	handleDeregister func(fh uintptr)
	bufRegister      func(base uintptr, n uint64, flags int32) uint64
	bufDeregister    func(base uintptr) uint64
	read             func(fh, base uintptr, n uint64, fileOff, bufOff int64) int64
	write            func(fh, base uintptr, n uint64, fileOff, bufOff int64) int64
	getVersion       func(v *int32) uint64 // nil before CUDA 12.x's libcufile
	errnoLocation    func() *int32         // libc's, for a call that returns -1
}

// LoadCuFile opens the first of paths (CuFileLibraries when none) that
// loads and binds every call; the error wraps ErrNoCuFile with each
// attempt's reason when none does.
func LoadCuFile(paths ...string) (*CuFile, error) {
	return loadFirst(paths, candidates(CuFileLibraries), ErrNoCuFile, loadCuFile)
}

func loadCuFile(lib uintptr, path string) (*CuFile, error) {
	f := &CuFile{Path: path}
	err := bindAll(lib, path, []symbol{
		{&f.driverOpen, []string{"cuFileDriverOpen"}},
		// CUDA 12's header maps cuFileDriverClose to its _v2.
		{&f.driverClose, []string{"cuFileDriverClose_v2", "cuFileDriverClose"}},
		{&f.handleRegister, []string{"cuFileHandleRegister"}},
		{&f.handleDeregister, []string{"cuFileHandleDeregister"}},
		{&f.bufRegister, []string{"cuFileBufRegister"}},
		{&f.bufDeregister, []string{"cuFileBufDeregister"}},
		{&f.read, []string{"cuFileRead"}},
		{&f.write, []string{"cuFileWrite"}},
	})
	if err != nil {
		return nil, err
	}
	if bindAny(lib, path, &f.getVersion, "cuFileGetVersion") != nil {
		f.getVersion = nil
	}
	// errno of a call that returned -1 is the calling thread's libc errno.
	for _, libc := range []string{"libc.so.6", "libc.so"} {
		if h, err := purego.Dlopen(libc, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			if sym, err := purego.Dlsym(h, "__errno_location"); err == nil {
				purego.RegisterFunc(&f.errnoLocation, sym)
				break
			}
		}
	}
	return f, nil
}

// CuFileError is a cuFile call's failure: its cuFile status (the
// CUfileOpError of cufile.h, 5000 and up) and, for a CUDA driver failure
// underneath (CU_FILE_CUDA_DRIVER_ERROR and others), the driver's
// CUresult.
type CuFileError struct {
	Call   string
	Status int32
	CUDA   int32
}

func (e *CuFileError) Error() string {
	s := fmt.Sprintf("cuda: %s: cuFile status %d", e.Call, e.Status)
	if name := cuFileStatusNames[e.Status]; name != "" {
		s += " " + name
	}
	if e.CUDA != 0 {
		s += fmt.Sprintf(" (CUDA driver error %d)", e.CUDA)
	}
	return s
}

// cuFileStatusNames name the CUfileOpError values of cufile.h (libcufile
// 1.x; CUFILEOP_BASE_ERR is 5000, 5021 and 5032 are unused). The header
// turns them into text with an inline function, which libcufile does not
// export, so the names are kept here.
var cuFileStatusNames = map[int32]string{
	5001: "CU_FILE_DRIVER_NOT_INITIALIZED",
	5002: "CU_FILE_DRIVER_INVALID_PROPS",
	5003: "CU_FILE_DRIVER_UNSUPPORTED_LIMIT",
	5004: "CU_FILE_DRIVER_VERSION_MISMATCH",
	5005: "CU_FILE_DRIVER_VERSION_READ_ERROR",
	5006: "CU_FILE_DRIVER_CLOSING",
	5007: "CU_FILE_PLATFORM_NOT_SUPPORTED",
	5008: "CU_FILE_IO_NOT_SUPPORTED",
	5009: "CU_FILE_DEVICE_NOT_SUPPORTED",
	5010: "CU_FILE_NVFS_DRIVER_ERROR",
	5011: "CU_FILE_CUDA_DRIVER_ERROR",
	5012: "CU_FILE_CUDA_POINTER_INVALID",
	5013: "CU_FILE_CUDA_MEMORY_TYPE_INVALID",
	5014: "CU_FILE_CUDA_POINTER_RANGE_ERROR",
	5015: "CU_FILE_CUDA_CONTEXT_MISMATCH",
	5016: "CU_FILE_INVALID_MAPPING_SIZE",
	5017: "CU_FILE_INVALID_MAPPING_RANGE",
	5018: "CU_FILE_INVALID_FILE_TYPE",
	5019: "CU_FILE_INVALID_FILE_OPEN_FLAG",
	5020: "CU_FILE_DIO_NOT_SET",
	5022: "CU_FILE_INVALID_VALUE",
	5023: "CU_FILE_MEMORY_ALREADY_REGISTERED",
	5024: "CU_FILE_MEMORY_NOT_REGISTERED",
	5025: "CU_FILE_PERMISSION_DENIED",
	5026: "CU_FILE_DRIVER_ALREADY_OPEN",
	5027: "CU_FILE_HANDLE_NOT_REGISTERED",
	5028: "CU_FILE_HANDLE_ALREADY_REGISTERED",
	5029: "CU_FILE_DEVICE_NOT_FOUND",
	5030: "CU_FILE_INTERNAL_ERROR",
	5031: "CU_FILE_GETNEWFD_FAILED",
	5033: "CU_FILE_NVFS_SETUP_ERROR",
	5034: "CU_FILE_IO_DISABLED",
	5035: "CU_FILE_BATCH_SUBMIT_FAILED",
	5036: "CU_FILE_GPU_MEMORY_PINNING_FAILED",
	5037: "CU_FILE_BATCH_FULL",
	5038: "CU_FILE_ASYNC_NOT_SUPPORTED",
}

// status turns a CUfileError_t, read as a uint64, into a *CuFileError, nil
// for success.
func status(call string, r uint64) error {
	op, cu := int32(uint32(r)), int32(uint32(r>>32))
	if op == 0 {
		return nil
	}
	return &CuFileError{Call: call, Status: op, CUDA: cu}
}

// Open opens the cuFile driver (cuFileDriverOpen); Close closes it.
func (f *CuFile) Open() error { return status("cuFileDriverOpen", f.driverOpen()) }

// Close closes the cuFile driver.
func (f *CuFile) Close() error { return status("cuFileDriverClose", f.driverClose()) }

// Version returns libcufile's version (1000 x major + 10 x minor, as
// VersionString prints it); ok is false where the library does not say.
func (f *CuFile) Version() (v int, ok bool) {
	if f.getVersion == nil {
		return 0, false
	}
	var n int32
	if status("cuFileGetVersion", f.getVersion(&n)) != nil {
		return 0, false
	}
	return int(n), true
}

// FileHandle is a file registered with cuFile.
type FileHandle uintptr

// descr is CUfileDescr_t for a Linux file descriptor: the handle type (a
// 4-byte enum), a union of an int fd and a void * (8 bytes, at offset 8
// on LP64), and the file system operations (a pointer at 16; nil for a
// file of the kernel's). 24 bytes in all.
type descr struct {
	typ   int32
	_     int32
	fd    int32
	_     int32
	fsOps uintptr
}

// handleTypeOpaqueFD is CU_FILE_HANDLE_TYPE_OPAQUE_FD (CUfileFileHandleType:
// OPAQUE_FD 1, OPAQUE_WIN32 2, USERSPACE_FS 3).
const handleTypeOpaqueFD = 1

// RegisterFile registers fd, opened with O_DIRECT, for cuFile I/O. The
// handle must be deregistered before fd is closed.
func (f *CuFile) RegisterFile(fd int) (FileHandle, error) {
	d := descr{typ: handleTypeOpaqueFD, fd: int32(fd)}
	var h uintptr
	err := status("cuFileHandleRegister", f.handleRegister(&h, unsafe.Pointer(&d)))
	runtime.KeepAlive(&d)
	if err != nil {
		return 0, fmt.Errorf("fd %d: %w", fd, err)
	}
	return FileHandle(h), nil
}

// DeregisterFile releases a handle from RegisterFile.
func (f *CuFile) DeregisterFile(h FileHandle) { f.handleDeregister(uintptr(h)) }

// RegisterBuffer registers n bytes of device memory at dev for cuFile
// I/O, which then moves them without cuFile's own bounce buffers.
func (f *CuFile) RegisterBuffer(dev uintptr, n uint64) error {
	return status("cuFileBufRegister", f.bufRegister(dev, n, 0))
}

// DeregisterBuffer releases a registration of RegisterBuffer.
func (f *CuFile) DeregisterBuffer(dev uintptr) error {
	return status("cuFileBufDeregister", f.bufDeregister(dev))
}

// Read reads n bytes of the file of h at fileOff into device memory at
// dev+devOff (dev is a buffer's base, registered or not) and returns how
// many it read (fewer at the end of the file).
func (f *CuFile) Read(h FileHandle, dev uintptr, n uint64, fileOff, devOff int64) (int, error) {
	return f.io("cuFileRead", f.read, h, dev, n, fileOff, devOff)
}

// Write writes n bytes of device memory at dev+devOff to the file of h at
// fileOff and returns how many it wrote.
func (f *CuFile) Write(h FileHandle, dev uintptr, n uint64, fileOff, devOff int64) (int, error) {
	return f.io("cuFileWrite", f.write, h, dev, n, fileOff, devOff)
}

// io makes a read or write call: a negative result is -1 with errno set,
// or minus a cuFile status.
func (f *CuFile) io(call string, fn func(fh, base uintptr, n uint64, fileOff, bufOff int64) int64,
	h FileHandle, dev uintptr, n uint64, fileOff, devOff int64) (int, error) {
	// errno is the calling thread's: read it on the thread of the call.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := fn(uintptr(h), dev, n, fileOff, devOff)
	switch {
	case r >= 0:
		return int(r), nil
	case r == -1:
		var errno syscall.Errno
		if f.errnoLocation != nil {
			if p := f.errnoLocation(); p != nil {
				errno = syscall.Errno(*p)
			}
		}
		if errno == 0 {
			return 0, fmt.Errorf("cuda: %s of %d bytes at %d failed (errno not readable here)", call, n, fileOff)
		}
		return 0, fmt.Errorf("cuda: %s of %d bytes at %d: %w", call, n, fileOff, errno)
	default:
		return 0, fmt.Errorf("%d bytes at %d: %w", n, fileOff, &CuFileError{Call: call, Status: int32(-r)})
	}
}
