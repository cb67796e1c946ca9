package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeScalesForce: ranks replayed at different size scales are
// refused by merge and by a report on their trial, with --force too, and
// the refusal says that --force cannot merge them and why (it warned
// "merging anyway (--force)" and then refused them all the same). A
// report that keeps them apart (--group-by file) compares them, warned.
func TestMergeScalesForce(t *testing.T) {
	dir := t.TempDir()
	other := edited(t, dir, shard3[1], "r1-1024.json", func(d map[string]any) { d["size_scale"] = 1.0 / 1024 })
	docs := []string{shard3[0], other, shard3[2]}
	want := "r0.json and " + other + ": incompatible documents: they ran at different size scales, 0.000244140625 and 0.0009765625"
	out := filepath.Join(dir, "m.json")
	for _, args := range [][]string{
		{"merge", "-o", out},
		{"merge", "--force", "-o", out},
		{"--label", "one", "-o", out},
		{"--label", "one", "--force", "-o", out},
	} {
		code, _, errs := kvreport(t, "", append(args, docs...)...)
		if code != 2 || !strings.Contains(errs, want) || !strings.Contains(errs, "--force cannot merge them") ||
			strings.Contains(errs, "merging anyway") || strings.Contains(errs, "pass --force") || strings.Contains(errs, "anyway with --force") {
			t.Errorf("%v: exit %d, stderr %q: want 2 and %q, saying --force cannot merge them", args, code, errs, want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: a refused merge wrote its output", args)
		}
	}
	code, rep, errs := kvreport(t, "", "--group-by", "file", shard3[0], other)
	if code != 0 || !strings.Contains(rep, "size-scale") {
		t.Errorf("--group-by file: exit %d %s\n%.1500s", code, errs, rep)
	}
}
