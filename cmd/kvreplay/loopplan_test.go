package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay/setup"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/trace"
)

// loopTraceFile simulates kvtrace --num-users 20 --duration 60
// --gpu-mem-gb 0 --cpu-mem-gb 1 into a file: a CPU RAM tier of 1 GiB
// whose LRU demotes one user's objects during another user's request.
func loopTraceFile(t *testing.T) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.NumUsers, cfg.Duration, cfg.GPUMemGB, cfg.CPUMemGB = 20, 60*time.Second, 0, 1
	path := filepath.Join(t.TempDir(), "loop.csv")
	w, err := trace.Create(path, trace.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Run(context.Background(), &cfg, func(r *schema.Record) error { return w.Write(r) }); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// planOutput runs kvreplay --plan with args and returns its output.
func planOutput(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main("kvreplay", append([]string{"--plan"}, args...), &out, &errb, run); code != 0 {
		t.Fatalf("kvreplay --plan %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// TestPlanFollowsUsers: kvreplay --plan --closed-loop --users N plans the
// run of those users (fewer objects and bytes than the whole trace's,
// said in a line), and sizes the RAM arena for a closed loop's order:
// the most it can keep live. Before, --users was ignored: the plan was
// the trace-order replay's of every user.
func TestPlanFollowsUsers(t *testing.T) {
	t.Parallel()
	tr := loopTraceFile(t)
	common := []string{"--format", "json", "--size-scale", "1/1024", "--tier-map", "Tier-2=null", tr}
	var all, some setup.PlanDoc
	for _, p := range []struct {
		doc  *setup.PlanDoc
		args []string
	}{{&all, common}, {&some, append([]string{"--closed-loop", "--users", "8"}, common...)}} {
		if err := json.Unmarshal([]byte(planOutput(t, p.args...)), p.doc); err != nil {
			t.Fatal(err)
		}
	}
	ramOf := func(d *setup.PlanDoc) (peak, reach int64) {
		for _, b := range d.Advice.Needs.Backends {
			if b.Backend == "ram" {
				return b.Peak, b.Reach
			}
		}
		t.Fatalf("no ram backend in %+v", d.Advice.Needs)
		return 0, 0
	}
	if some.Objects >= all.Objects || some.Rows != all.Rows {
		t.Errorf("--users 8 plans %d objects of %d rows, the whole trace %d of %d: want fewer objects, the same rows", some.Objects, some.Rows, all.Objects, all.Rows)
	}
	if p, r := ramOf(&all); r != 0 || all.Advice.Needs.Arena != max(p, 1<<20) {
		t.Errorf("open loop: ram peak %d, reach %d, arena %d: want the arena at the peak", p, r, all.Advice.Needs.Arena)
	}
	peak, reach := ramOf(&some)
	if reach <= peak || some.Advice.Needs.Arena != reach {
		t.Errorf("closed loop of 8 users: ram peak %d, reach %d, arena %d: want the arena at the reach, above the peak", peak, reach, some.Advice.Needs.Arena)
	}
	text := planOutput(t, "--closed-loop", "--users", "8", "--size-scale", "1/1024", "--tier-map", "Tier-2=null", tr)
	for _, want := range []string{"--closed-loop --users 8: what the 8 of the trace's", "sized for a closed loop, whose order is not the trace's"} {
		if !strings.Contains(text, want) {
			t.Errorf("plan lacks %q:\n%s", want, text)
		}
	}
}

// TestLoopOrderKeepsRAM replays 8 of the 20 users closed-loop: their
// requests run in another order than the trace's and keep more live in
// RAM than the trace's peak, which the arena now holds, so nothing is
// evicted. Before, the arena was the trace-order peak's and kvreplay
// evicted 8 to 11 objects, the warning blaming the trace.
func TestLoopOrderKeepsRAM(t *testing.T) {
	t.Parallel()
	tr := loopTraceFile(t)
	res, _ := replayDoc(t, "--closed-loop", "--users", "8", "--speed", "max", "--size-scale", "1/1024", "--tier-map", "Tier-2=null", "-q", "-o", "-", tr)
	w := strings.Join(res.Warnings, "\n")
	if n := res.Replay.CapacityEvictions; n != 0 || !res.Complete || strings.Contains(w, "reads named a tier") {
		t.Errorf("evicted %d objects (complete %v): %s", n, res.Complete, w)
	}
}
