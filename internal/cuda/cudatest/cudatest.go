// Package cudatest builds the fake CUDA libraries the tests of the GPU tier
// load in place of libcudart and libcufile: internal/cuda/testdata's
// fakecudart.c and fakecufile.c, the calls internal/cuda binds over host
// memory (FAKE_CUDA_DEVICES and FAKE_CUDA_MEM set the devices and their
// bytes).
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
	return build(t, "fakecudart.c", "libcudart.so")
}

// build compiles testdata's src into a shared library named lib in a
// directory of its own.
func build(t testing.TB, src, lib string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the fake CUDA libraries (kvbench itself needs none)")
	}
	_, here, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(here), "..", "testdata", src)
	out := filepath.Join(t.TempDir(), lib)
	if msg, err := exec.Command(cc, "-shared", "-fPIC", "-pthread", "-o", out, path).CombinedOutput(); err != nil {
		t.Fatalf("cc %s: %v\n%s", path, err, msg)
	}
	return out
}

// FakeCuFile compiles the fake libcufile (internal/cuda/testdata/
// fakecufile.c) as FakeRuntime does the runtime, named libcufile.so.
func FakeCuFile(t testing.TB) string {
	t.Helper()
	return build(t, "fakecufile.c", "libcufile.so")
}
