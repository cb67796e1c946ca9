package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdoutIsTrace: a result or a plan sent to standard output that is
// a trace of the run (kvreplay t.csv >> t.csv) is refused before any
// work, exit 2, the trace intact: it had appended the result's JSON to
// the trace, exit 0. Standard output that is another file is written.
func TestStdoutIsTrace(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	dir := t.TempDir()
	tr := nvmeTrace(t, dir)
	before, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	run := func(stdout string, args ...string) (int, string) {
		f, err := os.OpenFile(stdout, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var stderr bytes.Buffer
		cmd := exec.Command(kvreplay, args...)
		cmd.Stdout, cmd.Stderr = f, &stderr
		err = cmd.Run()
		return cmd.ProcessState.ExitCode(), stderr.String()
	}
	for _, args := range [][]string{
		{"--speed", "max", "--dir", dir, tr},
		{"--speed", "max", "--dir", dir, "-o", "-", tr},
		{"--plan", "--dir", dir, tr},
	} {
		code, stderr := run(tr, args...)
		after, _ := os.ReadFile(tr)
		if code != 2 || !strings.Contains(stderr, "(standard output): is trace "+tr+": refusing to overwrite an input of the run") || !bytes.Equal(after, before) {
			t.Errorf("%v >> trace: exit %d, %q, trace intact %v; want 2, the refusal, intact", args, code, stderr, bytes.Equal(after, before))
		}
	}
	out := filepath.Join(dir, "out.json")
	if code, stderr := run(out, "--speed", "max", "--dir", dir, tr); code != 0 {
		t.Errorf("> out.json: exit %d, %s", code, stderr)
	}
	if res := readResult(t, out); !res.Complete {
		t.Errorf("the result on stdout: complete %v", res.Complete)
	}
}
