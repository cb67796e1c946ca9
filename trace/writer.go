package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/kvbench/kvbench/schema"
)

// Dialect selects what a Writer writes.
type Dialect uint8

const (
	// DialectKvbench writes the eight columns of contract v1 with virtual
	// time from 0, Delete rows included.
	DialectKvbench Dialect = iota
	// DialectMLPerf writes exactly the reference's six columns with epoch
	// timestamps from WriterOptions.Base, and drops Delete rows.
	DialectMLPerf
)

// String returns "kvbench" or "mlperf".
func (d Dialect) String() string {
	switch d {
	case DialectKvbench:
		return "kvbench"
	case DialectMLPerf:
		return "mlperf"
	}
	return fmt.Sprintf("Dialect(%d)", uint8(d))
}

// ParseDialect parses "kvbench" or "mlperf".
func ParseDialect(s string) (Dialect, error) {
	switch s {
	case "kvbench":
		return DialectKvbench, nil
	case "mlperf":
		return DialectMLPerf, nil
	}
	return 0, fmt.Errorf("trace: dialect %q: want kvbench or mlperf", s)
}

// Compression selects whether a Writer compresses.
type Compression uint8

const (
	// CompressAuto compresses with zstd when Create's path ends in ".zst";
	// NewWriter and stdout do not compress.
	CompressAuto Compression = iota
	// CompressNone writes plain CSV.
	CompressNone
	// CompressZstd writes one zstd stream.
	CompressZstd
)

// DefaultLevel is the zstd level the reference uses.
const DefaultLevel = 3

// WriterOptions configures a Writer. The zero value writes the kvbench
// dialect, plain, or zstd at level 3 when Create's name ends in ".zst".
type WriterOptions struct {
	Dialect Dialect
	// Base is the epoch of Time 0 in DialectMLPerf, at or after
	// EpochThreshold; it makes the output deterministic. Unused otherwise.
	Base        time.Time
	Compression Compression
	// Level is the zstd level, 1 (fastest) to 22 (smallest); 0 means
	// DefaultLevel.
	Level int
}

// Validate reports every problem of o at once.
func (o *WriterOptions) Validate() error {
	var errs []error
	if o.Dialect > DialectMLPerf {
		errs = append(errs, fmt.Errorf("trace: dialect %d: want kvbench or mlperf", o.Dialect))
	}
	if o.Dialect == DialectMLPerf && o.Base.Unix() < EpochThreshold {
		errs = append(errs, fmt.Errorf("trace: mlperf dialect: base %s: want an epoch at or after %s",
			o.Base.UTC().Format(time.RFC3339), time.Unix(EpochThreshold, 0).UTC().Format(time.RFC3339)))
	}
	if o.Level < 0 || o.Level > 22 {
		errs = append(errs, fmt.Errorf("trace: zstd level %d: must be between 1 and 22", o.Level))
	}
	if o.Compression > CompressZstd {
		errs = append(errs, fmt.Errorf("trace: compression %d: unknown", o.Compression))
	}
	return errors.Join(errs...)
}

// Writer writes a trace one Record at a time. It validates every record so
// that whatever it writes, a Reader reads back. Close must be called; until
// then the output is incomplete. A Writer is not safe for concurrent use.
//
// Rows are formatted on the caller's goroutine into chunks, which a
// goroutine of the Writer's own compresses and writes, in order: a
// simulation producing rows and the zstd encoder run side by side. The
// bytes written are those of a Writer doing it all in line: one zstd
// frame, whatever the timing.
type Writer struct {
	opt     WriterOptions
	zenc    *zstd.Encoder
	file    *os.File // the temporary file of Create, renamed on Close
	path    string
	err     error
	rows    int64
	dropped int64
	baseUS  int64
	closed  bool
	chunk   []byte // rows formatted, not yet handed to the output goroutine
	f       rowFormatter
	out     *outPipe
}

// chunkSize is how many bytes of rows the Writer hands to its output
// goroutine at a time, and chunksQueued how many chunks may wait there:
// enough that bursts of rows do not stall the caller, little memory.
const (
	chunkSize    = 512 << 10
	chunksQueued = 16
)

// NewWriter returns a Writer to w and writes the header row. CompressAuto
// means no compression here.
func NewWriter(w io.Writer, opt WriterOptions) (*Writer, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	tw := &Writer{opt: opt, baseUS: opt.Base.UnixMicro()}
	tw.f.mlperf = opt.Dialect == DialectMLPerf
	if opt.Compression == CompressZstd {
		level := opt.Level
		if level == 0 {
			level = DefaultLevel
		}
		// A 1 MiB window (the reference's streams use 2 MiB) compresses
		// traces as well and encodes faster (BenchmarkWriter). The output
		// goroutine encodes: the encoder needs no goroutine of its own.
		enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
			zstd.WithWindowSize(1<<20), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, fmt.Errorf("trace: zstd: %w", err)
		}
		tw.zenc = enc
		w = enc
	}
	tw.chunk = make([]byte, 0, chunkSize+maxRowLen)
	if opt.Dialect == DialectMLPerf {
		tw.chunk = append(tw.chunk, ColTimestamp+","+ColOperation+","+ColSize+","+ColTier+","+ColKey+","+ColPhase+"\n"...)
	} else {
		tw.chunk = append(tw.chunk, strings.Join(roleNames[:], ",")+"\n"...)
	}
	tw.out = newOutPipe(w)
	return tw, nil
}

// Create creates the trace file at path, or writes to stdout when path is
// "-". A file is written under a temporary name in the same directory and
// renamed into place by a successful Close, so a trace file is never seen
// half-written.
func Create(path string, opt WriterOptions) (*Writer, error) {
	if opt.Compression == CompressAuto && path != "-" && strings.HasSuffix(path, ".zst") {
		opt.Compression = CompressZstd
	}
	if path == "-" {
		return NewWriter(os.Stdout, opt)
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	w, err := NewWriter(f, opt)
	if err == nil {
		err = f.Chmod(0o644) // CreateTemp makes 0600; a trace is for sharing
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	w.file, w.path = f, path
	return w, nil
}

// outPipe writes chunks on a goroutine of its own, in order.
type outPipe struct {
	w    io.Writer
	full chan outMsg
	free chan []byte
	done chan struct{}

	mu  sync.Mutex
	err error // the first error of w; the chunks after it are dropped
}

// outMsg is a chunk to write, or, with flushed set, a request to run flush
// after what came before and close flushed.
type outMsg struct {
	chunk   []byte
	flush   func() error
	flushed chan struct{}
}

func newOutPipe(w io.Writer) *outPipe {
	p := &outPipe{w: w, full: make(chan outMsg, chunksQueued), free: make(chan []byte, chunksQueued+1), done: make(chan struct{})}
	go p.run()
	return p
}

func (p *outPipe) run() {
	defer close(p.done)
	for m := range p.full {
		if m.chunk != nil {
			if p.failed() == nil {
				if _, err := p.w.Write(m.chunk); err != nil {
					p.fail(err)
				}
			}
			select {
			case p.free <- m.chunk[:0]:
			default:
			}
		}
		if m.flushed != nil {
			if p.failed() == nil && m.flush != nil {
				if err := m.flush(); err != nil {
					p.fail(err)
				}
			}
			close(m.flushed)
		}
	}
}

func (p *outPipe) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
}

func (p *outPipe) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// send queues chunk and returns an empty buffer for the next one.
func (p *outPipe) send(chunk []byte) []byte {
	p.full <- outMsg{chunk: chunk}
	select {
	case b := <-p.free:
		return b
	default:
		return make([]byte, 0, cap(chunk))
	}
}

// sync waits until everything sent is written, then runs flush (if not
// nil) on the pipe's goroutine; it returns the pipe's first error.
func (p *outPipe) sync(flush func() error) error {
	m := outMsg{flush: flush, flushed: make(chan struct{})}
	p.full <- m
	<-m.flushed
	return p.failed()
}

// stop ends the goroutine once it has written everything sent.
func (p *outPipe) stop() error {
	close(p.full)
	<-p.done
	return p.failed()
}

// Rows returns the number of rows written, the header excluded.
func (w *Writer) Rows() int64 { return w.rows }

// Dropped returns the number of Delete rows the mlperf dialect dropped.
func (w *Writer) Dropped() int64 { return w.dropped }

// Write writes rec as one row. It refuses a record the format cannot carry
// (an invalid enum, a negative size or time, a bad key); such an error is not
// sticky. Errors of the underlying writer are sticky.
func (w *Writer) Write(rec *schema.Record) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("trace: write after close")
	}
	if err := w.check(rec); err != nil {
		return err
	}
	if rec.Op == schema.OpDelete && w.opt.Dialect == DialectMLPerf {
		w.dropped++
		return nil
	}
	w.chunk = w.f.format(w.chunk, rec, w.baseUS)
	w.rows++
	if len(w.chunk) >= chunkSize {
		w.chunk = w.out.send(w.chunk)
		if err := w.out.failed(); err != nil {
			w.err = fmt.Errorf("trace: write: %w", err)
			return w.err
		}
	}
	return nil
}

// maxRowLen bounds a row's length but for its key: what a chunk holds
// beyond chunkSize before it is sent, with a key of up to 8 KiB.
const maxRowLen = 16 << 10

// rowFormatter formats rows, reusing the text of the previous row's fields
// where they repeat: a simulation writes runs of rows of one request at
// one time, and many rows identical to the one before (decode reads).
type rowFormatter struct {
	mlperf bool
	have   bool // the fields below hold a previous row
	prev   schema.Record
	key    []byte // prev's key, copied
	line   []byte // prev's row, copied
	us     int64
	ts     []byte // the text of us, with its comma
	tail   []byte // the text of prev's last four columns (kvbench dialect)
}

// format appends rec's row to b, with its times in microseconds from
// base (the mlperf dialect's epoch; base is ignored in the kvbench one).
func (f *rowFormatter) format(b []byte, rec *schema.Record, base int64) []byte {
	p := &f.prev
	if f.have && rec.Time == p.Time && rec.Op == p.Op && rec.Size == p.Size && rec.Tier == p.Tier &&
		rec.Phase == p.Phase && rec.Request == p.Request && rec.QoS == p.QoS && rec.User == p.User &&
		rec.Tokens == p.Tokens && string(rec.Key) == string(f.key) {
		return append(b, f.line...)
	}
	start := len(b)
	us := (int64(rec.Time) + 500) / 1000
	if f.mlperf {
		us += base
	}
	if !f.have || us != f.us {
		f.us = us
		t := f.ts[:0]
		t = strconv.AppendInt(t, us/1_000_000, 10)
		frac := us % 1_000_000
		t = append(t, '.',
			byte('0'+frac/100000), byte('0'+frac/10000%10), byte('0'+frac/1000%10),
			byte('0'+frac/100%10), byte('0'+frac/10%10), byte('0'+frac%10), ',')
		f.ts = t
	}
	b = append(b, f.ts...)
	b = append(b, rec.Op.String()...)
	b = append(b, ',')
	b = strconv.AppendInt(b, rec.Size, 10)
	b = append(b, ',')
	b = append(b, rec.Tier.String()...)
	b = append(b, ',')
	b = append(b, rec.Key...)
	b = append(b, ',')
	b = append(b, rec.Phase.String()...)
	if !f.mlperf {
		if !f.have || rec.Request != p.Request || rec.QoS != p.QoS || rec.User != p.User || rec.Tokens != p.Tokens {
			t := append(f.tail[:0], ',')
			if rec.Request != 0 {
				t = strconv.AppendUint(t, rec.Request, 10)
			}
			t = append(t, ',')
			t = append(t, rec.QoS.String()...)
			t = append(t, ',')
			if rec.User != 0 {
				t = strconv.AppendUint(t, rec.User, 10)
			}
			t = append(t, ',')
			if rec.Tokens != 0 {
				t = strconv.AppendInt(t, rec.Tokens, 10)
			}
			f.tail = t
		}
		b = append(b, f.tail...)
	}
	b = append(b, '\n')
	f.have = true
	*p = *rec
	p.Key = nil
	f.key = append(f.key[:0], rec.Key...)
	f.line = append(f.line[:0], b[start:]...)
	return b
}

// maxVirtual is the longest virtual time the kvbench dialect can carry: at
// EpochThreshold a Reader would take the trace for an epoch trace.
const maxVirtual = EpochThreshold * time.Second

// maxEpochMicros bounds the mlperf dialect's timestamps, in microseconds: a
// Reader reads timestamps up to 1<<63-1 ns.
const maxEpochMicros = (1<<63 - 1) / 1000

func (w *Writer) check(rec *schema.Record) error {
	switch {
	case !rec.Op.Valid():
		return fmt.Errorf("trace: record %q: operation %s: %w", rec.Key, rec.Op, ErrBadEnum)
	case !rec.Tier.Valid():
		return fmt.Errorf("trace: record %q: tier %s: %w", rec.Key, rec.Tier, ErrBadEnum)
	case !rec.Phase.Valid():
		return fmt.Errorf("trace: record %q: phase %s: %w", rec.Key, rec.Phase, ErrBadEnum)
	case !rec.QoS.Valid():
		return fmt.Errorf("trace: record %q: qos %s: %w", rec.Key, rec.QoS, ErrBadEnum)
	case rec.Size < 0:
		return fmt.Errorf("trace: record %q: size %d: %w", rec.Key, rec.Size, ErrNegativeSize)
	case rec.Tokens < 0:
		return fmt.Errorf("trace: record %q: tokens %d: %w", rec.Key, rec.Tokens, ErrBadNumber)
	case !validKey(rec.Key):
		return fmt.Errorf("trace: key %q: %w: want a non-empty name without whitespace, commas, quotes or control characters", rec.Key, ErrBadKey)
	case rec.Time < 0:
		return fmt.Errorf("trace: record %q: time %v: %w: must not be negative", rec.Key, rec.Time, ErrBadNumber)
	case w.opt.Dialect == DialectKvbench && rec.Time >= maxVirtual-500:
		// Times are rounded to the microsecond: from maxVirtual-500ns the
		// row would be written as EpochThreshold.
		return fmt.Errorf("trace: record %q: time %v: %w: virtual time must stay below %d s", rec.Key, rec.Time, ErrBadNumber, EpochThreshold)
	case w.opt.Dialect == DialectMLPerf && int64(rec.Time)/1000 >= maxEpochMicros-w.baseUS:
		// Base + Time, rounded up, must be a timestamp a Reader can read
		// (at most MaxInt64 ns), and must not overflow here.
		return fmt.Errorf("trace: record %q: time %v: %w: base + time must stay below %d s", rec.Key, rec.Time, ErrBadNumber, maxEpochMicros/1_000_000)
	}
	return nil
}

// Flush writes buffered rows to the underlying writer (and, for zstd, ends
// the current block), so a reader on a pipe sees them.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("trace: flush after close")
	}
	if len(w.chunk) > 0 {
		w.chunk = w.out.send(w.chunk)
	}
	var flush func() error
	if w.zenc != nil {
		flush = w.zenc.Flush
	}
	if err := w.out.sync(flush); err != nil {
		w.err = fmt.Errorf("trace: write: %w", err)
		return w.err
	}
	return nil
}

// Close flushes, ends the zstd stream, and for Create closes the file and
// renames it into place; on any error the temporary file is removed. It does
// not close an io.Writer given to NewWriter.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	err := w.err
	if err == nil && len(w.chunk) > 0 {
		w.chunk = w.out.send(w.chunk)
	}
	if e := w.out.stop(); e != nil && err == nil {
		err = fmt.Errorf("trace: write: %w", e)
	}
	if w.zenc != nil {
		if e := w.zenc.Close(); e != nil && err == nil {
			err = fmt.Errorf("trace: zstd: %w", e)
		}
	}
	if w.file != nil {
		if e := w.file.Close(); e != nil && err == nil {
			err = fmt.Errorf("trace: %w", e)
		}
		if err == nil {
			if e := os.Rename(w.file.Name(), w.path); e != nil {
				err = fmt.Errorf("trace: %w", e)
			}
		}
		if err != nil {
			os.Remove(w.file.Name())
		}
	}
	w.err = err
	return err
}

// Abort ends a Writer without completing its output: Create's temporary file
// is removed and nothing is renamed into place.
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	w.out.stop()
	if w.zenc != nil {
		w.zenc.Close()
	}
	if w.file != nil {
		w.file.Close()
		os.Remove(w.file.Name())
	}
	if w.err == nil {
		w.err = errors.New("trace: writer aborted")
	}
}
