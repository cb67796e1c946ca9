package main

import (
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
// processes share: made on first use, removed by TestMain.
var tools struct {
	once              sync.Once
	dir               string
	kvtrace, kvreplay string
	err               error
	out               []byte
}

func TestMain(m *testing.M) {
	code := m.Run()
	if tools.dir != "" {
		os.RemoveAll(tools.dir)
	}
	os.Exit(code)
}

// buildTools returns kvtrace and kvreplay built once for the test binary,
// for tests of real processes: signals, pipes, memory.
func buildTools(t *testing.T) (kvtrace, kvreplay string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the real binaries; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain on PATH to build the binaries")
	}
	tools.once.Do(func() {
		tools.dir, tools.err = os.MkdirTemp("", "kvreplay-test-bin-")
		if tools.err != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", tools.dir+string(os.PathSeparator), "./cmd/kvtrace", "./cmd/kvreplay")
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		tools.out, tools.err = cmd.CombinedOutput()
		tools.kvtrace, tools.kvreplay = filepath.Join(tools.dir, "kvtrace"), filepath.Join(tools.dir, "kvreplay")
	})
	if tools.err != nil {
		t.Fatalf("go build: %v\n%s", tools.err, tools.out)
	}
	return tools.kvtrace, tools.kvreplay
}
