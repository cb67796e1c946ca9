package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cli/clitest"
	"github.com/kvbench/kvbench/schema"
)

// TestOutputNeverAnInput: -o that is a trace, a trace's sidecar, or a link
// to one, is refused with exit 2 before any work, the input unchanged.
func TestOutputNeverAnInput(t *testing.T) {
	dir := t.TempDir()
	tr := nvmeTrace(t, dir)
	side := tr + cli.SidecarSuffix
	if err := os.WriteFile(side, []byte(`{"format_version":1,"tool":"kvtrace"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.csv")
	if err := os.Link(tr, hard); err != nil {
		t.Fatal(err)
	}
	soft := filepath.Join(dir, "soft.json")
	if err := os.Symlink(side, soft); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(tr)
	sideBefore, _ := os.ReadFile(side)
	for _, out := range []string{tr, side, hard, soft, filepath.Join(dir, ".", "t.csv")} {
		code, _, stderr := kvreplay("--speed", "max", "-o", out, tr)
		if code != 2 || !strings.Contains(stderr, "refusing to overwrite an input") {
			t.Errorf("-o %s: exit %d, %q; want 2 and a refusal", out, code, stderr)
		}
	}
	// A trace without a sidecar: -o at the sidecar's path is refused too.
	other := writeTrace(t, dir, "other.csv", "0.0,Write,4096,Tier-1,a,Prefill")
	if code, _, stderr := kvreplay("--speed", "max", "-o", other+cli.SidecarSuffix, other); code != 2 || !strings.Contains(stderr, "is the sidecar of trace") {
		t.Errorf("-o at a missing sidecar's path: exit %d, %q", code, stderr)
	}
	if b, _ := os.ReadFile(tr); !bytes.Equal(b, before) {
		t.Error("the trace changed")
	}
	if b, _ := os.ReadFile(side); !bytes.Equal(b, sideBefore) {
		t.Error("the sidecar changed")
	}
	if _, err := os.Stat(other + cli.SidecarSuffix); err == nil {
		t.Error("a refused run wrote at the sidecar's path")
	}
}

// TestOutputSpecialFiles: -o into a character device or a FIFO writes in
// place (the FIFO's reader gets the document) and leaves them what they
// were; a system path is refused unless --allow-system-path.
func TestOutputSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	tr := nvmeTrace(t, dir)
	t.Run("dev-null", func(t *testing.T) {
		if code, _, stderr := kvreplay("--speed", "max", "-o", "/dev/null", tr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("/dev/null is now %v (%v)", fi.Mode(), err)
		}
		if _, err := os.Stat("/dev/null" + cli.SidecarSuffix); err == nil {
			t.Fatal("a file appeared beside /dev/null")
		}
	})
	t.Run("private-device", func(t *testing.T) {
		dev := filepath.Join(t.TempDir(), "null")
		if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Skipf("cannot make a device node (needs root): %v", err)
		}
		if code, _, stderr := kvreplay("--speed", "max", "-o", dev, tr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if fi, err := os.Lstat(dev); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("the device is now %v (%v)", fi.Mode(), err)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		fifo, got := clitest.FIFO(t)
		if code, _, stderr := kvreplay("--speed", "max", "-o", fifo, tr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var res schema.Result
		if err := json.Unmarshal(<-got, &res); err != nil || !res.Complete {
			t.Fatalf("the FIFO's reader got no complete result: %v", err)
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Fatalf("the FIFO is now %v (%v)", fi.Mode(), err)
		}
	})
	t.Run("system-path", func(t *testing.T) {
		out := "/etc/kvbench-test-" + filepath.Base(dir) + ".json"
		code, _, stderr := kvreplay("--speed", "max", "-o", out, tr)
		if code != 2 || !strings.Contains(stderr, "system directory /etc") || !strings.Contains(stderr, "--allow-system-path") {
			t.Fatalf("exit %d, %q; want 2 naming /etc and the override", code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			os.Remove(out)
			t.Fatal("the result was written under /etc")
		}
	})
}

// TestMissingDir: a --dir that does not exist is an error naming it (a
// typo, or a drive not mounted, must not benchmark another disk); --mkdir
// makes it, and removes what it made afterwards.
func TestMissingDir(t *testing.T) {
	top := t.TempDir()
	tr := nvmeTrace(t, top)
	missing := filepath.Join(top, "mnt", "nvme")
	code, _, stderr := kvreplay("--dir", missing, "--speed", "max", "-o", filepath.Join(top, "r.json"), tr)
	if code != 2 || !strings.Contains(stderr, "--dir "+missing+": does not exist: create it, or pass --mkdir") {
		t.Fatalf("exit %d, %q; want 2 and the missing --dir named", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(top, "mnt")); err == nil {
		t.Fatal("a refused run made directories")
	}
	if code, _, stderr := kvreplay("--dir", missing, "--mkdir", "--speed", "max", "-o", filepath.Join(top, "r.json"), tr); code != 0 {
		t.Fatalf("--mkdir: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(top, "mnt")); err == nil {
		t.Error("--mkdir left the directories it made")
	}
}

// loopDevice attaches a loop device over file, or skips the test where
// that cannot be done (not root, no losetup, no loop driver).
func loopDevice(t *testing.T, file string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("loop devices need root")
	}
	out, err := exec.Command("losetup", "-f", "--show", file).Output()
	if err != nil {
		t.Skipf("losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
	return dev
}

// TestBlockDeviceGuard: a block device without --allow-device is refused
// with exit 2 before anything of the run is printed; with it, a loop
// device whose backing file is the trace is refused, the trace unchanged.
func TestBlockDeviceGuard(t *testing.T) {
	dir := t.TempDir()
	tr := nvmeTrace(t, dir)
	// A trace of whole 512-byte sectors, which the loop driver maps
	// whole (only the refusal is tested: it is never replayed).
	padded := writeTrace(t, dir, "padded.csv", strings.Repeat("0.003000,Delete,8192,Tier-2,zz,Decode\n", 200)[:512*13-len(traceHeader)-1])
	before, _ := os.ReadFile(padded)
	dev := loopDevice(t, padded)
	code, _, stderr := kvreplay("--layout", "extent", "--device", dev, "--speed", "max", "-o", filepath.Join(dir, "r.json"), tr)
	if code != 2 || !strings.Contains(stderr, "a block device") || strings.Contains(stderr, "writing") {
		t.Fatalf("without --allow-device: exit %d, %q; want 2 and the refusal alone", code, stderr)
	}
	code, _, stderr = kvreplay("--layout", "extent", "--device", dev, "--allow-device", "--speed", "max", "-o", filepath.Join(dir, "r.json"), padded)
	if code != 2 || !strings.Contains(stderr, "a loop device over the trace "+padded) {
		t.Fatalf("over the trace: exit %d, %q; want 2 naming the trace", code, stderr)
	}
	if b, _ := os.ReadFile(padded); !bytes.Equal(b, before) {
		t.Fatal("the trace changed")
	}
}
