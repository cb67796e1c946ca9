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
// a size scale of 1/4096: every row moves its whole object.
func implied(t *testing.T, path string) (read, write [schema.NumTiers]int64, rows int64) {
	return impliedAt(t, path, scale)
}

// impliedAt is implied at any scale.
func impliedAt(t *testing.T, path string, scale float64) (read, write [schema.NumTiers]int64, rows int64) {
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

// checkTierBytes checks a result's logical bytes read and written per tier
// against what the trace implies.
func checkTierBytes(t *testing.T, res *schema.Result, read, write [schema.NumTiers]int64) {
	t.Helper()
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
}

// referenceTraces are the kv-cache.py traces of testdata/ and, where it is
// beside the checkout, ../shared/data/reference-traces/, each once.
func referenceTraces(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "reference", "*.csv*"))
	shared, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "data", "reference-traces", "*.csv*"))
	seen := map[string]bool{}
	var out []string
	for _, f := range append(shared, files...) {
		if b := filepath.Base(f); !seen[b] {
			seen[b] = true
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatal("no reference traces")
	}
	return out
}

// TestReferenceTracesAtScale replays every kv-cache.py trace at the scales
// users run (1/16 to 1/1024), at queue depth 1 and 256, with real RAM tiers
// sized as kvreplay sizes them: each must complete, with the logical bytes
// of every tier equal to the scaled trace's. Tier-2 is a real directory
// where its scaled bytes are small (without KVBENCH_LONG=1, at the deep
// queue only), the null backend otherwise. The arena
// is exactly the trace's peak, so a write that ran before the frees that
// precede it in the trace, or a fragmented arena, fails here.
//
// The 1/16 and 1/64 replays of the larger traces move hundreds of
// gigabytes through RAM (two and a half minutes of a 2-core machine): the
// cases that move more than 8 GiB run only with KVBENCH_LONG=1, never
// under the race detector (CI's go test -race), and CI runs this test
// again without it and with KVBENCH_LONG=1.
func TestReferenceTracesAtScale(t *testing.T) {
	t.Parallel()
	// Without KVBENCH_LONG=1, 1/64 at a deep queue and 1/1024 at depth 1;
	// with it (CI), every scale at both depths.
	scales, depths := []string{"1/64", "1/1024"}, map[string][]string{"1/64": {"256"}, "1/1024": {"1"}}
	if longTests {
		scales = []string{"1/16", "1/64", "1/256", "1/1024"}
		depths = nil
	}
	for _, f := range referenceTraces(t) {
		for _, sc := range scales {
			qds := []string{"1", "256"}
			if d, ok := depths[sc]; ok {
				qds = d
			}
			for _, qd := range qds {
				t.Run(filepath.Base(f)+"/"+sc+"/qd"+qd, func(t *testing.T) {
					v, err := cli.Fraction("--size-scale", sc)
					if err != nil {
						t.Fatal(err)
					}
					read, write, rows := impliedAt(t, f, v)
					var moved int64
					for tier := range read {
						moved += read[tier] + write[tier]
					}
					if raceEnabled && moved > 1<<30 {
						// The race detector looks for races, which the small
						// cases find as well; the bytes are checked without it.
						t.Skipf("moves %d MiB: too slow under the race detector (CI runs it without)", moved>>20)
					}
					if !longTests && moved > 8<<30 {
						t.Skipf("moves %d GiB: a long case, run with KVBENCH_LONG=1 (CI does)", moved>>30)
					}
					nvme := "null"
					dir := t.TempDir()
					if read[schema.TierNVMe]+write[schema.TierNVMe] <= 2<<30 && (longTests || qd != "1") {
						// At queue depth 1 every Tier-2 operation waits for
						// the disk in turn: 1 s alone, 103 s beside the
						// suite's other disk work. Its point is the RAM
						// tiers' order, so the null backend, unless long.
						nvme = "nvme"
					}
					res, _ := replayDoc(t, "--tier-map", "Tier-0=ram,Tier-1=ram,Tier-2="+nvme, "--mkdir", "--dir", filepath.Join(dir, "nvme"),
						"--size-scale", sc, "--speed", "max", "--queue-depth", qd, "-o", "-", f)
					if !res.Complete || res.Replay.RowsDone != rows || res.Errors.Count != 0 {
						t.Fatalf("complete %v (%s), %d of %d rows, errors %+v", res.Complete, res.IncompleteReason, res.Replay.RowsDone, rows, res.Errors)
					}
					if res.Replay.CapacityEvictions != 0 {
						t.Errorf("%d capacity evictions in a RAM tier sized to the trace's peak", res.Replay.CapacityEvictions)
					}
					checkTierBytes(t, res, read, write)
				})
			}
		}
	}
}

// TestReplayReferenceTraces replays every reference trace at 1/4096 of its
// size, as fast as possible, into a temporary directory (Tier-0 in RAM),
// and checks the logical bytes read and written per tier equal the trace's.
func TestReplayReferenceTraces(t *testing.T) {
	t.Parallel()
	files := referenceTraces(t)
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
			res, _ := replayDoc(t, "--tier-map", "Tier-0=ram,Tier-1=ram,Tier-2=nvme", "--mkdir", "--dir", filepath.Join(dir, "nvme"),
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
			checkTierBytes(t, res, read, write)
			if !strings.Contains(strings.Join(res.Warnings, "\n"), "SCALED RUN") {
				t.Error("a scaled run does not say so")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		}
	}
}
