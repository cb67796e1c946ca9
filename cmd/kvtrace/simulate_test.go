package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/trace"
)

// mlperf8B is the MLPerf 8B submission workload of design section 8.
var mlperf8B = []string{"--model", "llama3.1-8b", "--num-users", "150", "--duration", "600",
	"--generation-mode", "none", "--gpu-mem-gb", "0", "--cpu-mem-gb", "4"}

func simulateTo(t testing.TB, dir, name string, args ...string) []byte {
	t.Helper()
	path := filepath.Join(dir, name)
	var out, errb bytes.Buffer
	all := append(append([]string{}, args...), "-o", path, "--output", path+".stats.json")
	if code := runMain(all, &out, &errb); code != 0 {
		t.Fatalf("kvtrace %s: exit %d: %s", strings.Join(all, " "), code, errb.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDeterministic runs the MLPerf 8B workload (600 simulated seconds,
// 150 users) twice with one seed, the second time on one processor, and
// once with another seed: the same seed gives the same bytes, trace and
// statistics, however the trace's goroutines are scheduled; another seed
// differs.
func TestDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("three 600-second simulations; skipped with -short")
	}
	dir := t.TempDir()
	a := simulateTo(t, dir, "a.csv.zst", append(mlperf8B, "--seed", "42")...)
	procs := runtime.GOMAXPROCS(1)
	b := simulateTo(t, dir, "b.csv.zst", append(mlperf8B, "--seed", "42")...)
	runtime.GOMAXPROCS(procs)
	c := simulateTo(t, dir, "c.csv.zst", append(mlperf8B, "--seed", "43")...)
	if !bytes.Equal(a, b) {
		t.Errorf("same seed, different traces (%d and %d bytes)", len(a), len(b))
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds, identical traces")
	}
	sa, _ := os.ReadFile(filepath.Join(dir, "a.csv.zst.stats.json"))
	sb, _ := os.ReadFile(filepath.Join(dir, "b.csv.zst.stats.json"))
	if len(sa) == 0 || !bytes.Equal(sa, sb) {
		t.Error("same seed, different statistics")
	}
	r, err := trace.Open(filepath.Join(dir, "a.csv.zst"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := trace.Summarize(r)
	if err != nil {
		t.Fatal(err)
	}
	var res sim.Result
	if err := json.Unmarshal(sa, &res); err != nil {
		t.Fatal(err)
	}
	m, err := trace.ReadMeta(filepath.Join(dir, "a.csv.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Rows < 1_000_000 || s.Rows != m.Counts.Rows || s.Rows != res.Kvbench.Rows {
		t.Errorf("rows: trace %d, sidecar %d, statistics %d", s.Rows, m.Counts.Rows, res.Kvbench.Rows)
	}
	if s.Totals.ReadBytes != m.Counts.ReadBytes || s.Totals.WriteBytes != m.Counts.WriteBytes || s.Requests != m.Counts.Requests ||
		s.Objects != m.Counts.Objects {
		t.Errorf("sidecar counts %+v disagree with the trace's %+v, %d requests", m.Counts, s.Totals, s.Requests)
	}
	if s.SpanS > 600 || s.EndS > 600 {
		t.Errorf("trace ends at %.3f s, after the 600 s duration", s.EndS)
	}
	if m.Seed != 42 || m.Model != "llama3.1-8b" || m.BytesPerToken != 131072 || m.TierCapacityBytes["Tier-1"] != 4<<30 {
		t.Errorf("sidecar %+v", m)
	}
}

// BenchmarkKvtraceMLPerf8B times the whole command on the MLPerf 8B
// workload: simulation, zstd trace, sidecar and statistics (design section
// 8: <= 2 s wall).
func BenchmarkKvtraceMLPerf8B(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		path := filepath.Join(dir, "run.csv.zst")
		all := append(append(append([]string{}, mlperf8B...), benchLevel...), "-o", path, "--output", path+".stats.json")
		var out, errb bytes.Buffer
		if code := runMain(all, &out, &errb); code != 0 {
			b.Fatalf("kvtrace: exit %d: %s", code, errb.String())
		}
	}
}

// benchLevel is --zstd-level KVBENCH_ZSTD_LEVEL when the variable is set,
// to compare the row encoder (kvtrace's default) with the zstd library.
var benchLevel = func() []string {
	if l := os.Getenv("KVBENCH_ZSTD_LEVEL"); l != "" {
		return []string{"--zstd-level", l}
	}
	return nil
}()

// TestDepartureSaid: a run that meets one of kvtrace's departures from
// kv-cache.py (here ShareGPT under --disable-multi-turn, which kills the
// reference's workers) says so once on stderr and once in the sidecar's
// notes; a run that does not says nothing of it. Before, neither did.
func TestDepartureSaid(t *testing.T) {
	sg := filepath.Join("..", "..", "sim", "reqtrace", "testdata", "sharegpt_sample50.json")
	const said = "departs from kv-cache.py: --dataset-path with --disable-multi-turn"
	for _, c := range []struct {
		extra []string
		want  int
	}{{[]string{"--disable-multi-turn"}, 1}, {nil, 0}} {
		out := filepath.Join(t.TempDir(), "sg.csv")
		args := append([]string{"--dataset-path", sg, "--request-rate", "20", "--duration", "10", "--generation-mode", "none",
			"--gpu-mem-gb", "0", "-o", out}, c.extra...)
		_, stderr, code := runKvtrace(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		if n := strings.Count(stderr, "kvtrace: note: "+said); n != c.want {
			t.Errorf("%v: stderr says it %d times, want %d:\n%s", c.extra, n, c.want, stderr)
		}
		m, err := trace.ReadMeta(out)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, note := range m.Notes {
			if strings.HasPrefix(note, said) {
				n++
			}
		}
		if n != c.want {
			t.Errorf("%v: the sidecar's notes say it %d times, want %d: %q", c.extra, n, c.want, m.Notes)
		}
	}
}
