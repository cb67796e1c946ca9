package trace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/outfile"
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

// dialectNames are the dialects' names, by Dialect.
var dialectNames = [...]string{DialectKvbench: "kvbench", DialectMLPerf: "mlperf"}

// String returns "kvbench" or "mlperf".
func (d Dialect) String() string {
	if int(d) < len(dialectNames) {
		return dialectNames[d]
	}
	return fmt.Sprintf("Dialect(%d)", uint8(d))
}

// ParseDialect parses "kvbench" or "mlperf".
func ParseDialect(s string) (Dialect, error) {
	for d, name := range dialectNames {
		if s == name {
			return Dialect(d), nil
		}
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

// DefaultLevel is the zstd level the reference uses: WriterOptions.Level
// 3 compresses as the reference does, with the zstd library.
const DefaultLevel = 3

// WriterOptions configures a Writer. The zero value writes the kvbench
// dialect, plain, or zstd at level 3 when Create's name ends in ".zst".
type WriterOptions struct {
	Dialect Dialect
	// Base is the epoch of Time 0 in DialectMLPerf, at or after
	// EpochThreshold; it makes the output deterministic. Unused otherwise.
	Base        time.Time
	Compression Compression
	// Level is the zstd level, 1 (fastest) to 22 (smallest), of the zstd
	// library (the registered ZstdCodec: ErrNoZstd without one); 0 means
	// kvbench's row encoder, which matches rows against the rows they
	// repeat instead of searching (see rowEncoder): faster than the
	// library's levels on a simulation's rows (kvtrace's MLPerf 8B run),
	// in a larger file than level 3's; the codec codes its blocks.
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
// Write validates a record and copies it into a batch; a goroutine of the
// Writer's own formats and compresses the batches, in order, so that a
// simulation producing rows and the encoder run side by side. The bytes
// written do not depend on the timing: batches are cut by row count.
type Writer struct {
	opt     WriterOptions
	file    *outfile.File // the file of Create, completed by Close
	err     error
	rows    int64
	dropped int64
	closed  bool
	batch   *recBatch // records not yet handed to the output goroutine
	out     *outPipe
	count   counter // what was written, for Counts
}

// NewWriter returns a Writer to w and writes the header row. CompressAuto
// means no compression here.
func NewWriter(w io.Writer, opt WriterOptions) (*Writer, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	f := rowFormatter{mlperf: opt.Dialect == DialectMLPerf, base: opt.Base.UnixMicro()}
	var sink rowSink
	switch {
	case opt.Compression != CompressZstd:
		sink = newTextSink(w, nil, f)
	default:
		codec := registeredZstd()
		if codec == nil || (opt.Level == 0 && codec.NewRowCoder == nil) {
			return nil, fmt.Errorf("trace: zstd level %d: %w", opt.Level, ErrNoZstd)
		}
		if opt.Level == 0 {
			sink = newRowEncoder(codec.NewRowCoder(w), f)
			break
		}
		enc, err := codec.NewWriter(w, opt.Level)
		if err != nil {
			return nil, fmt.Errorf("trace: zstd: %w", err)
		}
		sink = newTextSink(enc, enc, f)
	}
	return &Writer{opt: opt, out: newOutPipe(sink), batch: newBatch()}, nil
}

// Create creates the trace file at path, or writes to stdout when path is
// "-". A new or regular file is written under a temporary name in the same
// directory and renamed into place by a successful Close, so a trace file is
// never seen half-written; a device, FIFO or socket at path is written in
// place (internal/outfile). A .zst name means CompressZstd where opt says
// CompressAuto (CompressionFor).
func Create(path string, opt WriterOptions) (*Writer, error) {
	if opt.Compression == CompressAuto {
		opt.Compression = CompressionFor(path)
	}
	if path == "-" {
		return NewWriter(os.Stdout, opt)
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	f, err := outfile.Create(context.Background(), path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	w, err := NewWriter(f, opt)
	if err != nil {
		f.Abort()
		return nil, err
	}
	w.file = f
	return w, nil
}

// CompressionFor is the compression Create chooses for a file named path:
// CompressZstd for a .zst name, CompressAuto (none) otherwise.
func CompressionFor(path string) Compression {
	if path != "-" && strings.HasSuffix(path, ".zst") {
		return CompressZstd
	}
	return CompressAuto
}

// Rows returns the number of rows written, the header excluded.
func (w *Writer) Rows() int64 { return w.rows }

// Dropped returns the number of Delete rows the mlperf dialect dropped.
func (w *Writer) Dropped() int64 { return w.dropped }

// Counts returns the totals of what was written, as a sidecar carries
// them: rows, distinct keys (Objects), distinct requests and users, the
// bytes of Read and Write rows, and the Delete rows the mlperf dialect
// dropped (in that dialect, no users: its columns carry none). They count
// what Write took so far; a sidecar takes them after Close.
func (w *Writer) Counts() MetaCounts {
	c := &w.count
	m := MetaCounts{Rows: w.rows, Objects: c.keys.n, Requests: c.requests.n, Users: c.users.n,
		ReadBytes: c.readBytes, WriteBytes: c.writeBytes, DroppedDeletes: w.dropped}
	if w.opt.Dialect == DialectMLPerf {
		m.Users = 0
	}
	return m
}

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
	// A record equal to the one before was checked as that one was, and
	// a key equal to the one before is valid.
	sameKey := w.batch.lastKey(rec.Key)
	full, repeated := w.batch.repeat(rec, sameKey)
	if !repeated {
		if err := w.check(rec, sameKey); err != nil {
			return err
		}
		if rec.Op == schema.OpDelete && w.opt.Dialect == DialectMLPerf {
			w.dropped++
			return nil
		}
		full = w.batch.add(rec, sameKey)
	}
	w.rows++
	// On the caller's goroutine, the lighter one: the output goroutine's
	// formatting and matching bound a simulation's trace.
	w.count.add(rec, sameKey)
	if full {
		w.batch = w.out.send(w.batch)
		if err := w.out.failed(); err != nil {
			w.err = fmt.Errorf("trace: write: %w", err)
			return w.err
		}
	}
	return nil
}

// maxVirtual is the longest virtual time the kvbench dialect can carry: at
// EpochThreshold a Reader would take the trace for an epoch trace.
const maxVirtual = EpochThreshold * time.Second

// maxEpochMicros bounds the mlperf dialect's timestamps, in microseconds: a
// Reader reads timestamps up to 1<<63-1 ns.
const maxEpochMicros = (1<<63 - 1) / 1000

func (w *Writer) check(rec *schema.Record, keyChecked bool) error {
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
	case !keyChecked && !validKey(rec.Key):
		return fmt.Errorf("trace: key %q: %w: want a non-empty name without whitespace, commas, quotes or control characters", rec.Key, ErrBadKey)
	case rec.Time < 0:
		return fmt.Errorf("trace: record %q: time %v: %w: must not be negative", rec.Key, rec.Time, ErrBadNumber)
	case w.opt.Dialect == DialectKvbench && rec.Time >= maxVirtual-500:
		// Times are rounded to the microsecond: from maxVirtual-500ns the
		// row would be written as EpochThreshold.
		return fmt.Errorf("trace: record %q: time %v: %w: virtual time must stay below %d s", rec.Key, rec.Time, ErrBadNumber, EpochThreshold)
	case w.opt.Dialect == DialectMLPerf && int64(rec.Time)/1000 >= maxEpochMicros-w.opt.Base.UnixMicro():
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
	if w.batch.n > 0 {
		w.batch = w.out.send(w.batch)
	}
	if err := w.out.sync(); err != nil {
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
	if err == nil && w.batch.n > 0 {
		w.batch = w.out.send(w.batch)
	}
	if e := w.out.stop(err == nil); e != nil && err == nil {
		err = fmt.Errorf("trace: write: %w", e)
	}
	if w.file != nil {
		if err != nil {
			w.file.Abort()
		} else if e := w.file.Close(); e != nil {
			err = fmt.Errorf("trace: %w", e)
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
	w.out.stop(false)
	if w.file != nil {
		w.file.Abort()
	}
	if w.err == nil {
		w.err = errors.New("trace: writer aborted")
	}
}
