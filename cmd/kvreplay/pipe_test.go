package main

import (
	"bytes"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestStdoutReaderGone: kvreplay whose stdout's reader went away (kvreplay
// --plan ... | head -1) ends quietly, killed by SIGPIPE as Unix tools are,
// having removed what it made (the replay's run directory in --dir); it
// said "write /dev/stdout: broken pipe" and exited 1.
func TestStdoutReaderGone(t *testing.T) {
	t.Parallel()
	_, bin := buildTools(t)
	tr := nvmeTrace(t, t.TempDir())
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"plan", []string{"--plan", tr}},
		{"replay", []string{"--speed", "max", tr}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			var stderr bytes.Buffer
			cmd := exec.Command(bin, append([]string{"--dir", dir}, tc.args...)...)
			cmd.Stdout, cmd.Stderr = w, &stderr
			err = cmd.Run()
			w.Close()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != syscall.SIGPIPE || stderr.Len() != 0 {
				t.Errorf("%v, stderr %q; want killed by SIGPIPE, nothing on stderr", err, stderr.String())
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("--dir holds %d entries after the run; want none", len(ents))
			}
		})
	}
}
