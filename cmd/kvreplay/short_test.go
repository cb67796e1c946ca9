package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// TestShortTraceIncomplete: a trace whose sidecar counts more rows than it
// has (a plain CSV cut at a line boundary, which parses fine, or a zstd
// trace of fewer rows) is refused by the prescan, which reads every row:
// exit 2 before any I/O, no result (it had been replayed, then found
// short). Without the prescan it replays into a result marked incomplete
// with the reason, never a PASS, and kvreplay exits 1 as for any run that
// did not complete. The whole trace with the same sidecar is complete.
func TestShortTraceIncomplete(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	rows := len(lines) - 1
	cut := strings.Join(lines[:1+rows/2], "")
	var z bytes.Buffer
	zw, err := zstd.NewWriter(&z)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write([]byte(cut))
	zw.Close()
	want := fmt.Sprintf("%d of %d rows: the trace ended before its sidecar's count", rows/2, rows)
	refused := fmt.Sprintf("refused: has %d rows and its sidecar counts %d: the trace is not the one its sidecar describes", rows/2, rows)
	for _, tt := range []struct {
		name  string
		file  string
		data  []byte
		flags []string
		want  string // "" for a complete run
	}{
		{"plain csv cut at a line boundary", "cut.csv", []byte(cut), nil, refused},
		{"the same without the prescan", "cut.csv", []byte(cut), []string{"--no-prescan"}, want},
		{"zstd", "cut.csv.zst", z.Bytes(), nil, refused},
		{"whole", "whole.csv", data, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tr := filepath.Join(dir, tt.file)
			if err := os.WriteFile(tr, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			meta := &trace.Meta{FormatVersion: trace.FormatVersion, Tool: "kvtrace", Counts: trace.MetaCounts{Rows: int64(rows)}}
			if err := trace.WriteMeta(tr, meta); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out.json")
			args := append([]string{"--dir", dir, "--size-scale", "1/4096", "--speed", "max", "-o", out}, tt.flags...)
			code, _, errs := kvreplay(append(args, tr)...)
			if msg, ok := strings.CutPrefix(tt.want, "refused: "); ok {
				entries, _ := os.ReadDir(dir)
				if code != 2 || !strings.Contains(errs, tt.file+" "+msg) || len(entries) != 2 {
					t.Errorf("exit %d, stderr %q, %d entries in --dir; want 2, %q, the trace and its sidecar alone", code, errs, len(entries), msg)
				}
				return
			}
			raw, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("exit %d, no result: %v: %s", code, err, errs)
			}
			var res schema.Result
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if code != 0 || !res.Complete {
					t.Errorf("exit %d, complete %v: %s", code, res.Complete, errs)
				}
				return
			}
			if code != 1 || !strings.Contains(errs, tt.file+": "+tt.want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stderr %q: want 1 and %q", code, errs, tt.want)
			}
			// INCOMPLETE, or FAIL where a criterion failed too (a loaded
			// machine): never PASS, and the health says why.
			h := res.Summary.StorageHealth
			if res.Complete || !strings.Contains(res.IncompleteReason, tt.want) ||
				(h.OverallStatus != results.HealthIncomplete && h.OverallStatus != results.HealthFail) ||
				!slices.ContainsFunc(h.Reasons, func(r string) bool { return strings.HasPrefix(r, "incomplete: ") }) ||
				res.Replay.RowsDone != int64(rows/2) {
				t.Errorf("complete %v, reason %q, health %q %q, rows done %d", res.Complete, res.IncompleteReason,
					h.OverallStatus, h.Reasons, res.Replay.RowsDone)
			}
		})
	}
}
