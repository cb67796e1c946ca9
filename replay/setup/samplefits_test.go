package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
)

// TestSampleThatDoesNotFitIsNotRun: a users search's plan (every user)
// fits --dir's free space, but a probe's sample needs more: user 2 writes
// each of four objects of a quarter of the free space, user 1 reads it,
// user 2 deletes it, so the whole trace keeps one live at a time, while a
// probe of user 1 alone (the lower ID) has all four written before
// its clock (cold: the user left out wrote them). The probe is not run
// (ErrProbeNotRun, the search's failure, exit 1), as a probe whose window
// does not fit is, and the search stops there, not done, its answer a
// lower bound. Before, Build's free-space check refused it as the input's
// error (exit 2) in the middle of the search, as if the flags were bad.
func TestSampleThatDoesNotFitIsNotRun(t *testing.T) {
	dir := t.TempDir()
	free := cli.FreeBytes(dir)
	if free <= 0 {
		t.Skip("the free space of the temp dir is unknown")
	}
	quarter := (free/4 + 4095) &^ 4095
	var b strings.Builder
	b.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase,Request,QoS,User\n")
	b.WriteString("0.0,Write,4096,Tier-2,own,Prefill,100,batch,1\n")
	for i := range 4 {
		ts := float64(i)
		fmt.Fprintf(&b, "%.2f,Write,%d,Tier-2,k%d,Prefill,%d,batch,2\n", ts+0.05, quarter, i, 2*i+1)
		fmt.Fprintf(&b, "%.2f,Read,%d,Tier-2,k%d,Decode,%d,batch,1\n", ts+0.1, quarter, i, 2*i+2)
		fmt.Fprintf(&b, "%.2f,Delete,%d,Tier-2,k%d,Evict,%d,batch,2\n", ts+0.2, quarter, i, 2*i+1)
	}
	tr := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(tr, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := replay.DefaultConfig()
	so := SearchOptions{Kind: "users", Probes: 12, Repeats: 2}
	if errs := so.Check(&cfg); len(errs) != 0 {
		t.Fatal(errs)
	}
	srcs, whole, err := Prescan(context.Background(), []string{tr}, "", &cfg, Fitting{})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Dir: dir, Buffered: true, Stderr: &strings.Builder{}}
	if w, err := SearchFits("users", &cfg, whole, &opts); w != "" || err != nil {
		t.Fatalf("SearchFits of every user: %q, %v; want the search's plan to fit", w, err)
	}
	probe := cfg
	probe.Users = 1
	res, err := Replay(context.Background(), &Env{}, &probe, whole, srcs, opts, nil, nil)
	if res != nil || !errors.Is(err, ErrProbeNotRun) || cli.ExitCode(err) != cli.ExitFailure ||
		!strings.Contains(err.Error(), "the probe does not fit this machine: disk: ") ||
		!strings.Contains(err.Error(), "this probe's sample of 1 users needs more") || !strings.Contains(err.Error(), "(--size-scale 1/") {
		t.Errorf("the probe of 1 user: %v (exit %d); want it not run, exit 1", err, cli.ExitCode(err))
	}
	// The search stops there: not done, its answer a lower bound, exit 1.
	once := func(c *replay.Config, _ func(replay.Progress)) (*schema.Result, error) {
		if c.Users != 1 {
			return nil, fmt.Errorf("probe of %d users: want the first of 1", c.Users)
		}
		return Replay(context.Background(), &Env{}, c, whole, srcs, opts, nil, nil)
	}
	so.Config = cfg
	doc, err := Search(so, whole, len(whole.Users), once, &SearchProgress{W: io.Discard, Quiet: true, Now: time.Now})
	if doc == nil || doc.Done || !doc.AnswerIsLowerBound || len(doc.Probes) != 0 || !errors.Is(err, ErrProbeNotRun) || cli.ExitCode(err) != cli.ExitFailure {
		t.Errorf("the search: %+v, %v; want it stopped at its first probe, not run, exit 1", doc, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the probe left %d entries in Dir", len(ents))
	}
}
