package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKilledRunLeftoverReported kills a real kvreplay with SIGKILL in the
// middle of a run: its run directory and objects stay, and the next run in
// the same --dir reports them, neither reusing nor removing them, and
// leaves the user's files alone.
func TestKilledRunLeftoverReported(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	top := t.TempDir()
	if err := os.WriteFile(filepath.Join(top, "2_a"), []byte("the user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := writeTrace(t, t.TempDir(), "slow.csv",
		"0.000000,Write,8192,Tier-2,a,Prefill",
		"60.000000,Read,8192,Tier-2,a,Decode")
	cmd := exec.Command(kvreplay, "--mkdir", "--dir", top, "--speed", "1", "-o", filepath.Join(t.TempDir(), "r.json"), tr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var obj string
	for deadline := time.Now().Add(20 * time.Second); obj == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		m, _ := filepath.Glob(filepath.Join(top, "kvreplay-*", "2_a"))
		if len(m) == 1 {
			obj = m[0]
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if obj == "" {
		t.Fatal("the run wrote no object in its run directory")
	}
	left := filepath.Dir(obj)

	out, err := exec.Command(kvreplay, "--mkdir", "--dir", top, "--speed", "max", "-o", filepath.Join(t.TempDir(), "r.json"), tr).CombinedOutput()
	if err != nil {
		t.Fatalf("the next run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), left+" is left by an earlier run") {
		t.Errorf("the next run does not report %s:\n%s", left, out)
	}
	if fi, err := os.Stat(obj); err != nil || fi.Size() != 8192 {
		t.Errorf("the killed run's object: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(top, "2_a")); string(b) != "the user's" {
		t.Errorf("the user's 2_a: %q", b)
	}
	if entries, _ := os.ReadDir(top); len(entries) != 2 {
		t.Errorf("in --dir: %v, want the user's file and the leftover", entries)
	}
}

// TestVsFioKeepsDir runs bench/vs-fio.sh's small case at a tiny size in a
// --dir that holds files: they all survive, and the script leaves nothing
// of its own there.
func TestVsFioKeepsDir(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	for _, tool := range []string{"fio", "python3", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on PATH", tool)
		}
	}
	dir := t.TempDir()
	probe := exec.Command("fio", "--name=probe", "--ioengine=io_uring", "--direct=1", "--rw=write", "--bs=4k", "--size=1M",
		"--filename="+filepath.Join(dir, "probe"))
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("fio with io_uring and O_DIRECT does not run here: %v\n%s", err, out)
	}
	os.Remove(filepath.Join(dir, "probe"))
	mine := map[string]string{"keep.txt": "mine", "kvbench.extent": "mine too", "sub/small.extent": "and this"}
	for n, c := range mine {
		p := filepath.Join(dir, n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", filepath.Join("..", "..", "bench", "vs-fio.sh"), "--dir", dir, "--cases", "small",
		"--small-objects", "256", "--rounds", "1", "--kvreplay", kvreplay)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("vs-fio.sh: %v\n%s", err, out)
	}
	for n, c := range mine {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(b) != c {
			t.Errorf("%s: %q, %v; want %q", n, b, err, c)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("in --dir after the script: %v, want only what was there", entries)
	}
}

// TestGPUCheckRelativeDir runs bench/gpu-check.sh with stub tools on a
// machine with no GPU and a relative --dir: the script works in a scratch
// directory it makes there, cd's into it, and must still remove it (and
// only it) at the end. A relative --dir named nothing once the script
// had cd'd, so its scratch directory was left behind.
func TestGPUCheckRelativeDir(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on PATH")
	}
	top, bin := t.TempDir(), t.TempDir()
	for _, tool := range []string{"kvtrace", "kvreplay"} {
		if err := os.WriteFile(filepath.Join(bin, tool), []byte("#!/bin/sh\necho 'no GPU here'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(top, "scratch"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, "scratch", "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "bench", "gpu-check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script, "--bin", bin, "--dir", "scratch")
	cmd.Dir = top
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("gpu-check.sh with no GPU: %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "kvreplay --list-devices names no GPU") {
		t.Errorf("gpu-check.sh did not read kvreplay --list-devices:\n%s", out)
	}
	entries, _ := os.ReadDir(filepath.Join(top, "scratch"))
	if len(entries) != 1 || entries[0].Name() != "keep.txt" {
		t.Errorf("in --dir after the script: %v, want only keep.txt\n%s", entries, out)
	}
	if b, _ := os.ReadFile(filepath.Join(top, "scratch", "keep.txt")); string(b) != "mine" {
		t.Errorf("keep.txt: %q", b)
	}
}
