package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cli/clitest"
)

// TestBinaryToTerminal: --format xlsx refuses a terminal (exit 2, nothing
// written) and writes to a pipe, to -o FILE and to -o -.
func TestBinaryToTerminal(t *testing.T) {
	tty := clitest.Terminal(t)
	var errb bytes.Buffer
	code := cli.Main("kvreport", []string{"--format", "xlsx", docA}, tty, &errb, runWith(strings.NewReader("")))
	if code != cli.ExitUsage || !strings.Contains(errb.String(), "terminal") {
		t.Errorf("xlsx to a terminal: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := cli.Main("kvreport", []string{"--format", "text", docA}, tty, &errb, runWith(strings.NewReader(""))); code != 0 {
		t.Errorf("text to a terminal: exit %d, stderr %q", code, errb.String())
	}
	for _, args := range [][]string{{"--format", "xlsx", docA}, {"--format", "xlsx", "-o", "-", docA}} {
		code, out, errs := kvreport(t, "", args...)
		if code != 0 || !strings.HasPrefix(out, "PK") {
			t.Errorf("%v to a pipe: exit %d, stderr %q, %d bytes", args, code, errs, len(out))
		}
	}
	p := filepath.Join(t.TempDir(), "r.xlsx")
	if code, _, errs := kvreport(t, "", "--format", "xlsx", "-o", p, docA); code != 0 {
		t.Fatalf("-o FILE: exit %d: %s", code, errs)
	}
	if b, err := os.ReadFile(p); err != nil || !bytes.HasPrefix(b, []byte("PK")) {
		t.Errorf("-o FILE: %v, %.10q", err, b)
	}
}
