package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// asProcess, set in a child's environment, makes the test binary run
// kvtrace's main with the arguments it holds (one a line) instead of its
// tests: a real process, whose stdout is whatever the parent gave it.
const asProcess = "KVTRACE_TEST_AS_PROCESS"

// TestTraceToDevNullProcess: `kvtrace ... -o - > /dev/null` writes the trace
// and exits 0. Its stdout is /dev/null, a character device that is no
// terminal: a check on the file's mode alone took it for one and refused
// to write a trace to it (cli.IsTerminal asks the terminal ioctls).
func TestTraceToDevNullProcess(t *testing.T) {
	if args := os.Getenv(asProcess); args != "" {
		os.Args = append([]string{"kvtrace"}, strings.Split(args, "\n")...)
		main() // exits
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTraceToDevNullProcess$")
	cmd.Env = append(os.Environ(), asProcess+"="+strings.Join(append([]string{"-o", "-"}, small...), "\n"))
	cmd.Stdout = null
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kvtrace -o - > /dev/null: %v: %s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "terminal") {
		t.Errorf("stderr speaks of a terminal: %s", stderr.String())
	}
}
