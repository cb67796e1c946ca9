package replay

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// The rows of the traces reach the scheduler in batches from one reader
// goroutine, which merges the traces by time: decoding runs beside the
// scheduler, and the scheduler never blocks on a pipe while I/O completes.

// batchRows is the rows of one batch: enough to make a channel operation
// per batch negligible, few enough to keep the pipeline short.
const batchRows = 256

// batch is a run of rows. Each record's Key points into keys.
type batch struct {
	recs []schema.Record
	src  []int32
	keys []byte
	kend []int32 // where each record's key ends in keys
	// ended is the source whose last row this batch holds, -1 for none.
	ended int32
	// origin, when hasOrigin is set, is the time of the traces' first
	// row, read before a shard kept its first (rowReader.origin).
	origin    time.Duration
	hasOrigin bool
	// err stops the run after the rows of the batch.
	err error
	// seq is the number of rows the reader kept before the batch's first:
	// where it is in the order read (sharder.ran).
	seq int64
}

// rowReader is the reader goroutine's side.
type rowReader struct {
	srcs  []Source
	shard *sharder // nil: every row
	out   chan *batch
	free  chan *batch
	infos []schema.TraceInfo // written by the reader; read after out is closed
	// hasUser and hasTokens say whether each trace has the User and
	// Tokens columns; the reader sets them before it sends the trace's
	// first row.
	hasUser, hasTokens []bool
	// notify, when set, is called after each batch sent and once out is
	// closed; ended is set before out is closed.
	notify func()
	ended  atomic.Bool
	// origin is set once the traces' first row was read. Sharded, a
	// rank paces its rows from it, not from its own first row: the ranks
	// start at one instant and replay the trace's times in step, one
	// whose first row comes 3 s into the trace replaying it 3 s in.
	origin bool
	// kept counts the rows read into batches (batch.seq).
	kept int64
}

// wake calls notify when it is set.
func (rr *rowReader) wake() {
	if rr.notify != nil {
		rr.notify()
	}
}

func newRowReader(srcs []Source) *rowReader {
	r := &rowReader{srcs: srcs, out: make(chan *batch, 4), free: make(chan *batch, 8),
		infos: make([]schema.TraceInfo, len(srcs)), hasUser: make([]bool, len(srcs)), hasTokens: make([]bool, len(srcs))}
	for i, s := range srcs {
		r.infos[i] = schema.TraceInfo{File: s.Name, ReadInPart: true}
	}
	return r
}

// source is one trace being read, for the time-ordered merge.
type source struct {
	idx   int
	r     *trace.Reader
	dig   *digester
	close func() error
	rec   schema.Record
}

type sourceHeap []*source

func (h sourceHeap) Len() int { return len(h) }
func (h sourceHeap) Less(i, j int) bool {
	if h[i].rec.Time != h[j].rec.Time {
		return h[i].rec.Time < h[j].rec.Time
	}
	return h[i].idx < h[j].idx
}
func (h sourceHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sourceHeap) Push(x any)   { *h = append(*h, x.(*source)) }
func (h *sourceHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}

// run reads the traces in time order into batches until they end, an
// error, or ctx is done; it closes out when it returns.
func (rr *rowReader) run(ctx context.Context) {
	defer func() {
		rr.ended.Store(true)
		close(rr.out)
		rr.wake()
	}()
	var h sourceHeap
	defer func() {
		for _, s := range h {
			s.close()
		}
	}()
	b := rr.newBatch()
	send := func() bool {
		b.seal()
		select {
		case rr.out <- b:
			rr.wake()
		case <-ctx.Done():
			return false
		}
		b = rr.newBatch()
		return true
	}
	fail := func(err error) {
		if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			// A read that the run's stop ended (a pipe's: cli.OpenStdin,
			// cli.OpenRead) is no failure of the trace's: the loop stops
			// for ctx, with its cause (the signal), where this error
			// could reach it first and be the run's reason.
			return
		}
		b.err = err
		send()
	}
	for i, s := range rr.srcs {
		r, dig, closeTrace, err := openSource(s)
		if err != nil {
			fail(err)
			return
		}
		src := &source{idx: i, r: r, dig: dig, close: closeTrace}
		err = r.Read(&src.rec)
		rr.hasUser[i], rr.hasTokens[i] = r.HasUser(), r.HasTokens()
		if err != nil {
			rr.closeSource(src, errors.Is(err, io.EOF))
			if !errors.Is(err, io.EOF) {
				fail(err)
				return
			}
			b.ended = int32(i)
			if !send() {
				return
			}
			continue
		}
		heap.Push(&h, src)
	}
	for len(h) > 0 {
		src := h[0]
		if rr.shard != nil && !rr.origin {
			rr.origin, b.origin, b.hasOrigin = true, src.rec.Time, true
		}
		if rr.shard.mine(&src.rec, src.idx) {
			rr.add(b, src)
		}
		err := src.r.Read(&src.rec)
		if err == nil {
			heap.Fix(&h, 0)
			if len(b.recs) == batchRows && !send() {
				return
			}
			continue
		}
		heap.Pop(&h)
		rr.closeSource(src, errors.Is(err, io.EOF))
		if !errors.Is(err, io.EOF) {
			fail(err)
			return
		}
		b.ended = int32(src.idx)
		if !send() {
			return
		}
	}
	if len(b.recs) > 0 {
		send()
	}
}

func (rr *rowReader) newBatch() *batch {
	select {
	case b := <-rr.free:
		b.recs, b.src, b.keys, b.kend, b.ended, b.err = b.recs[:0], b.src[:0], b.keys[:0], b.kend[:0], -1, nil
		b.origin, b.hasOrigin, b.seq = 0, false, rr.kept
		return b
	default:
		return &batch{recs: make([]schema.Record, 0, batchRows), src: make([]int32, 0, batchRows),
			kend: make([]int32, 0, batchRows), ended: -1, seq: rr.kept}
	}
}

// add copies src's current row into b. Its Key is set by seal, once
// the batch's key bytes no longer move.
func (rr *rowReader) add(b *batch, src *source) {
	b.keys = append(b.keys, src.rec.Key...)
	r := src.rec
	r.Key = nil
	b.recs = append(b.recs, r)
	b.src = append(b.src, int32(src.idx))
	b.kend = append(b.kend, int32(len(b.keys)))
	rr.kept++
}

// seal points every record's Key at its bytes.
func (b *batch) seal() {
	off := int32(0)
	for i := range b.recs {
		end := b.kend[i]
		b.recs[i].Key = b.keys[off:end:end]
		off = end
	}
}

// recycle gives a consumed batch back.
func (rr *rowReader) recycle(b *batch) {
	select {
	case rr.free <- b:
	default:
	}
}

// closeSource records what was read of src, which was read to its end
// when whole is set, and closes it.
func (rr *rowReader) closeSource(src *source, whole bool) {
	info := readInfo(rr.srcs[src.idx].Name, src.r, src.dig)
	info.ReadInPart = !whole
	rr.infos[src.idx] = info
	src.close()
}

// readInfo is the provenance of a trace read by r, with its digest when
// d hashed it to its end.
func readInfo(name string, r *trace.Reader, d *digester) schema.TraceInfo {
	info := schema.TraceInfo{File: name, Rows: r.Rows(), Compressed: r.Compressed(),
		TimeBase: "virtual", OutOfOrder: r.OutOfOrder()}
	if t, ok := r.Epoch(); ok {
		info.TimeBase = "epoch"
		info.EpochStart = float64(t.UnixMicro()) / 1e6
	}
	if sum, n, ok := d.sum(); ok {
		info.SHA256, info.SizeBytes = sum, n
	}
	return info
}

// sidecarCounts returns an ErrSidecarMismatch naming the traces the
// prescan read to their end (infos) whose rows are not their sidecars'
// count: the prescan reads every row, so the run need not find a short
// trace after its replay. nil when there is none.
func sidecarCounts(srcs []Source, infos []schema.TraceInfo) error {
	var off []string
	for i, s := range srcs {
		if i >= len(infos) || s.Meta == nil || infos[i].ReadInPart || infos[i].File == "" {
			continue
		}
		if want, got := s.Meta.Counts.Rows, infos[i].Rows; want > 0 && got != want {
			off = append(off, fmt.Sprintf("%s has %d rows and its sidecar counts %d", s.Name, got, want))
		}
	}
	if len(off) == 0 {
		return nil
	}
	return fmt.Errorf("replay: %s: %w (kvtrace inspect shows both): give the trace its own sidecar, or none", strings.Join(off, "; "), ErrSidecarMismatch)
}

// uncheckedEnds warns of each trace read to its end whose end nothing
// checks: plain CSV on a pipe (stdin, a FIFO) without a sidecar. Its
// writer killed between two rows (kvtrace out of memory) leaves a shorter
// trace that reads as whole; a zstd stream ends with its frame, so a cut
// one is an error, and a sidecar counts the rows (shortTraces).
func uncheckedEnds(srcs []Source, infos []schema.TraceInfo) []string {
	var out []string
	for i, s := range srcs {
		if i >= len(infos) || s.Rescan || s.Meta != nil || infos[i].ReadInPart || infos[i].Compressed {
			continue
		}
		out = append(out, fmt.Sprintf("UNCHECKED TRACE END: %s came as plain CSV read once (standard input or a pipe), without a sidecar: a writer killed between two rows leaves a shorter trace that reads as whole "+
			"(%d rows read); a zstd stream (kvtrace --zstd) or a trace file with its sidecar is checked to its end", s.Name, infos[i].Rows))
	}
	return out
}

// shortTraces returns an ErrShortTrace naming the traces read to their
// end with fewer rows than their sidecars count; nil when there is none.
// A trace read in part (a run stopped early, --duration) is not judged.
func shortTraces(srcs []Source, infos []schema.TraceInfo) error {
	var short []string
	for i, s := range srcs {
		if i >= len(infos) || s.Meta == nil || infos[i].ReadInPart {
			continue
		}
		if want, got := s.Meta.Counts.Rows, infos[i].Rows; want > 0 && got < want {
			short = append(short, fmt.Sprintf("%s: %d of %d rows", s.Name, got, want))
		}
	}
	if len(short) == 0 {
		return nil
	}
	return fmt.Errorf("replay: %s: %w", strings.Join(short, "; "), ErrShortTrace)
}
