package setup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay"
)

// TestReplayPlansTheSample: a users search plans the whole trace once and
// replays each probe's --users N with that plan; Replay plans the sample
// itself (replay.SamplePlan), so that x, which user 2 (left out) wrote
// and user 1 (replayed) reads, is written before the clock, as in a
// closed loop of --users 1 planned on its own. With the whole trace's
// plan, x was written untimed inside the measured window at user 2's read.
func TestReplayPlansTheSample(t *testing.T) {
	const rows = "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase,Request,QoS,User\n" +
		"0.0,Write,1048576,Tier-1,z,Prefill,1,batch,1\n" +
		"0.1,Read,1048576,Tier-1,z,Decode,1,batch,1\n" +
		"0.2,Write,1048576,Tier-1,x,Prefill,2,batch,2\n" +
		"0.3,Read,1048576,Tier-1,x,Decode,3,batch,1\n"
	tr := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(tr, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := replay.DefaultConfig()
	cfg.Speed = 0
	cfg.ClosedLoop = true
	cfg.TierMap[1] = "ram"
	srcs, whole, err := Prescan(context.Background(), []string{tr}, "", &cfg, Fitting{})
	if err != nil {
		t.Fatal(err)
	}
	if whole.LeftOut != 0 || len(whole.Users) != 2 {
		t.Fatalf("the whole trace's plan: %d left out, %d users; want 0, 2", whole.LeftOut, len(whole.Users))
	}
	cfg.Users = 1
	sample, err := replay.SamplePlan(context.Background(), &cfg, srcs, whole)
	if err != nil {
		t.Fatal(err)
	}
	if sample == whole || sample.LeftOut != 1 || sample.UserLimit != 1 {
		t.Fatalf("the sample's plan: %d left out, --users %d; want x, 1", sample.LeftOut, sample.UserLimit)
	}
	if again, err := replay.SamplePlan(context.Background(), &cfg, srcs, sample); err != nil || again != sample {
		t.Errorf("planning the sample's plan again: %v; want the same plan", err)
	}
	res, err := Replay(context.Background(), &Env{}, &cfg, whole, srcs, Options{Stderr: &strings.Builder{}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "--users 1: 1 objects (0.00105 GB) that users left out wrote and the replayed users read were written untimed before the clock") ||
		strings.Contains(w, "written untimed when first read") {
		t.Errorf("warnings:\n%s\nwant x written before the clock, nothing inside the window", w)
	}
}
