package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
)

// TestListDevicesAnywhere: --list-devices succeeds on a machine without
// GPUs; a Tier-0 mapped to gpu stops before any I/O naming the way out.
func TestListDevicesAnywhere(t *testing.T) {
	var out, errb bytes.Buffer
	if code := cli.Main("kvreplay", []string{"--list-devices"}, &out, &errb, run); code != 0 || !strings.Contains(out.String(), "CUDA runtime:") {
		t.Errorf("--list-devices: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	tr := filepath.Join(t.TempDir(), "t.csv")
	os.WriteFile(tr, []byte("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n0,Write,4096,Tier-0,k,Prefill\n"), 0o644)
	if code := cli.Main("kvreplay", []string{"--tier-map", "Tier-0=gpu", tr}, &out, &errb, run); code != 2 || !strings.Contains(errb.String(), "--tier-map Tier-0=ram") {
		t.Errorf("Tier-0=gpu: exit %d: %s", code, errb.String())
	}
}

// TestListDevicesFakeRuntime runs the static kvreplay binary (no cgo)
// with a fake CUDA runtime on its library path: it loads it at run time
// and lists its devices.
func TestListDevicesFakeRuntime(t *testing.T) {
	_, kvreplay := buildTools(t)
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the fake CUDA runtime")
	}
	dir := t.TempDir()
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", filepath.Join(dir, "libcudart.so"),
		filepath.Join("..", "..", "internal", "cuda", "testdata", "fakecudart.c")).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	cmd := exec.Command(kvreplay, "--list-devices")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir, "FAKE_CUDA_DEVICES=2")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "GPU 1: Fake GPU, 1.00 GiB") || !strings.Contains(string(out), "runtime 12.2, driver 12.4") {
		t.Errorf("kvreplay --list-devices with the fake runtime: %v\n%s", err, out)
	}
}
