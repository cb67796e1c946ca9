package trace

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/kvbench/kvbench/trace/internal/lz"
)

// ZstdCodec is a zstd library (RFC 8878) as a Reader and a Writer use it: a
// decoder for every zstd stream a Reader meets, and an encoder for the
// library levels of WriterOptions.Level (1 to 22). Package trace links
// none, so that what reads traces (the replay engine) carries no zstd
// library; package trace/zst registers klauspost/compress's when a main
// (or a test) imports it, with the block coder of kvbench's own row
// encoder (Level 0), whose match finder is trace's.
type ZstdCodec struct {
	// NewReader returns the content of the zstd stream r. Its Read
	// returns io.ErrUnexpectedEOF for a stream that ends inside a frame;
	// Close releases the decoder and does not close r.
	NewReader func(r io.Reader) (io.ReadCloser, error)
	// NewWriter returns a writer that compresses into w as one frame, at
	// level (1 to 22). Flush ends the current block, so that a reader on a
	// pipe sees what was written; Close ends the frame and does not close
	// w.
	NewWriter func(w io.Writer, level int) (ZstdWriter, error)
	// NewRowCoder returns the coder that entropy-codes and writes, to w,
	// the blocks of the row encoder (WriterOptions.Level 0). Nil: no
	// Level 0.
	NewRowCoder func(w io.Writer) lz.Coder
}

// ZstdWriter is the encoder of ZstdCodec.NewWriter.
type ZstdWriter interface {
	io.WriteCloser
	Flush() error
}

// ErrNoZstd: a zstd stream to read, or a zstd level to write at, and no
// ZstdCodec registered. A main that reads or writes .zst traces imports
// github.com/kvbench/kvbench/trace/zst.
var ErrNoZstd = errors.New("no zstd codec linked in (import github.com/kvbench/kvbench/trace/zst)")

var zstdCodec atomic.Pointer[ZstdCodec]

// RegisterZstd makes c the zstd codec of every Reader and Writer (package
// trace/zst calls it when imported). A later call replaces it. It is safe
// to call at any time, but Readers and Writers already started keep the
// codec they found.
func RegisterZstd(c ZstdCodec) {
	zstdCodec.Store(&c)
}

// registeredZstd returns the codec, or nil when none is registered.
func registeredZstd() *ZstdCodec { return zstdCodec.Load() }
