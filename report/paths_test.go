package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestPathsNativeBesideGateway: two runs of one trace, Tier-2 on S3 and
// on an s3fs mount of the same bucket, rendered together say where each
// tier lived (the bucket and endpoint; the mount, its file system and its
// gateway with its command line) and that their ratio is the gateway's
// price.
func TestPathsNativeBesideGateway(t *testing.T) {
	native := loadTestResult(t, "a1.json")
	native.Label = "native"
	native.Tiers = []schema.TierTotals{{Tier: "Tier-1", Backend: "ram"}, {Tier: "Tier-2", Backend: "s3"}}
	native.Host.TierPaths = []schema.PathInfo{
		{Backend: "ram", Path: "anonymous mmap 64.00 MiB"},
		{Backend: "s3", Path: "s3://kv/e2e/run-1/", Device: "http://127.0.0.1:7070", S3: &schema.S3Path{Bucket: "kv"}},
	}
	gw := loadTestResult(t, "a1.json")
	gw.Label = "gateway"
	gw.Tiers = native.Tiers[:1:1]
	gw.Tiers = append(gw.Tiers, schema.TierTotals{Tier: "Tier-2", Backend: "nvme"})
	gw.Host.TierPaths = []schema.PathInfo{
		{Backend: "ram", Path: "anonymous mmap 64.00 MiB"},
		{Backend: "nvme", Path: "/mnt/s3/kvreplay-1", FileSystem: "fuse.s3fs", Device: "0:41", Direct: true,
			Gateway: "s3fs: Amazon Simple Storage Service File System V1.90", GatewayCommand: "s3fs kv /mnt/s3 -o url=http://127.0.0.1:7070"},
	}
	rep, err := Build([]*Doc{{Path: "native.json", Kind: "kvreplay", Label: "native", Result: native}, {Path: "gw.json", Kind: "kvreplay", Label: "gateway", Result: gw}}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows := pathRows(rep)
	want := []pathRow{
		{Group: "native", Trial: 0, Tier: "Tier-1", Backend: "ram", Where: "anonymous mmap 64.00 MiB"},
		{Group: "native", Trial: 0, Tier: "Tier-2", Backend: "s3", Where: "s3://kv/e2e/run-1/ at http://127.0.0.1:7070"},
		{Group: "gateway", Trial: 0, Tier: "Tier-1", Backend: "ram", Where: "anonymous mmap 64.00 MiB"},
		{Group: "gateway", Trial: 0, Tier: "Tier-2", Backend: "nvme", Where: "/mnt/s3/kvreplay-1 on fuse.s3fs, 0:41, O_DIRECT",
			Gateway: "s3fs: Amazon Simple Storage Service File System V1.90 (s3fs kv /mnt/s3 -o url=http://127.0.0.1:7070)"},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v, want %+v", rows, want)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, rows[i], want[i])
		}
	}
	for _, format := range []string{"text", "md", "html", "json"} {
		var b bytes.Buffer
		if err := Render(&b, rep, format); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"where each tier lived", "fuse.s3fs", "s3://kv/e2e/run-1/",
			"Tier-2: native S3 in native, through a POSIX gateway in gateway (s3fs): their ratio is what the gateway costs"} {
			switch {
			case format == "json" && (strings.HasPrefix(s, "where each") || strings.HasPrefix(s, "Tier-2: native")):
				s = `"storage"` // the rows, per trial; no notes
			case format == "html" && strings.HasPrefix(s, "where each"):
				s = `<section id="storage">`
			}
			if !strings.Contains(b.String(), s) {
				t.Errorf("%s: no %q in\n%s", format, s, b.String())
			}
		}
	}
}

// TestPathsOfMergedRanks: the ranks of a run merged keep every rank's
// storage (one drive per rank, or per host), once each, in the document
// and in the report; the inputs keep their own.
func TestPathsOfMergedRanks(t *testing.T) {
	r0 := loadTestResult(t, "a1.json")
	r0.Ranks = 2
	r1 := loadTestResult(t, "a1.json")
	r1.Rank, r1.Ranks = 1, 2
	r1.Host.TierPaths[1].Path, r1.Host.TierPaths[1].Device = "/mnt/nvme1/kvreplay-2", "/dev/nvme1n1"
	m, err := MergeRanks([]*schema.Result{r0, r1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r0.Host.TierPaths) != 2 || len(r1.Host.TierPaths) != 2 {
		t.Errorf("inputs' tier paths changed: %d and %d", len(r0.Host.TierPaths), len(r1.Host.TierPaths))
	}
	var paths []string
	for _, p := range m.Host.TierPaths {
		paths = append(paths, p.Path)
	}
	if want := "anonymous mmap 64.00 MiB /tmp/tmp.KB97w5YodG /mnt/nvme1/kvreplay-2"; strings.Join(paths, " ") != want {
		t.Errorf("merged tier paths %q, want %q", paths, want)
	}
	rep, err := Build([]*Doc{{Path: "m.json", Kind: "kvreplay", Label: "m", Result: m}}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, rep, "text"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"/tmp/tmp.KB97w5YodG on ext4, /dev/vda", "/mnt/nvme1/kvreplay-2 on ext4, /dev/nvme1n1"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("no %q in\n%s", s, b.String())
		}
	}
}
