package outfile_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kvbench/kvbench/internal/outfile"
)

// TestLeftovers: an output's temporary file is one of the run's leftovers
// from Create until Close renames it into place or Abort removes it;
// List names what is recorded and still there, in the order it was made,
// and a remote one (an object store's prefix) without looking for it.
func TestLeftovers(t *testing.T) {
	dir := t.TempDir()
	var left outfile.Leftovers
	ctx := outfile.WithLeftovers(context.Background(), &left)
	remote := outfile.Track(ctx, outfile.Leftover{Path: "s3://b/run-1/", What: "the run's prefix", Remote: true})
	a, err := outfile.Create(ctx, filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := outfile.Create(ctx, filepath.Join(dir, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp*"))
	if len(tmps) != 2 {
		t.Fatalf("temporary files %q, want 2", tmps)
	}
	tmpOf := func(f string) string {
		m, _ := filepath.Glob(filepath.Join(dir, "."+f+".tmp*"))
		return m[0]
	}
	want := []outfile.Leftover{
		{Path: "s3://b/run-1/", What: "the run's prefix", Remote: true},
		{Path: tmpOf("a.json"), What: "the temporary file of " + filepath.Join(dir, "a.json") + ", which was not written"},
		{Path: tmpOf("b.json"), What: "the temporary file of " + filepath.Join(dir, "b.json") + ", which was not written"},
	}
	if got := left.List(); !reflect.DeepEqual(got, want) {
		t.Fatalf("List() = %+v, want %+v", got, want)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := left.List(); !reflect.DeepEqual(got, want[:1]) {
		t.Fatalf("after Close and Abort, List() = %+v, want %+v", got, want[:1])
	}
	remote()
	remote() // again: nothing
	if got := left.List(); len(got) != 0 {
		t.Fatalf("List() = %+v, want none", got)
	}

	// A path recorded and gone, its func not yet called, is not listed.
	p := filepath.Join(dir, "gone")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	done := left.Add(outfile.Leftover{Path: p, What: "a file"})
	defer done()
	os.Remove(p)
	if got := left.List(); len(got) != 0 {
		t.Fatalf("List() = %+v, want none", got)
	}

	// CloseAll takes back every file it completes or discards.
	c, err := outfile.Create(ctx, filepath.Join(dir, "c.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := outfile.CloseAll(c); err != nil {
		t.Fatal(err)
	}
	if got := left.List(); len(got) != 0 {
		t.Fatalf("after CloseAll, List() = %+v, want none", got)
	}

	// Without Leftovers in the context, nothing is recorded anywhere.
	f, err := outfile.Create(context.Background(), filepath.Join(dir, "d.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if got := left.List(); len(got) != 0 {
		t.Fatalf("List() = %+v, want none", got)
	}
}
