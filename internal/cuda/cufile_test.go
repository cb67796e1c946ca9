package cuda

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/kvbench/kvbench/internal/cuda/cudatest"
)

// TestCuFileFake loads the fake libcufile, binds every call and drives
// them: the driver, file and buffer registration, writes and reads between
// "device" memory (host memory in the fake) and a file, and the three ways
// a call fails (a status, a negative status from I/O, errno).
func TestCuFileFake(t *testing.T) {
	f, err := LoadCuFile(cudatest.FakeCuFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := f.Version(); !ok || VersionString(v) != "1.14" {
		t.Errorf("Version = %d, %v; want 1.14", v, ok)
	}
	if _, err := f.RegisterFile(0); err == nil {
		t.Error("RegisterFile before the driver is open succeeded")
	}
	if err := f.Open(); err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	path := filepath.Join(t.TempDir(), "gds")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	h, err := f.RegisterFile(int(file.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.DeregisterFile(h)

	dev := make([]byte, 8192)
	for i := range dev {
		dev[i] = byte(i * 13)
	}
	base := uintptr(unsafe.Pointer(&dev[0]))
	if err := f.RegisterBuffer(base, uint64(len(dev))); err != nil {
		t.Fatal(err)
	}
	// The second half of the buffer to the file at 4096, then back into
	// the first half of another.
	if n, err := f.Write(h, base, 4096, 4096, 4096); err != nil || n != 4096 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	onDisk, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(onDisk[4096:], dev[4096:]) {
		t.Fatalf("the file holds %d bytes, not the buffer's second half (%v)", len(onDisk), err)
	}
	back := make([]byte, 4096)
	if n, err := f.Read(h, uintptr(unsafe.Pointer(&back[0])), 4096, 4096, 0); err != nil || n != 4096 || !bytes.Equal(back, dev[4096:]) {
		t.Fatalf("Read = %d, %v, equal %v", n, err, bytes.Equal(back, dev[4096:]))
	}
	if n, err := f.Read(h, base, 4096, 8192, 0); err != nil || n != 0 {
		t.Errorf("Read past the end = %d, %v; want 0, nil", n, err)
	}
	if err := f.DeregisterBuffer(base); err != nil {
		t.Error(err)
	}

	var ce *CuFileError
	if err := f.RegisterBuffer(0, 0); !errors.As(err, &ce) || ce.Status != 5012 || ce.CUDA != 1 || ce.Call != "cuFileBufRegister" {
		t.Errorf("RegisterBuffer(nil) = %v; want status 5012 with CUDA error 1", err)
	}
	if _, err := f.RegisterFile(-1); !errors.As(err, &ce) || ce.Status != 5022 || !strings.Contains(err.Error(), "CU_FILE_INVALID_VALUE") {
		t.Errorf("RegisterFile(-1) = %v; want status 5022 CU_FILE_INVALID_VALUE", err)
	}
	// A file registered twice: libcufile's CU_FILE_HANDLE_ALREADY_REGISTERED.
	if _, err := f.RegisterFile(int(file.Fd())); !errors.As(err, &ce) || ce.Status != 5028 {
		t.Errorf("RegisterFile of a registered file = %v; want status 5028", err)
	}
	// pread on a file opened for writing only: -1 and EBADF.
	wo, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer wo.Close()
	hw, err := f.RegisterFile(int(wo.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.DeregisterFile(hw)
	if _, err := f.Read(hw, base, 4096, 0, 0); !errors.Is(err, syscall.EBADF) {
		t.Errorf("Read of a write-only file = %v; want EBADF", err)
	}
	cudatest.Setenv(t, "FAKE_CUFILE_FAIL_IO", "1")
	if _, err := f.Write(h, base, 4096, 0, 0); !errors.As(err, &ce) || ce.Status != 5011 || ce.Call != "cuFileWrite" {
		t.Errorf("failing Write = %v; want status 5011", err)
	}
}

func TestCuFileMissing(t *testing.T) {
	_, err := LoadCuFile(filepath.Join(t.TempDir(), "libcufile.so"))
	if !errors.Is(err, ErrNoCuFile) {
		t.Errorf("LoadCuFile of nothing = %v; want ErrNoCuFile", err)
	}
}

func TestCuFileDriverFails(t *testing.T) {
	f, err := LoadCuFile(cudatest.FakeCuFile(t))
	if err != nil {
		t.Fatal(err)
	}
	cudatest.Setenv(t, "FAKE_CUFILE_FAIL_OPEN", "1")
	var ce *CuFileError
	if err := f.Open(); !errors.As(err, &ce) || ce.Status != 5001 || ce.Call != "cuFileDriverOpen" {
		t.Errorf("Open = %v; want status 5001", err)
	}
}

// TestDescrLayout holds descr to CUfileDescr_t's layout on LP64 (cufile.h:
// an enum, a union of int fd and void *handle, const CUfileFSOps_t
// *fs_ops): the fd at offset 8, the operations at 16, 24 bytes.
func TestDescrLayout(t *testing.T) {
	var d descr
	if s, fd, ops := unsafe.Sizeof(d), unsafe.Offsetof(d.fd), unsafe.Offsetof(d.fsOps); s != 24 || fd != 8 || ops != 16 {
		t.Errorf("descr: size %d, fd at %d, fs_ops at %d; CUfileDescr_t has 24, 8, 16", s, fd, ops)
	}
	if handleTypeOpaqueFD != 1 {
		t.Errorf("CU_FILE_HANDLE_TYPE_OPAQUE_FD is 1, not %d", handleTypeOpaqueFD)
	}
}

// TestStatusWord decodes CUfileError_t as the ABIs return it in one
// register: err (CUfileOpError) in the low 32 bits, cu_err (CUresult) in
// the high.
func TestStatusWord(t *testing.T) {
	for _, c := range []struct {
		word     uint64
		status   int32
		cu       int32
		contains string
	}{
		{0, 0, 0, ""},
		{5001, 5001, 0, "CU_FILE_DRIVER_NOT_INITIALIZED"},
		{5011 | 700<<32, 5011, 700, "CU_FILE_CUDA_DRIVER_ERROR (CUDA driver error 700)"},
		{5028, 5028, 0, "CU_FILE_HANDLE_ALREADY_REGISTERED"},
		{5999, 5999, 0, "status 5999"},
	} {
		err := status("call", c.word)
		if c.status == 0 {
			if err != nil {
				t.Errorf("status(%#x) = %v; want nil", c.word, err)
			}
			continue
		}
		var ce *CuFileError
		if !errors.As(err, &ce) || ce.Status != c.status || ce.CUDA != c.cu || !strings.Contains(err.Error(), c.contains) {
			t.Errorf("status(%#x) = %v; want status %d, CUDA %d, naming %q", c.word, err, c.status, c.cu, c.contains)
		}
	}
}

// TestStatusNames holds the names to cufile.h's CUfileOpError values.
func TestStatusNames(t *testing.T) {
	for code, name := range map[int32]string{
		5001: "CU_FILE_DRIVER_NOT_INITIALIZED", 5011: "CU_FILE_CUDA_DRIVER_ERROR", 5012: "CU_FILE_CUDA_POINTER_INVALID",
		5020: "CU_FILE_DIO_NOT_SET", 5022: "CU_FILE_INVALID_VALUE", 5023: "CU_FILE_MEMORY_ALREADY_REGISTERED",
		5026: "CU_FILE_DRIVER_ALREADY_OPEN", 5028: "CU_FILE_HANDLE_ALREADY_REGISTERED", 5030: "CU_FILE_INTERNAL_ERROR",
		5033: "CU_FILE_NVFS_SETUP_ERROR", 5036: "CU_FILE_GPU_MEMORY_PINNING_FAILED", 5038: "CU_FILE_ASYNC_NOT_SUPPORTED",
	} {
		if got := cuFileStatusNames[code]; got != name {
			t.Errorf("status %d is %q here; cufile.h names it %s", code, got, name)
		}
	}
	for _, unused := range []int32{5021, 5032} {
		if got, ok := cuFileStatusNames[unused]; ok {
			t.Errorf("status %d is unused in cufile.h, named %q here", unused, got)
		}
	}
}

// TestStatusRegister calls a cuFile function that fails with both halves
// of CUfileError_t set (the fake's cuFileBufRegister of nothing: 5012,
// CUDA error 1) bound two ways: returning a uint64, as CuFile binds it,
// and returning the C struct through purego; they agree.
func TestStatusRegister(t *testing.T) {
	path := cudatest.FakeCuFile(t)
	f, err := LoadCuFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Open(); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	sym, err := purego.Dlsym(lib, "cuFileBufRegister")
	if err != nil {
		t.Fatal(err)
	}
	var asStruct func(base uintptr, n uint64, flags int32) struct{ Err, CU int32 }
	purego.RegisterFunc(&asStruct, sym)
	word := f.bufRegister(0, 0, 0)
	st := asStruct(0, 0, 0)
	if st.Err != 5012 || st.CU != 1 || int32(uint32(word)) != st.Err || int32(uint32(word>>32)) != st.CU {
		t.Errorf("as a struct %+v, as a register %#x; want err 5012, cu_err 1 both ways", st, word)
	}
}
