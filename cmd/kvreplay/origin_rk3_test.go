package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/schema"
)

// TestPlanOfLaterTrace: kvreplay --duration over two traces, the second
// starting 10 s after the first, plans what the run replays: the window
// from the first row of either, so the later trace has no row in it, and
// the result says so.
// Before, --plan planned both traces' rows (each trace's window from its
// own first row: "0.8 s of trace ... all that the window can reach") while
// the run, paced from one origin, replayed the first trace's alone.
func TestPlanOfLaterTrace(t *testing.T) {
	dir := t.TempDir()
	a := writeTrace(t, dir, "a.csv",
		"0.000000,Write,65536,Tier-1,a0,Prefill",
		"0.100000,Write,65536,Tier-1,a1,Prefill",
		"0.200000,Write,65536,Tier-1,a2,Prefill")
	b := writeTrace(t, dir, "b.csv",
		"10.000000,Write,65536,Tier-1,b0,Prefill",
		"10.100000,Write,65536,Tier-1,b1,Prefill",
		"10.200000,Write,65536,Tier-1,b2,Prefill")
	// 0.2 s at --speed 10: the first 2 s of the traces.
	args := []string{"--speed", "10", "--duration", "0.2s", a, b}
	var out, errb bytes.Buffer
	if code := cli.Main("kvreplay", append([]string{"--plan"}, args...), &out, &errb, run); code != 0 {
		t.Fatalf("--plan: exit %d: %s", code, errb.String())
	}
	want := "the first 2.0 s of the traces, merged by time from the first row of any (3 of their 6 rows)"
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), " 0.000197 GB ") {
		t.Errorf("--plan:\n%s\nwant %q, and 0.000197 GB written (3 rows of 64 KiB)", out.String(), want)
	}
	res := filepath.Join(dir, "r.json")
	out.Reset()
	errb.Reset()
	if code := cli.Main("kvreplay", append([]string{"-o", res}, args...), &out, &errb, run); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	doc, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	var r schema.Result
	if err := json.Unmarshal(doc, &r); err != nil {
		t.Fatal(err)
	}
	var moved int64
	for _, c := range r.Cells {
		moved += c.LogicalBytes
	}
	if !r.Complete || r.Replay.RowsDone != 3 || moved != 3*65536 {
		t.Errorf("complete %v, %d rows done, %d bytes: want the 3 rows and 196608 bytes the plan planned", r.Complete, r.Replay.RowsDone, moved)
	}
	said := false
	for _, w := range r.Warnings {
		said = said || strings.HasPrefix(w, "--duration 200ms at --speed 10 reached no row of "+b+": ")
	}
	if !said {
		t.Errorf("warnings %q: want one saying the window reached no row of %s", r.Warnings, b)
	}
}
