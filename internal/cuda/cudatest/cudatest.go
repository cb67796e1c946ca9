// Package cudatest builds the fake CUDA runtime the tests of the GPU tier
// load in place of libcudart: internal/cuda/testdata/fakecudart.c, the
// calls internal/cuda binds over host memory (FAKE_CUDA_DEVICES and
// FAKE_CUDA_MEM set the devices and their bytes).
package cudatest

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// FakeRuntime compiles the fake runtime with the system's C compiler into
// a directory of its own and returns the library's path (named
// libcudart.so, so that LD_LIBRARY_PATH finds it); the test skips where
// there is no compiler.
func FakeRuntime(t testing.TB) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the fake CUDA runtime (kvbench itself needs none)")
	}
	_, here, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(here), "..", "testdata", "fakecudart.c")
	lib := filepath.Join(t.TempDir(), "libcudart.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("cc %s: %v\n%s", src, err, out)
	}
	return lib
}
