package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
)

// TestDotDotOutputIsChecked: an output path whose ".." follows a missing
// directory or a symbolic link is checked where the kernel (and
// outfile.Create) puts it. "nodir/../t.csv" was taken for a new file while
// the write went to t.csv, the run's input; "link/../bin/env", link a link
// to /usr/bin, is /usr/bin/env, which CheckPath saw as DIR/bin/env.
// (Nothing here writes: Check and CheckOutput only look.)
func TestDotDotOutputIsChecked(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(in, []byte("trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	sep := string(filepath.Separator)
	out := dir + sep + "nodir" + sep + ".." + sep + "t.csv"
	files := cli.Files{Inputs: []cli.File{{Flag: "trace", Path: in, Sidecar: true}}, Outputs: []cli.File{{Flag: "-o", Path: out}}}
	if errs := files.Check(); len(errs) == 0 {
		t.Errorf("-o %s with the input %s: no error", out, in)
	}

	if fi, err := os.Stat("/usr/bin/env"); err != nil || !fi.Mode().IsRegular() {
		t.Skip("no /usr/bin/env")
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("/usr/bin", link); err != nil {
		t.Fatal(err)
	}
	sys := link + sep + ".." + sep + "bin" + sep + "env"
	if err := cli.CheckOutput("-o", sys, false); err == nil {
		t.Errorf("CheckOutput(%s) = nil: the path is /usr/bin/env", sys)
	}
	if err := cli.CheckPath("--dir", link+sep+".."+sep+"share"); err == nil {
		t.Errorf("CheckPath(%s) = nil: the path is /usr/share", link+sep+".."+sep+"share")
	}
}
