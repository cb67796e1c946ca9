package replay_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/schema"
)

// copyMover is an ioengine.Mover that copies a move's blocks from one
// backend's object to another's with ReadAt and WriteAt, as --gds's engine
// copies them between GPU memory and a file, and counts them.
type copyMover struct {
	p     ioengine.Params
	from  backend.Backend // the backend whose objects it moves from
	moved *atomic.Int64
	in    chan *ioengine.Op
	wg    sync.WaitGroup
}

func (m *copyMover) Name() string               { return "copy" }
func (m *copyMover) Serves(backend.Object) bool { return false }
func (m *copyMover) Submit(op *ioengine.Op)     { m.in <- op }
func (m *copyMover) Close() error {
	close(m.in)
	m.wg.Wait()
	return nil
}

// Moves takes the moves out of one backend only.
func (m *copyMover) Moves(dst, from backend.Object) bool { return fromBackend(m.from, from) }

func (m *copyMover) run() {
	defer m.wg.Done()
	buf := ioengine.AlignedBuffer(int(m.p.BlockSize), 4096)
	for op := range m.in {
		p := buf[:op.N]
		if !op.Write || op.From == nil {
			op.Err = fmt.Errorf("copy mover: not a move: %+v", op)
		} else if _, err := op.From.ReadAt(p, op.Off); err != nil {
			op.Err = err
		} else if _, err := op.Obj.WriteAt(p, op.Off); err != nil {
			op.Err = err
		} else {
			m.moved.Add(1)
		}
		m.p.Done <- op
		m.p.Notify()
	}
}

// fromBackend reports whether obj is an object of b (an ownedBackend).
func fromBackend(b backend.Backend, obj backend.Object) bool {
	o, ok := obj.(interface{ Owner() backend.Backend })
	return ok && o.Owner() == b
}

// ownedBackend tags its objects with itself, so that a mover can tell
// where an object lives.
type ownedBackend struct{ backend.Backend }

type ownedObject struct {
	backend.Object
	owner backend.Backend
}

func (o ownedObject) Owner() backend.Backend { return o.owner }

func (b *ownedBackend) Open(key string, size int64, create bool) (backend.Object, error) {
	obj, err := b.Backend.Open(key, size, create)
	if err != nil {
		return nil, err
	}
	return ownedObject{obj, b}, nil
}

// TestMoverTakesMoves: the blocks of a demotion (an Evict Read and Evict
// Write pair) out of the backend a mover reaches go to the mover, which
// copies them from the key's copy there; the bytes it moved are the
// object's (reads on the new tier verify), and writes that are not moves
// (new contents) never reach it.
func TestMoverTakesMoves(t *testing.T) {
	const size, keys = 256 << 10, 6
	var recs []schema.Record
	for i := range keys {
		k := fmt.Sprint("k", i)
		recs = append(recs,
			rec(0, schema.OpWrite, size, schema.TierCPU, k, schema.PhasePrefill, 0),
			rec(0, schema.OpRead, size, schema.TierCPU, k, schema.PhaseEvict, 0),
			rec(0, schema.OpWrite, size, schema.TierNVMe, k, schema.PhaseEvict, 0),
			rec(0, schema.OpRead, size, schema.TierNVMe, k, schema.PhaseDecode, 0),
			// New contents on Tier-2 itself (a write of its own), then
			// moved back up: a move out of cold, which the mover does
			// not take.
			rec(0, schema.OpWrite, size, schema.TierNVMe, k, schema.PhasePrefill, 0),
			rec(0, schema.OpRead, size, schema.TierNVMe, k, schema.PhaseEvict, 0),
			rec(0, schema.OpWrite, size, schema.TierCPU, k, schema.PhaseEvict, 0),
			rec(0, schema.OpRead, size, schema.TierCPU, k, schema.PhaseDecode, 0))
	}
	res, moved := replayMoves(t, recs, &ownedBackend{newRAM(t, 16<<20)}, &ownedBackend{newRAM(t, 16<<20)})
	// One demotion per key out of "hot", of size/BlockSize blocks.
	if want := int64(keys * size / (64 << 10)); moved.Load() != want {
		t.Errorf("the mover moved %d blocks, want %d (the demotions out of hot only)", moved.Load(), want)
	}
	if read := int64(keys * 4 * size); res.Replay.VerifiedBytes != read {
		t.Errorf("verified %d bytes, want every byte read (%d)", res.Replay.VerifiedBytes, read)
	}
}

// replayMoves replays recs, with --verify and 64 KiB blocks, on Tier-1 in
// hot and Tier-2 in cold, with a copyMover that serves moves out of hot:
// a complete result, and the blocks the mover moved.
func replayMoves(t *testing.T, recs []schema.Record, hot *ownedBackend, cold backend.Backend) (*schema.Result, *atomic.Int64) {
	t.Helper()
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "hot", "cold"}
	cfg.Speed, cfg.Verify, cfg.BlockSize = 0, true, 64<<10
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var moved atomic.Int64
	mover := func(p ioengine.Params) (ioengine.Engine, error) {
		m := &copyMover{p: p, from: hot, moved: &moved, in: make(chan *ioengine.Op, p.Depth)}
		m.wg.Add(1)
		go m.run()
		return m, nil
	}
	src := memTrace(t, recs)
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src},
		map[string]backend.Backend{"hot": hot, "cold": cold}, replay.Hooks{Movers: []ioengine.Factory{mover}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Replay.RowsDone != int64(len(recs)) {
		t.Fatalf("complete %v, %d rows of %d", res.Complete, res.Replay.RowsDone, len(recs))
	}
	return res, &moved
}

// alignedBackend declares a larger alignment than its backend's, as an
// NVMe directory on a device of 64 KiB logical blocks does.
type alignedBackend struct {
	backend.Backend
	align int
}

func (b *alignedBackend) Caps() backend.Caps {
	c := b.Backend.Caps()
	c.Align = b.align
	return c
}

// TestMoveToLargerAlignment: a demotion to a tier of a larger alignment
// makes a copy larger than the one it leaves (its physical size rounded
// up further): the mover copies what the source has, and the rest is
// generated, so the move does not fail and reads of the new copy verify.
func TestMoveToLargerAlignment(t *testing.T) {
	const size = 10 << 10 // 12 KiB on hot, 64 KiB on cold
	recs := []schema.Record{
		rec(0, schema.OpWrite, size, schema.TierCPU, "k", schema.PhasePrefill, 0),
		rec(0, schema.OpRead, size, schema.TierCPU, "k", schema.PhaseEvict, 0),
		rec(0, schema.OpWrite, size, schema.TierNVMe, "k", schema.PhaseEvict, 0),
		rec(0, schema.OpRead, size, schema.TierNVMe, "k", schema.PhaseDecode, 0),
	}
	res, _ := replayMoves(t, recs, &ownedBackend{newRAM(t, 16<<20)}, &alignedBackend{newRAM(t, 16<<20), 64 << 10})
	// The Evict Read of the 12 KiB copy, the Decode Read of the 64 KiB one.
	if read := int64(12<<10 + 64<<10); res.Replay.VerifiedBytes != read {
		t.Errorf("verified %d bytes, want every byte read (%d)", res.Replay.VerifiedBytes, read)
	}
}
