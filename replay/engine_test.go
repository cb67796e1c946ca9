package replay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/extent"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/replay/nvme"
	"github.com/kvbench/kvbench/replay/ram"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// memTrace writes records as a kvbench trace in memory and returns a
// Source reading it.
func memTrace(t testing.TB, recs []schema.Record) replay.Source {
	t.Helper()
	data := traceBytes(t, recs)
	return replay.Source{Name: "mem", Rescan: true, Open: func() (*trace.Reader, error) {
		return trace.NewReader(bytes.NewReader(data)), nil
	}}
}

// writes are n writes of 4 KiB to Tier-1 (Prefill) of keys k0 to
// k<n-1>, gap apart from 0.
func writes(n int, gap time.Duration) []schema.Record {
	recs := make([]schema.Record, 0, n)
	for i := range n {
		recs = append(recs, rec(time.Duration(i)*gap, schema.OpWrite, 4096, schema.TierCPU, fmt.Sprint("k", i), schema.PhasePrefill, 0))
	}
	return recs
}

func rec(at time.Duration, op schema.Op, size int64, tier schema.Tier, key string, ph schema.Phase, req uint64) schema.Record {
	return schema.Record{Time: at, Op: op, Size: size, Tier: tier, Key: []byte(key), Phase: ph, Request: req, QoS: schema.QoSBatch}
}

func runReplay(t *testing.T, cfg replay.Config, src replay.Source, backends map[string]backend.Backend) (*schema.Result, error) {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	return replay.Run(context.Background(), &cfg, plan, []replay.Source{src}, backends, replay.Hooks{})
}

func newRAM(t *testing.T, size int64) backend.Backend {
	t.Helper()
	b, err := ram.New(size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestOrdering proves with a recording backend that a read never starts
// before the write of its key has completed, and that the rows of one
// request never overlap, while unrelated work runs concurrently.
func TestOrdering(t *testing.T) {
	var recs []schema.Record
	const requests = 40
	for r := uint64(1); r <= requests; r++ {
		a, b := fmt.Sprintf("a%d", r), fmt.Sprintf("b%d", r)
		recs = append(recs,
			rec(0, schema.OpWrite, 256<<10, schema.TierCPU, a, schema.PhasePrefill, r),
			rec(0, schema.OpRead, 256<<10, schema.TierCPU, a, schema.PhaseDecode, r),
			rec(0, schema.OpRead, 256<<10, schema.TierCPU, a, schema.PhaseDecode, r),
			rec(0, schema.OpWrite, 128<<10, schema.TierCPU, b, schema.PhasePrefill, r),
			rec(0, schema.OpRead, 128<<10, schema.TierCPU, b, schema.PhaseDecode, r),
		)
	}
	rb := fault.Record(fault.Delay(newRAM(t, 64<<20), 200*time.Microsecond))
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Speed, cfg.BlockSize, cfg.Workers, cfg.QueueDepth = 0, 64<<10, 16, 16
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rb})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replay.RowsDone != int64(len(recs)) || res.Requests.Count != requests {
		t.Fatalf("%d rows, %d requests done", res.Replay.RowsDone, res.Requests.Count)
	}
	type span struct{ first, last time.Time }
	writes, reads, all := map[string]span{}, map[string]span{}, map[string]span{}
	grow := func(m map[string]span, k string, c fault.Call) {
		s, ok := m[k]
		if !ok || c.Start.Before(s.first) {
			s.first = c.Start
		}
		if c.End.After(s.last) {
			s.last = c.End
		}
		m[k] = s
	}
	concurrent := 0
	log := rb.Log()
	for i, c := range log {
		key := c.Key[strings.IndexByte(c.Key, '_')+1:]
		switch c.Op {
		case fault.OpWrite:
			grow(writes, key, c)
		case fault.OpRead:
			grow(reads, key, c)
		}
		grow(all, key, c)
		if i > 0 && c.Start.Before(log[i-1].End) && c.Key != log[i-1].Key {
			concurrent++
		}
	}
	for k, w := range writes {
		if r, ok := reads[k]; !ok || r.first.Before(w.last) {
			t.Errorf("%s: a read started at %v, before its write ended at %v", k, r.first, w.last)
		}
	}
	for r := 1; r <= requests; r++ {
		a, b := all[fmt.Sprintf("a%d", r)], all[fmt.Sprintf("b%d", r)]
		if b.first.Before(a.last) {
			t.Errorf("request %d: its b rows started at %v, before its a rows ended at %v", r, b.first, a.last)
		}
	}
	if concurrent == 0 {
		t.Error("nothing ran concurrently: the test proves nothing")
	}
}

// TestCoordinatedOmission slows the backend: latency measured from the
// scheduled time then exceeds latency from submission, because rows wait
// for the single worker behind slow earlier rows.
func TestCoordinatedOmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := writes(40, time.Millisecond)
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed, cfg.Workers, cfg.QueueDepth = 1, 1, 1
		slow := fault.Delay(newRAM(t, 16<<20), 10*time.Millisecond)
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": slow})
		if err != nil {
			t.Fatal(err)
		}
		c := res.Cells[0]
		if c.Latency.P50US < 10_000 {
			t.Errorf("latency p50 %.0f us below the 10 ms delay", c.Latency.P50US)
		}
		if c.FromSchedule.P50US < 5*c.Latency.P50US || c.FromSchedule.MaxUS < 20*c.Latency.P50US {
			t.Errorf("from schedule p50 %.0f us max %.0f us vs from submission p50 %.0f us: waiting is hidden",
				c.FromSchedule.P50US, c.FromSchedule.MaxUS, c.Latency.P50US)
		}
		if res.Lag.P99US < 100_000 {
			t.Errorf("lag p99 %.0f us: the backlog is not reported", res.Lag.P99US)
		}
	})
}

// TestFaultsStopCleanly injects a full disk and an I/O error: the run stops,
// its partial result is marked incomplete with the reason, and closing the
// backend leaves no file behind.
func TestFaultsStopCleanly(t *testing.T) {
	var recs []schema.Record
	for i := range 200 {
		k := fmt.Sprint("k", i)
		recs = append(recs, rec(0, schema.OpWrite, 1<<20, schema.TierNVMe, k, schema.PhasePrefill, 0),
			rec(0, schema.OpRead, 1<<20, schema.TierNVMe, k, schema.PhaseDecode, 0))
	}
	tests := []struct {
		name string
		rule fault.Rule
		want error
	}{
		{"enospc", func() fault.Rule { r := fault.NoSpace(fault.OpWrite); r.AfterCalls = 50; return r }(), syscall.ENOSPC},
		{"eio", func() fault.Rule { r := fault.IOError(fault.OpRead); r.AfterCalls = 30; return r }(), syscall.EIO},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "nvme")
			nb, err := nvme.New(dir, nvme.Options{Direct: true, Create: true})
			if err != nil {
				t.Fatal(err)
			}
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "", "nvme"}
			cfg.Speed, cfg.BlockSize = 0, 256<<10
			res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"nvme": fault.Fail(nb, tt.rule)})
			if !errors.Is(err, tt.want) {
				t.Errorf("run error %v, want %v", err, tt.want)
			}
			if res == nil || res.Complete || !strings.Contains(res.IncompleteReason, tt.want.Error()) {
				t.Fatalf("result %+v", res)
			}
			if res.Errors.Count == 0 || res.Replay.RowsDone == 0 || res.Replay.RowsDone >= int64(len(recs)) {
				t.Errorf("errors %d, rows done %d of %d", res.Errors.Count, res.Replay.RowsDone, len(recs))
			}
			if err := nb.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				entries, _ := os.ReadDir(dir)
				t.Errorf("left behind: %v %v", err, entries)
			}
		})
	}
}

// TestCapacityEviction replays a reference-style trace (no Delete rows) on
// a bounded Tier-2: kvreplay evicts least-recently-used objects itself,
// counts them, and rewrites untimed any that is read again.
func TestCapacityEviction(t *testing.T) {
	var recs []schema.Record
	for i := range 20 {
		recs = append(recs, rec(0, schema.OpWrite, 1<<20, schema.TierNVMe, fmt.Sprint("k", i), schema.PhasePrefill, 0))
	}
	recs = append(recs, rec(0, schema.OpRead, 1<<20, schema.TierNVMe, "k0", schema.PhaseDecode, 0))
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
	cfg.Speed, cfg.Capacity, cfg.Workers = 0, 8<<20, 1
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": newRAM(t, 64<<20)})
	if err != nil {
		t.Fatal(err)
	}
	// 20 objects of 1 MiB in 8 MiB: 12 evicted; rewriting k0 for its read
	// evicts one more.
	if res.Replay.CapacityEvictions != 13 || res.Replay.Rematerialised != 1 {
		t.Errorf("evictions %d, rematerialised %d; want 13 and 1", res.Replay.CapacityEvictions, res.Replay.Rematerialised)
	}
}

// TestUnmappedTier stops before any I/O when the trace has rows on a tier
// the map leaves out, naming the flag that fixes it.
func TestUnmappedTier(t *testing.T) {
	recs := []schema.Record{rec(0, schema.OpWrite, 4096, schema.TierGPU, "g", schema.PhasePrefill, 0)}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	src := memTrace(t, recs)
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": newRAM(t, 1<<20)}, replay.Hooks{})
	if res != nil || !errors.Is(err, replay.ErrUnmappedTier) || !strings.Contains(err.Error(), "--tier-map Tier-0=ram") {
		t.Errorf("result %v, error %v", res, err)
	}
}

// corruptBeforeRead flips a byte of an object's file on disk when the
// replay first opens it to read (its write is complete by then: rows of a
// key run in trace order), then opens it.
type corruptBeforeRead struct {
	backend.Backend
	t         *testing.T
	key, path string
	off       int64
	once      sync.Once
}

func (c *corruptBeforeRead) Open(key string, size int64, create bool) (backend.Object, error) {
	if key == c.key && !create {
		c.once.Do(func() {
			f, err := os.OpenFile(c.path, os.O_RDWR, 0)
			if err != nil {
				c.t.Error(err)
				return
			}
			defer f.Close()
			b := make([]byte, 1)
			if _, err := f.ReadAt(b, c.off); err != nil {
				c.t.Error(err)
			}
			b[0] ^= 0x40
			if _, err := f.WriteAt(b, c.off); err != nil {
				c.t.Error(err)
			}
		})
	}
	return c.Backend.Open(key, size, create)
}

// TestVerifyCatchesCorruption writes an object to a real NVMe directory,
// flips one byte of its file on disk before the trace reads it back, and
// checks --verify reports the key, tier and offset and fails the run; a
// clean run verifies every byte it reads.
func TestVerifyCatchesCorruption(t *testing.T) {
	recs := []schema.Record{
		rec(0, schema.OpWrite, 1<<20, schema.TierNVMe, "victim", schema.PhasePrefill, 0),
		rec(0, schema.OpWrite, 1<<20, schema.TierNVMe, "other", schema.PhasePrefill, 0),
		rec(1500*time.Millisecond, schema.OpRead, 1<<20, schema.TierNVMe, "other", schema.PhaseDecode, 0),
		rec(1500*time.Millisecond, schema.OpRead, 1<<20, schema.TierNVMe, "victim", schema.PhaseDecode, 0),
	}
	run := func(t *testing.T, corrupt bool) (*schema.Result, error) {
		dir := filepath.Join(t.TempDir(), "nvme")
		nb, err := nvme.New(dir, nvme.Options{Direct: true, Create: true})
		if err != nil {
			t.Fatal(err)
		}
		defer nb.Close()
		var b backend.Backend = nb
		if corrupt {
			b = &corruptBeforeRead{Backend: nb, t: t, key: "2_victim", path: filepath.Join(dir, nvme.FileName("2_victim")), off: 300_007}
		}
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "", "nvme"}
		cfg.Verify, cfg.BlockSize, cfg.Speed = true, 128<<10, 0
		return runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"nvme": b})
	}
	t.Run("clean", func(t *testing.T) {
		res, err := run(t, false)
		if err != nil {
			t.Fatal(err)
		}
		read := readBytes(res)
		if !res.Replay.Verify || res.Replay.VerifiedBytes != read || read != 2<<20 {
			t.Errorf("verified %d bytes of %d read", res.Replay.VerifiedBytes, read)
		}
	})
	t.Run("corrupt", func(t *testing.T) {
		res, err := run(t, true)
		var ve *replay.VerifyError
		if !errors.As(err, &ve) || !errors.Is(err, replay.ErrVerify) {
			t.Fatalf("run error %v, want a VerifyError", err)
		}
		if ve.Key != "victim" || ve.Tier != schema.TierNVMe || ve.Offset != 300_007 || len(ve.Got) == 0 || ve.Got[0] != ve.Want[0]^0x40 {
			t.Errorf("verify error %+v", ve)
		}
		if res == nil || res.Complete || !strings.Contains(res.IncompleteReason, "byte 300007") {
			t.Errorf("result: %+v", res)
		}
	})
}

// TestColdReads prepares objects read before any write untimed, before the
// clock starts, once each, and rewrites lazily one read again after its
// Delete; a trace on a pipe (no prescan) prepares them lazily.
func TestColdReads(t *testing.T) {
	recs := []schema.Record{
		rec(0, schema.OpRead, 64<<10, schema.TierNVMe, "cold", schema.PhaseDecode, 0),
		rec(0, schema.OpRead, 64<<10, schema.TierNVMe, "cold", schema.PhaseDecode, 0),
		rec(0, schema.OpDelete, 64<<10, schema.TierNVMe, "cold", schema.PhaseEvict, 0),
		rec(0, schema.OpRead, 64<<10, schema.TierNVMe, "cold", schema.PhaseDecode, 0),
	}
	for _, prescan := range []bool{true, false} {
		t.Run(fmt.Sprint("prescan=", prescan), func(t *testing.T) {
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
			cfg.Speed, cfg.Prescan = 0, prescan
			done := make(chan struct{})
			var res *schema.Result
			var err error
			go func() {
				defer close(done)
				res, err = runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": newRAM(t, 16<<20)})
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the run hangs")
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Replay.ColdPrepared != 2 || res.Replay.RowsDone != 4 {
				t.Errorf("cold prepared %d, rows done %d; want 2 and 4", res.Replay.ColdPrepared, res.Replay.RowsDone)
			}
		})
	}
}

// TestColdReadsTwoTraces: two traces replayed side by side, each reading a
// key of the same name before writing it, prepare one object each, which
// their reads then find (none is written again).
func TestColdReadsTwoTraces(t *testing.T) {
	recs := []schema.Record{
		rec(0, schema.OpRead, 64<<10, schema.TierNVMe, "cold", schema.PhaseDecode, 0),
		rec(time.Millisecond, schema.OpRead, 64<<10, schema.TierNVMe, "cold", schema.PhaseDecode, 0),
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
	cfg.Speed = 0
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	srcs := []replay.Source{memTrace(t, recs), memTrace(t, recs)}
	plan, err := replay.Prepare(context.Background(), &cfg, srcs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), &cfg, plan, srcs, map[string]backend.Backend{"ram": newRAM(t, 16<<20)}, replay.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replay.ColdPrepared != 2 || res.Replay.RowsDone != 4 || res.Replay.Rematerialised != 0 || res.Replay.Objects != 2 {
		t.Errorf("cold prepared %d, rows done %d, rewritten %d, objects %d; want 2, 4, 0, 2",
			res.Replay.ColdPrepared, res.Replay.RowsDone, res.Replay.Rematerialised, res.Replay.Objects)
	}
}

// TestSlowMetadataManyWorkers runs many object operations at once on a
// backend whose metadata calls are slow and made off the loop (a decorator
// clears FastMeta), with more workers than metadata goroutines: the loop
// must never wait on its own pool.
func TestSlowMetadataManyWorkers(t *testing.T) {
	var recs []schema.Record
	for i := range 300 {
		k := fmt.Sprint("k", i)
		recs = append(recs, rec(0, schema.OpWrite, 4096, schema.TierNVMe, k, schema.PhasePrefill, 0),
			rec(0, schema.OpRead, 4096, schema.TierNVMe, k, schema.PhaseDecode, 0))
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "slow"}
	cfg.Speed, cfg.QueueDepth, cfg.Workers = 0, 1, 256
	done := make(chan struct{})
	var res *schema.Result
	var err error
	go func() {
		defer close(done)
		res, err = runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"slow": fault.Delay(newRAM(t, 8<<20), 200*time.Microsecond)})
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the replay did not finish in 60 s")
	}
	if err != nil || res.Replay.RowsDone != int64(len(recs)) {
		t.Fatalf("%v; %d of %d rows", err, res.Replay.RowsDone, len(recs))
	}
}

// TestFsync: with Fsync every NVMe object write is synced once, after its
// last block and before the write completes (a read of the object starts
// after the sync ended); writes to RAM, reads and an unsynced run make no
// sync.
func TestFsync(t *testing.T) {
	recs := []schema.Record{
		rec(0, schema.OpWrite, 1<<20, schema.TierNVMe, "a", schema.PhasePrefill, 1),
		rec(0, schema.OpWrite, 256<<10, schema.TierCPU, "b", schema.PhasePrefill, 1),
		rec(0, schema.OpRead, 1<<20, schema.TierNVMe, "a", schema.PhaseDecode, 1),
		rec(0, schema.OpWrite, 512<<10, schema.TierNVMe, "c", schema.PhasePrefill, 2),
		rec(0, schema.OpRead, 256<<10, schema.TierCPU, "b", schema.PhaseDecode, 2),
	}
	for _, fsync := range []bool{false, true} {
		t.Run(fmt.Sprint(fsync), func(t *testing.T) {
			nb, err := nvme.New(filepath.Join(t.TempDir(), "nvme"), nvme.Options{Direct: true, Create: true})
			if err != nil {
				t.Fatal(err)
			}
			defer nb.Close()
			rb := fault.Record(nb)
			cfg := replay.DefaultConfig()
			cfg.Speed, cfg.BlockSize, cfg.Fsync = 0, 128<<10, fsync
			res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"nvme": rb, "ram": newRAM(t, 4<<20)})
			if err != nil {
				t.Fatal(err)
			}
			syncs := map[string]fault.Call{}
			lastWrite, firstRead := map[string]time.Time{}, map[string]time.Time{}
			for _, c := range rb.Log() {
				switch c.Op {
				case fault.OpSync:
					if _, dup := syncs[c.Key]; dup {
						t.Errorf("%s synced twice", c.Key)
					}
					syncs[c.Key] = c
				case fault.OpWrite:
					if c.End.After(lastWrite[c.Key]) {
						lastWrite[c.Key] = c.End
					}
				case fault.OpRead:
					if f, ok := firstRead[c.Key]; !ok || c.Start.Before(f) {
						firstRead[c.Key] = c.Start
					}
				}
			}
			want := 0
			if fsync {
				want = 2
			}
			if len(syncs) != want || res.Replay.Syncs != int64(want) || res.Replay.Fsync != fsync {
				t.Fatalf("%d objects synced, result says %d syncs (fsync %t), want %d", len(syncs), res.Replay.Syncs, res.Replay.Fsync, want)
			}
			for key, s := range syncs {
				if key != "2_a" && key != "2_c" {
					t.Errorf("synced %s, which is no NVMe write", key)
				}
				if s.Start.Before(lastWrite[key]) {
					t.Errorf("%s: sync started at %v, before the last block ended at %v", key, s.Start, lastWrite[key])
				}
				if r, ok := firstRead[key]; ok && r.Before(s.End) {
					t.Errorf("%s: read at %v before the write's sync ended at %v", key, r, s.End)
				}
			}
		})
	}
}

// TestKeptHandles replays the life of one key on backends with in-memory
// metadata, whose objects the engine keeps open between operations: reads
// beside reads, a rewrite (a new version on the same tier), a move to
// another tier, a delete and a write after it, each followed by reads
// that --verify checks against the version they must see, on the RAM tier
// and the extent layout (through io_uring).
func TestKeptHandles(t *testing.T) {
	const size = 256 << 10
	ms := time.Millisecond
	var recs []schema.Record
	at := time.Duration(0)
	step := func(op schema.Op, tier schema.Tier, ph schema.Phase) {
		recs = append(recs, rec(at, op, size, tier, "k", ph, 0))
		at += ms
	}
	reads := func(tier schema.Tier) {
		for range 3 {
			recs = append(recs, rec(at, schema.OpRead, size, tier, "k", schema.PhaseDecode, 0))
		}
		at += ms
	}
	step(schema.OpWrite, schema.TierCPU, schema.PhasePrefill)
	reads(schema.TierCPU)
	step(schema.OpWrite, schema.TierCPU, schema.PhasePrefill) // a new version in place
	reads(schema.TierCPU)
	step(schema.OpRead, schema.TierCPU, schema.PhaseEvict)
	step(schema.OpWrite, schema.TierNVMe, schema.PhaseEvict) // moved, same bytes
	reads(schema.TierNVMe)
	step(schema.OpDelete, schema.TierNVMe, schema.PhaseEvict)
	step(schema.OpWrite, schema.TierNVMe, schema.PhasePrefill)
	reads(schema.TierNVMe)

	eb, err := extent.New(filepath.Join(t.TempDir(), "kvbench.extent"), extent.Options{Size: 8 << 20, Direct: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eb.Close() })
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", "extent"}
	cfg.Verify, cfg.BlockSize, cfg.QueueDepth = true, 64<<10, 8
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": newRAM(t, 8<<20), "extent": eb})
	if err != nil {
		t.Fatal(err)
	}
	read := readBytes(res)
	if !res.Complete || res.Replay.VerifiedBytes != read || read != 13*size {
		t.Fatalf("complete %t, verified %d of %d bytes read (want %d)", res.Complete, res.Replay.VerifiedBytes, read, 13*size)
	}
	if n := eb.Stats().Objects; n != 1 {
		t.Errorf("extent layout holds %d objects at the end, want 1", n)
	}
}

// readBytes sums the physical bytes of a result's Read cells.
func readBytes(res *schema.Result) int64 {
	var n int64
	for _, c := range res.Cells {
		if c.Op == "Read" {
			n += c.PhysicalBytes
		}
	}
	return n
}
