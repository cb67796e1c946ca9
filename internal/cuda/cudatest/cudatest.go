// Package cudatest builds the fake CUDA libraries the tests of the GPU tier
// load in place of libcudart and libcufile: internal/cuda/testdata's
// fakecudart.c and fakecufile.c, the calls internal/cuda binds over host
// memory (FAKE_CUDA_DEVICES and FAKE_CUDA_MEM set the devices and their
// bytes).
package cudatest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
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

// Setenv sets the fake libraries' variable name to value for t, as
// t.Setenv does, and has every fake library loaded in the process take
// it (fake_refresh_env), now and again when t ends and restores it; an
// empty value is none. The fakes read their variables from a copy of
// their own (testdata/fakeenv.h): libc's getenv on their threads raced
// the test's setenv, which may move the environment and free the old
// array, and the tests died of SIGSEGV now and then.
func Setenv(t testing.TB, name, value string) {
	t.Helper()
	t.Cleanup(refresh) // after t.Setenv's restore: cleanups run last first
	t.Setenv(name, value)
	refresh()
}

// refresh calls fake_refresh_env in each fake library loaded in the
// process, wherever a test copied it (the shared objects mapped, in
// /proc/self/maps, that export it: dlopen of a loaded library's name
// returns it). One not yet loaded reads the environment when it loads.
func refresh() {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for line := range strings.Lines(string(maps)) {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") || !strings.Contains(filepath.Base(f[5]), ".so") || seen[f[5]] {
			continue
		}
		seen[f[5]] = true
		lib, err := purego.Dlopen(f[5], purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			continue
		}
		if sym, err := purego.Dlsym(lib, "fake_refresh_env"); err == nil {
			purego.SyscallN(sym)
		}
		purego.Dlclose(lib)
	}
}

// FakeCuFile compiles the fake libcufile (internal/cuda/testdata/
// fakecufile.c) as FakeRuntime does the runtime, named libcufile.so.
func FakeCuFile(t testing.TB) string {
	t.Helper()
	return build(t, "fakecufile.c", "libcufile.so")
}
