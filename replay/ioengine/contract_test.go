package ioengine_test

import (
	"testing"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/replay/ioengine/enginetest"
)

// TestContract holds every registered engine to enginetest's engine
// contract (the queue-full rule among it).
func TestContract(t *testing.T) {
	for _, name := range ioengine.Names() {
		t.Run(name, func(t *testing.T) { enginetest.RunEngine(t, name) })
	}
}

// workersEngine is an engine built on ioengine.Workers, as the movers
// (devcopy, gds) are, that reads blocks with the object's ReadAt: the
// registry does not know it, so RunFactory holds it to the contract.
type workersEngine struct {
	w *ioengine.Workers
}

func newWorkersEngine(p ioengine.Params) (ioengine.Engine, error) {
	return &workersEngine{ioengine.NewWorkers(p, p.Depth, func(op *ioengine.Op) error {
		b := make([]byte, op.N)
		if _, err := op.Obj.ReadAt(b, op.Off); err != nil {
			return err
		}
		return p.Data.Check(b, op)
	})}, nil
}

func (e *workersEngine) Name() string                 { return "workers" }
func (e *workersEngine) Serves(o backend.Object) bool { _, ok := o.(backend.FdObject); return ok }
func (e *workersEngine) Submit(op *ioengine.Op)       { e.w.Submit(op) }
func (e *workersEngine) Close() error                 { e.w.Close(); return nil }

// TestWorkersContract: an engine built on Workers takes a queue of
// Params.Queue ops without blocking in Submit while none can complete.
// Workers queued Depth ops beside the Depth its goroutines held, so a
// queue of more than twice the depth blocked the submitter (fio's
// FIO_Q_BUSY contract broken for the movers).
func TestWorkersContract(t *testing.T) {
	enginetest.RunFactory(t, "workers", newWorkersEngine)
}
