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
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/schema"
)

const traceHeader = "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n"

// writeTrace writes a trace of rows (without the header) into dir.
func writeTrace(t *testing.T, dir, name string, rows ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(traceHeader+strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// nvmeTrace writes, reads and deletes key a on Tier-2, whose object file
// in the directory layout is 2_a.
func nvmeTrace(t *testing.T, dir string) string {
	return writeTrace(t, dir, "t.csv",
		"0.000000,Write,8192,Tier-2,a,Prefill",
		"0.001000,Read,8192,Tier-2,a,Decode",
		"0.002000,Write,4096,Tier-2,b,Prefill",
		"0.003000,Delete,8192,Tier-2,a,Decode")
}

func kvreplay(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = cli.Main("kvreplay", args, &out, &errb, run)
	return code, out.String(), errb.String()
}

// TestDeviceGuard: --device never overwrites the trace or the result, nor
// an existing file with data unless --device-overwrite says so; a refusal
// exits 2 and leaves the file as it was.
func TestDeviceGuard(t *testing.T) {
	data := bytes.Repeat([]byte("user data "), 100<<10) // 1000 KiB
	tests := []struct {
		name   string
		device string // in the test's directory; "TRACE" and "OUT" name those
		data   []byte // the device's bytes before; nil: no file
		flags  []string
		code   int
		stderr string
	}{
		{"existing file", "dev", data, nil, 2, "--device-overwrite"},
		{"existing file allowed", "dev", data, []string{"--device-overwrite"}, 0, ""},
		{"empty file", "dev", []byte{}, nil, 2, "--device-overwrite"},
		{"empty file allowed", "dev", []byte{}, []string{"--device-overwrite"}, 0, ""},
		{"new file", "dev", nil, nil, 0, ""},
		{"the trace", "TRACE", nil, []string{"--device-overwrite"}, 2, "is the trace"},
		{"a link to the trace", "link", nil, []string{"--device-overwrite"}, 2, "is the trace"},
		{"the result", "OUT", data, []string{"--device-overwrite"}, 2, "is the result file"},
		{"the result not written yet", "OUT", nil, []string{"--device-overwrite"}, 2, "is the result file"},
		{"a directory", "sub", nil, nil, 2, "a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tr := nvmeTrace(t, dir)
			out := filepath.Join(dir, "r.json")
			dev := filepath.Join(dir, tt.device)
			switch tt.device {
			case "TRACE":
				dev = tr
			case "OUT":
				dev = out
			case "link":
				if err := os.Symlink(tr, dev); err != nil {
					t.Fatal(err)
				}
			case "sub":
				os.Mkdir(dev, 0o755)
			}
			if tt.data != nil {
				if err := os.WriteFile(dev, tt.data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.ReadFile(dev)
			traceBefore, _ := os.ReadFile(tr)
			args := append([]string{"--layout", "extent", "--device", dev, "--speed", "max", "-o", out}, tt.flags...)
			code, _, stderr := kvreplay(append(args, tr)...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.stderr)
			}
			if b, _ := os.ReadFile(tr); !bytes.Equal(b, traceBefore) {
				t.Error("the trace changed")
			}
			if code == 2 {
				if after, _ := os.ReadFile(dev); !bytes.Equal(after, before) {
					t.Errorf("a refused --device changed: %d bytes, were %d", len(after), len(before))
				}
				if tt.device != "OUT" {
					if _, err := os.Stat(out); err == nil {
						t.Error("a refused run wrote its result")
					}
				}
			}
		})
	}
}

// TestDirLeavesUserFiles: kvreplay works in a run directory of its own
// inside --dir: a file of the user's named as kvreplay names object files
// (2_a for key a on Tier-2) survives byte for byte, and the run leaves
// nothing behind, in either layout, in an existing --dir and a new one
// (--mkdir).
func TestDirLeavesUserFiles(t *testing.T) {
	for _, layout := range []string{"dir", "extent"} {
		for _, sub := range []string{"", "new/deeper"} {
			t.Run(layout+"/"+sub, func(t *testing.T) {
				top := t.TempDir()
				tr := nvmeTrace(t, t.TempDir())
				mine := map[string]string{"2_a": "the user's a", "2_b": "the user's b", "kvbench.extent": "the user's extent"}
				for n, c := range mine {
					if err := os.WriteFile(filepath.Join(top, n), []byte(c), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				dir := filepath.Join(top, sub)
				code, stdout, stderr := kvreplay("--layout", layout, "--dir", dir, "--mkdir", "--speed", "max", "-o", "-", tr)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				var res schema.Result
				if err := json.Unmarshal([]byte(stdout), &res); err != nil {
					t.Fatal(err)
				}
				if !res.Complete || res.Replay.RowsDone != 4 {
					t.Fatalf("complete %v, %d rows", res.Complete, res.Replay.RowsDone)
				}
				for n, c := range mine {
					if b, err := os.ReadFile(filepath.Join(top, n)); err != nil || string(b) != c {
						t.Errorf("%s: %q, %v; want %q", n, b, err, c)
					}
				}
				entries, _ := os.ReadDir(top)
				if len(entries) != len(mine) {
					t.Errorf("left in --dir: %v", entries)
				}
				var paths []string
				for _, p := range res.Host.TierPaths {
					paths = append(paths, p.Path)
				}
				if len(paths) != 1 || !strings.HasPrefix(paths[0], filepath.Join(dir, "kvreplay-")) {
					t.Errorf("tier paths %v, want kvreplay's run directory in %s", paths, dir)
				}
			})
		}
	}
}

// TestLeftoverRunDir: a run directory of kvreplay's naming that no run
// holds (one a killed run left) is reported, on stderr and in the result's
// warnings, and neither reused nor removed; --keep's run directory is one
// too, for the next run.
func TestLeftoverRunDir(t *testing.T) {
	top := t.TempDir()
	tr := nvmeTrace(t, t.TempDir())
	left := filepath.Join(top, "kvreplay-4242-123456")
	if err := os.Mkdir(left, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, "2_a"), []byte("left over"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := kvreplay("--dir", top, "--speed", "max", "--keep", "-o", "-", tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res schema.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "warning: --dir "+top+": "+left+" is left by an earlier run") {
		t.Errorf("stderr %q does not report %s", stderr, left)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), left) {
		t.Errorf("result warnings %q do not report %s", res.Warnings, left)
	}
	if b, err := os.ReadFile(filepath.Join(left, "2_a")); err != nil || string(b) != "left over" {
		t.Errorf("the leftover's file: %q, %v", b, err)
	}
	kept := res.Host.TierPaths[0].Path
	if !strings.Contains(stderr, "--keep: the NVMe tier's objects are in "+kept) {
		t.Errorf("stderr %q does not say where --keep kept the objects (%s)", stderr, kept)
	}
	if b, err := os.ReadFile(filepath.Join(kept, "2_b")); err != nil || len(b) != 4096 {
		t.Errorf("the kept object 2_b: %d bytes, %v", len(b), err)
	}
	_, _, stderr = kvreplay("--dir", top, "--speed", "max", "-o", "-", tr)
	if !strings.Contains(stderr, left) || !strings.Contains(stderr, kept) {
		t.Errorf("the next run reports %q, want %s and %s", stderr, left, kept)
	}
}

// TestFreeSpaceMissingDir: the free-space check counts the file system that
// will hold a --dir not made yet.
func TestFreeSpaceMissingDir(t *testing.T) {
	top := t.TempDir()
	tr := writeTrace(t, top, "huge.csv", fmt.Sprintf("0.0,Write,%d,Tier-2,a,Prefill", int64(1)<<49))
	for _, dir := range []string{top, filepath.Join(top, "not", "yet")} {
		code, _, stderr := kvreplay("--dir", dir, "--mkdir", "--speed", "max", "-o", filepath.Join(top, "r.json"), tr)
		if code != 2 || !strings.Contains(stderr, "live on the NVMe tier at its peak") {
			t.Errorf("--dir %s: exit %d, %q; want 2 and the free-space check", dir, code, stderr)
		}
	}
	if entries, _ := os.ReadDir(top); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestUnwritableOutputFailsEarly: -o is created before the replay, so that
// a path that cannot be written stops a paced replay at once.
func TestUnwritableOutputFailsEarly(t *testing.T) {
	dir := t.TempDir()
	tr := writeTrace(t, dir, "slow.csv",
		"0.000000,Write,4096,Tier-1,a,Prefill",
		"20.000000,Read,4096,Tier-1,a,Decode")
	for _, out := range []string{filepath.Join(dir, "missing", "r.json"), dir} {
		began := time.Now()
		code, _, stderr := kvreplay("--speed", "1", "-o", out, tr)
		if took := time.Since(began); code != 2 || took > 5*time.Second || !strings.HasPrefix(stderr, "kvreplay: -o "+out+": ") {
			t.Errorf("-o %s: exit %d after %v, %q; want 2 at once, naming -o", out, code, took, stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestInputErrorsExit2: every usage or input error exits 2 with a message
// that names the flag or the file.
func TestInputErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	good := nvmeTrace(t, dir)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	rows := []string{}
	for i := range 6000 {
		row := fmt.Sprintf("%.6f,Write,4096,Tier-1,k%d,Prefill", float64(i)/1e4, i)
		if i == 4998 {
			row = "x,Write,4096,Tier-1,bad,Prefill"
		}
		rows = append(rows, row)
	}
	bad := writeTrace(t, dir, "bad5000.csv", rows...)
	big := writeTrace(t, dir, "big.csv", "0.0,Write,4096,Tier-1,a,Prefill", "0.1,Write,9223372036854775807,Tier-1,b,Prefill")
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"directory as the trace", []string{dir}, "trace " + dir + ": a directory"},
		{"--dir a file", []string{"--dir", file, good}, "--dir " + file + ": not a directory"},
		{"--dir under a file", []string{"--dir", filepath.Join(file, "sub"), good}, "--dir " + filepath.Join(file, "sub") + ": not a directory"},
		{"refused --device", []string{"--layout", "extent", "--device", file, good}, "--device " + file + ": an existing file"},
		{"malformed row, prescanned", []string{bad}, bad + ":5000: column 1 (Timestamp)"},
		{"malformed row mid-stream", []string{"--no-prescan", bad}, bad + ":5000: column 1 (Timestamp)"},
		{"size near 2^63", []string{big}, big + ":3: column 3 (Object_Size_Bytes): \"9223372036854775807\": size too large"},
		{"size near 2^63 mid-stream", []string{"--no-prescan", big}, big + ":3: column 3 (Object_Size_Bytes)"},
		{"size near 2^63 scaled", []string{"--size-scale", "1/4", big}, big + ":3: column 3 (Object_Size_Bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--speed", "max", "-o", filepath.Join(t.TempDir(), "r.json")}, tt.args...)
			code, _, stderr := kvreplay(args...)
			if code != 2 || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.stderr)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || strings.Contains(stderr, ".tmp") {
				t.Errorf("stderr %q: want one line, naming no temporary file", stderr)
			}
		})
	}
}

// TestPrewriteAndFsyncRecorded: the extent layout writes its new file once
// before the replay unless --prewrite=false, which the result then warns
// of; --fsync is recorded with the syncs it made (one per NVMe write).
func TestPrewriteAndFsyncRecorded(t *testing.T) {
	dir := t.TempDir()
	tr := nvmeTrace(t, dir)
	for _, tc := range []struct {
		flags         []string
		warned, fsync bool
		syncs         int64
	}{
		{nil, false, false, 0},
		{[]string{"--prewrite=false"}, true, false, 0},
		{[]string{"--fsync"}, false, true, 2},
	} {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			args := append([]string{"--speed", "max", "--layout", "extent", "--dir", t.TempDir(), "-q", "-o", "-"}, tc.flags...)
			res, _ := replayDoc(t, append(args, tr)...)
			warned := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "not written before the replay") })
			if warned != tc.warned || res.Replay.Fsync != tc.fsync || res.Replay.Syncs != tc.syncs {
				t.Errorf("unwritten warning %t, fsync %t with %d syncs; want %t, %t, %d (warnings %q)",
					warned, res.Replay.Fsync, res.Replay.Syncs, tc.warned, tc.fsync, tc.syncs, res.Warnings)
			}
		})
	}
}
