package outfile_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/internal/outfile"
)

// TestDotDotIsTheKernels: ".." in an output path is the parent of what the
// kernel reached, not a lexical step back: "nodir/../a.json" names nothing
// the kernel can create (nodir is missing), and "sub/../a.json", sub a link
// to other/dir, names other/a.json. Cleaned lexically, both were
// dir/a.json, an existing file that Create replaced while Classify called
// the path a new file (the checks of cli.Files saw no existing file there,
// so an input at dir/a.json was overwritten).
func TestDotDotIsTheKernels(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "a.json")
	if err := os.WriteFile(existing, []byte("input"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "other", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("other", "dir"), filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	sep := string(filepath.Separator)
	// Built by hand: filepath.Join would clean the ".." away.
	missing := dir + sep + "nodir" + sep + ".." + sep + "a.json"
	viaLink := dir + sep + "sub" + sep + ".." + sep + "a.json"

	if tg, err := outfile.Classify(missing); err == nil && tg.Path == existing {
		t.Errorf("Classify(%s) = %v %s: the existing %s, which the kernel does not reach", missing, tg.Kind, tg.Path, existing)
	}
	if f, err := outfile.Create(context.Background(), missing); err == nil {
		f.Write([]byte("output"))
		f.Close()
	}
	if b, _ := os.ReadFile(existing); string(b) != "input" {
		t.Errorf("writing %s replaced %s: it holds %q", missing, existing, b)
	}

	tg, err := outfile.Classify(viaLink)
	want := filepath.Join(dir, "other", "a.json")
	if err != nil || tg.Kind != outfile.New || tg.Path != want {
		t.Errorf("Classify(%s) = %v %s, %v; want a new file %s", viaLink, tg.Kind, tg.Path, err, want)
	}
}
