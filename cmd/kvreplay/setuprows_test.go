package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// TestPreconditionRunsAsSetup: kvtrace --precondition writes its
// preconditioning rows (precond_*) before the sidecar's measured_from_s;
// kvreplay runs them as setup, before its clock: counted in setup_rows,
// in no cell, and the cells count exactly the rows after it (among them
// the run's demotions of precond_ objects).
func TestPreconditionRunsAsSetup(t *testing.T) {
	t.Parallel()
	kvtrace, kvreplay := buildTools(t)
	dir := t.TempDir()
	tr := filepath.Join(dir, "pc.csv")
	if out, err := exec.Command(kvtrace, "--num-users", "4", "--duration", "5", "--generation-mode", "none",
		"--gpu-mem-gb", "0", "--cpu-mem-gb", "1", "--precondition", "--precondition-size-gb", "2", "-o", tr).CombinedOutput(); err != nil {
		t.Fatalf("kvtrace: %v\n%s", err, out)
	}
	meta, err := trace.ReadMeta(tr)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Duration(meta.MeasuredFrom * float64(time.Second))
	f, err := os.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var setup, precond, measured int64
	r := trace.NewReader(f)
	for {
		var rec schema.Record
		if err := r.Read(&rec); err != nil {
			break
		}
		if rec.Time >= from {
			measured++ // precond_ objects included, demoted in the run
			continue
		}
		setup++
		if strings.HasPrefix(string(rec.Key), "precond_") {
			precond++
		}
	}
	if precond == 0 || setup != precond {
		t.Fatalf("the trace has %d rows before measured_from_s %v and %d precond_ rows: want them the same, above 0", setup, from, precond)
	}
	out, err := exec.Command(kvreplay, "--size-scale", "1/256", "--speed", "max", "--mkdir", "--dir", filepath.Join(dir, "d"),
		"-q", "-o", filepath.Join(dir, "r.json"), tr).CombinedOutput()
	if err != nil {
		t.Fatalf("kvreplay: %v\n%s", err, out)
	}
	res := readResult(t, filepath.Join(dir, "r.json"))
	var ops int64
	for _, c := range res.Cells {
		ops += c.Ops
	}
	if res.Replay.SetupRows != setup || res.Replay.RowsDone != measured || ops != measured {
		t.Errorf("setup_rows %d, rows_done %d, cells' ops %d; want %d setup rows (the precond_ rows) and %d measured",
			res.Replay.SetupRows, res.Replay.RowsDone, ops, setup, measured)
	}
}
