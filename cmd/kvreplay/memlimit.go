package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"

	"github.com/kvbench/kvbench/replay"
)

// The soft memory limit. The design's bound is 64 MiB + queue depth x
// block size of RSS, plus the state of the objects the trace keeps (a few
// hundred bytes each, which a trace of many small objects makes large): a
// soft limit makes the collector keep the heap there while the CPU is busy
// with I/O (the RAM arena is mmap'd, outside it). A limit below the live
// heap would have the collector run without end (a pipe's trace, whose
// objects nobody counted, replayed 2.2 times slower under one): after each
// collection, the limit is raised above the live heap when it has grown
// past it, with room to work as the collector's default pacing would have.

// memoryLimit sets the soft memory limit of a replay of objects objects
// (0 when unknown), unless GOMEMLIMIT set one, and keeps it above the live
// heap until stop is called.
func memoryLimit(cfg *replay.Config, objects int64) (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	g := &memGovernor{base: replay.EngineMemory(cfg, objects)}
	debug.SetMemoryLimit(g.base)
	g.arm()
	return g.stop
}

// memGovernor raises the soft memory limit as the live heap grows.
type memGovernor struct {
	base    int64
	stopped atomic.Bool
	sample  [1]metrics.Sample
}

// gcSentinel is garbage from birth: its finalizer runs after the next
// collection (the runtime's own trick for a per-GC callback).
type gcSentinel struct{ g *memGovernor }

func (g *memGovernor) arm() {
	runtime.SetFinalizer(&gcSentinel{g: g}, func(s *gcSentinel) {
		if s.g.stopped.Load() {
			return
		}
		s.g.adjust()
		s.g.arm()
	})
}

// adjust raises the limit when the live heap has outgrown it.
func (g *memGovernor) adjust() {
	g.sample[0].Name = "/gc/heap/live:bytes"
	metrics.Read(g.sample[:])
	if g.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := int64(g.sample[0].Value.Uint64())
	if want := limitFor(g.base, live); want > debug.SetMemoryLimit(-1) {
		debug.SetMemoryLimit(want)
	}
}

// stop ends the adjustments; the limit stays where it is.
func (g *memGovernor) stop() { g.stopped.Store(true) }

// limitFor is the soft limit for a live heap of live bytes: the base, or,
// once the live heap passes half of it, twice the live heap (the
// collector's default goal, GOGC=100), so that the limit never makes it
// collect more often than it would without one.
func limitFor(base, live int64) int64 {
	return max(base, 2*live)
}

// objectsOf is the number of objects the traces keep, for the memory
// limit: the prescan's count, else the sidecars' (0 when unknown).
func objectsOf(plan *replay.Plan, srcs []replay.Source) int64 {
	if plan.Scanned {
		return plan.Objects
	}
	var n int64
	for _, s := range srcs {
		if s.Meta == nil {
			return 0
		}
		n += s.Meta.Counts.Objects
	}
	return n
}
