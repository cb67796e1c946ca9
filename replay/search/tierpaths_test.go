package search

import (
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestProbeTierPaths: a probe keeps where its tiers lived and what its S3
// tier was asked (its result's host.tier_paths): a search document said
// nowhere which endpoint, bucket or directory its probes measured.
func TestProbeTierPaths(t *testing.T) {
	res := &schema.Result{Complete: true, WallS: 1}
	res.Host.TierPaths = []schema.PathInfo{
		{Backend: "nvme", Path: "/mnt/nvme/kv", FileSystem: "xfs"},
		{Backend: "s3", Path: "s3://b/run-x/", S3: &schema.S3Path{Endpoint: "http://127.0.0.1:7070", Bucket: "b", Prefix: "run-x/"}},
	}
	p := Summarize(KindCapacity, res, nil)
	if len(p.TierPaths) != 2 || p.TierPaths[0].Path != "/mnt/nvme/kv" || p.TierPaths[1].S3 == nil || p.TierPaths[1].S3.Bucket != "b" {
		t.Errorf("probe tier paths %+v", p.TierPaths)
	}
}
