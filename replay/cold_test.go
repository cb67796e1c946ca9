package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
	"github.com/kvbench/kvbench/trace/export"
)

// TestColdObjectsAgree: kvreplay's prescan and kvtrace export's ColdObjects
// find the same cold objects, by trace.ColdRead: keys first read, in the
// order of those reads; a key read again after its Delete is not one
// (the export listed it a second time before the rule was shared).
func TestColdObjectsAgree(t *testing.T) {
	const text = `Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase
0,Write,8192,Tier-2,a,Prefill
1,Read,4096,Tier-2,cold1,Decode
2,Delete,8192,Tier-2,a,Evict
3,Read,4096,Tier-1,cold2,Decode
4,Write,4096,Tier-2,cold2,Evict
5,Read,4096,Tier-2,cold1,Decode
6,Delete,4096,Tier-2,cold1,Evict
7,Read,4096,Tier-2,cold1,Decode
8,Read,8192,Tier-2,a,Decode
`
	open := func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader([]byte(text))), nil }
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"null", "null", "null"}
	cfg.Prescan = true
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{{Name: "t.csv", Rescan: true, Open: open}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range plan.Cold {
		got = append(got, fmt.Sprintf("%s@%s:%d", c.Key, c.Tier, c.Logical))
	}
	r, _ := open()
	cold, err := export.ColdObjects(r)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range cold {
		want = append(want, fmt.Sprintf("%s@%s:%d", c.Key, c.Tier, c.Size))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 2 {
		t.Fatalf("kvreplay's prescan: %v; export.ColdObjects: %v; want both [cold1@Tier-2:4096 cold2@Tier-1:4096]", got, want)
	}
}

// TestColdObjectsHeldInTheWindow wants a run that wrote 100,000 cold
// objects to hold at most 600 bytes of heap per object (coldHeap: its
// state of each, about 250 bytes, the null backend's about 100, the keys):
// it dispatched them all at once, 100,000 tasks of about 480 bytes, which
// the tasks' free list then kept for the whole run (890 bytes an object
// in all). They are now released as rows are, while the window has room.
func TestColdObjectsHeldInTheWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 100,000 objects")
	}
	live := coldHeap(t, 100_000)
	t.Logf("%.0f bytes of heap per object once the cold objects are written", live)
	if live > 600 {
		t.Errorf("the run holds %.0f bytes per cold object written, want at most 600", live)
	}
}
