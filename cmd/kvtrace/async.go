package main

import (
	"sync"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// asyncWriter formats and compresses the trace on its own goroutine while
// the simulation runs on the caller's: the simulation hands it rows in
// batches, in order, so the trace is byte for byte what a Writer called
// row by row writes. On two cores the simulation and the formatting
// overlap (BenchmarkKvtraceMLPerf8B).
type asyncWriter struct {
	w    *trace.Writer
	cur  *rowBatch
	full chan *rowBatch
	free chan *rowBatch
	done chan struct{}

	mu  sync.Mutex
	err error // the first Write error; the simulation stops on it
}

// asyncBatch is how many rows a batch carries: enough that the channel
// operations are negligible, few enough to keep the pipeline short.
const asyncBatch = 4096

type rowBatch struct {
	recs []schema.Record
	keys []byte
	kend []int
}

func newAsyncWriter(w *trace.Writer) *asyncWriter {
	a := &asyncWriter{w: w, full: make(chan *rowBatch, 4), free: make(chan *rowBatch, 6), done: make(chan struct{})}
	go a.run()
	return a
}

// Write copies rec into the current batch; it returns the writer's first
// error, if any, so the simulation stops.
func (a *asyncWriter) Write(rec *schema.Record) error {
	if a.cur == nil {
		select {
		case a.cur = <-a.free:
			a.cur.recs, a.cur.keys, a.cur.kend = a.cur.recs[:0], a.cur.keys[:0], a.cur.kend[:0]
		default:
			a.cur = &rowBatch{recs: make([]schema.Record, 0, asyncBatch), kend: make([]int, 0, asyncBatch)}
		}
	}
	b := a.cur
	b.keys = append(b.keys, rec.Key...)
	r := *rec
	r.Key = nil
	b.recs = append(b.recs, r)
	b.kend = append(b.kend, len(b.keys))
	if len(b.recs) == asyncBatch {
		a.full <- b
		a.cur = nil
		return a.failed()
	}
	return nil
}

func (a *asyncWriter) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// run writes the batches in order until full is closed.
func (a *asyncWriter) run() {
	defer close(a.done)
	for b := range a.full {
		if a.failed() == nil {
			off := 0
			for i := range b.recs {
				r := &b.recs[i]
				r.Key = b.keys[off:b.kend[i]]
				off = b.kend[i]
				if err := a.w.Write(r); err != nil {
					a.mu.Lock()
					a.err = err
					a.mu.Unlock()
					break
				}
			}
		}
		select {
		case a.free <- b:
		default:
		}
	}
}

// Flush writes what is left and waits for the goroutine; it returns the
// first Write error. The asyncWriter is done with after it.
func (a *asyncWriter) Flush() error {
	if a.cur != nil && len(a.cur.recs) > 0 {
		a.full <- a.cur
	}
	a.cur = nil
	close(a.full)
	<-a.done
	return a.failed()
}
