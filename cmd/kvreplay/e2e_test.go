package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

const scale = 1.0 / 4096

// implied sums the logical bytes a trace implies per tier and operation at
// a size scale: every row moves its whole object.
func implied(t *testing.T, path string) (read, write [schema.NumTiers]int64, rows int64) {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rec schema.Record
	for {
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		rows++
		n := int64(float64(rec.Size) * scale)
		switch rec.Op {
		case schema.OpRead:
			read[rec.Tier] += n
		case schema.OpWrite:
			write[rec.Tier] += n
		}
	}
}

func replayDoc(t *testing.T, args ...string) (*schema.Result, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main("kvreplay", args, &out, &errb, run)
	if code != 0 {
		t.Fatalf("kvreplay %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	var res schema.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("result: %v\n%s", err, out.String())
	}
	return &res, errb.String()
}

// TestReplayReferenceTraces replays every reference trace at 1/4096 of its
// size, as fast as possible, into a temporary directory (Tier-0 in RAM),
// and checks the logical bytes read and written per tier equal the trace's.
func TestReplayReferenceTraces(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "reference", "*.csv*"))
	if shared, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "data", "reference-traces", "*.csv*")); len(shared) > 0 {
		files = shared
	}
	if len(files) == 0 {
		t.Fatal("no reference traces")
	}
	type combo struct{ engine, layout string }
	all := []combo{{"uring", "dir"}, {"psync", "dir"}, {"uring", "extent"}, {"psync", "extent"}}
	for _, f := range files {
		combos := all[:1]
		if strings.Contains(f, "u10_d30") || strings.Contains(f, "decodeonly") {
			combos = all // both engines on both layouts, for the smaller traces
		}
		for _, c := range combos {
			t.Run(filepath.Base(f)+"/"+c.engine+"/"+c.layout, func(t *testing.T) {
				checkReplay(t, f, c.engine, c.layout)
			})
		}
	}
}

// checkReplay replays f with an engine and layout and checks its bytes.
func checkReplay(t *testing.T, f, engine, layout string) {
	{
		{
			read, write, rows := implied(t, f)
			dir := t.TempDir()
			res, _ := replayDoc(t, "--tier-map", "Tier-0=ram,Tier-1=ram,Tier-2=nvme", "--dir", filepath.Join(dir, "nvme"),
				"--size-scale", "1/4096", "--speed", "max", "--block-size", "256KiB", "--verify",
				"--engine", engine, "--layout", layout, f)
			if res.Replay.Engine != engine {
				t.Errorf("engine %s ran, asked for %s (warnings %v)", res.Replay.Engine, engine, res.Warnings)
			}
			var readPhys int64
			for _, tt := range res.Tiers {
				readPhys += tt.PhysicalReadBytes
			}
			if res.Replay.VerifiedBytes != readPhys {
				t.Errorf("verified %d of %d bytes read", res.Replay.VerifiedBytes, readPhys)
			}
			if !res.Complete || res.Replay.RowsDone != rows || res.Errors.Count != 0 {
				t.Fatalf("complete %v, %d of %d rows, errors %+v", res.Complete, res.Replay.RowsDone, rows, res.Errors)
			}
			got := map[string][2]int64{}
			for _, tt := range res.Tiers {
				got[tt.Tier] = [2]int64{tt.ReadBytes, tt.WriteBytes}
			}
			for tier := range schema.Tier(schema.NumTiers) {
				g := got[tier.String()]
				if g[0] != read[tier] || g[1] != write[tier] {
					t.Errorf("%s: read %d written %d, the trace implies %d and %d", tier, g[0], g[1], read[tier], write[tier])
				}
			}
			if !strings.Contains(strings.Join(res.Warnings, "\n"), "SCALED RUN") {
				t.Error("a scaled run does not say so")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		}
	}
}
