package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// longTests reports KVBENCH_LONG=1: the cases that take minutes on a
// 2-core machine (replays moving hundreds of gigabytes) run only then, so
// that go test ./... stays short. CI (.ci/run) runs them.
var longTests = os.Getenv("KVBENCH_LONG") == "1"

// tools is the one build of kvtrace and kvreplay that the tests of real
// processes share: made on first use (from TestMain's start in a run of
// the whole package), removed by TestMain.
var tools struct {
	once              sync.Once
	dir               string
	kvtrace, kvreplay string
	err               error
	out               []byte
}

func TestMain(m *testing.M) {
	// Tests run 4 side by side unless -test.parallel says (go test's
	// default is GOMAXPROCS, 2 here): most of the parallel tests' time is
	// waiting on their processes, a --start-at or a --duration window.
	// 8 at once made the disk latencies those of 8 tests' I/O on 2 cores.
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["test.parallel"] {
		flag.Set("test.parallel", "4")
	}
	// A run of the whole package builds the binaries while its in-process
	// tests run (the tests of real processes wait for the build in
	// buildTools); a -run of some tests builds them only if one needs them.
	if !set["test.run"] && !set["test.list"] && canBuild() == "" {
		go tools.once.Do(build)
	}
	code := m.Run()
	tools.once.Do(func() {}) // a build still under way ends first
	if tools.dir != "" {
		os.RemoveAll(tools.dir)
	}
	os.Exit(code)
}

// canBuild says why the binaries cannot be built here ("" when they can).
func canBuild() string {
	if testing.Short() {
		return "builds and runs the real binaries; skipped with -short"
	}
	if _, err := exec.LookPath("go"); err != nil {
		return "no go toolchain on PATH to build the binaries"
	}
	return ""
}

// build builds kvtrace and kvreplay into tools.dir, once (tools.once).
func build() {
	tools.dir, tools.err = os.MkdirTemp("", "kvreplay-test-bin-")
	if tools.err != nil {
		return
	}
	cmd := exec.Command("go", "build", "-o", tools.dir+string(os.PathSeparator), "./cmd/kvtrace", "./cmd/kvreplay")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	tools.out, tools.err = cmd.CombinedOutput()
	tools.kvtrace, tools.kvreplay = filepath.Join(tools.dir, "kvtrace"), filepath.Join(tools.dir, "kvreplay")
}

// buildTools returns kvtrace and kvreplay built once for the test binary,
// for tests of real processes: signals, pipes, memory.
func buildTools(t *testing.T) (kvtrace, kvreplay string) {
	t.Helper()
	if why := canBuild(); why != "" {
		t.Skip(why)
	}
	tools.once.Do(build)
	if tools.err != nil {
		t.Fatalf("go build: %v\n%s", tools.err, tools.out)
	}
	return tools.kvtrace, tools.kvreplay
}
