package replay_test

import (
	"bytes"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// TestBackstepLag: a kv-cache.py trace's rows are in the order its threads
// logged them, each stamped with a clock read before the writer's lock, so
// a row may be stamped earlier than the row before it (4 ms in
// llama8b_u50_d20_gpu2_cpu4_gennone_s42). The open loop releases rows in
// trace order: such a row cannot be released before the row before it, so
// it is due no earlier than that row, and its lag on a device that keeps
// up is 0, not the backstep (here 40 ms, as the latency from its
// scheduled time was).
func TestBackstepLag(t *testing.T) {
	const text = "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\r\n" +
		"1795256488.000000,Write,4096,Tier-1,a,Prefill\r\n" +
		"1795256488.100000,Write,4096,Tier-1,b,Prefill\r\n" +
		"1795256488.060000,Write,4096,Tier-1,c,Prefill\r\n" +
		"1795256488.200000,Read,4096,Tier-1,c,Decode\r\n"
	synctest.Test(t, func(t *testing.T) {
		src := replay.Source{Name: "ref.csv", Rescan: true, Open: func() (*trace.Reader, error) {
			return trace.NewReader(bytes.NewReader([]byte(text))), nil
		}}
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed = 1
		res, err := runReplay(t, cfg, src, map[string]backend.Backend{"ram": newRAM(t, 16<<20)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Replay.RowsDone != 4 || res.Traces[0].OutOfOrder != 1 {
			t.Fatalf("rows done %d, out of order %d: want 4 and 1", res.Replay.RowsDone, res.Traces[0].OutOfOrder)
		}
		if res.Lag.MaxUS > 1 { // the histogram's floor: 0 reads as 1 us
			t.Errorf("lag max %.0f us, want 0: the row stamped 40 ms before the row before it was released with it", res.Lag.MaxUS)
		}
		if want := (200 * time.Millisecond).Seconds(); res.WallS != want {
			t.Errorf("the run lasted %v s, want %v", res.WallS, want)
		}
	})
}
