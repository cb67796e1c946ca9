// Package zst links the zstd library (github.com/klauspost/compress/zstd)
// into package trace: imported, it registers the codec with which trace's
// Readers read zstd streams (any frame, detected by its magic number, not
// by a file name) and its Writers write at the library's levels 1 to 22,
// and the entropy coder of kvbench's row encoder (level 0).
// The mains import it for its effect:
//
//	import _ "github.com/kvbench/kvbench/trace/zst"
//
// and the libraries do not, so that the replay engine, which reads traces
// through trace, carries no zstd code at all. Codec is the same codec, for a
// caller that wants it without a registration.
package zst

import (
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"

	"github.com/kvbench/kvbench/trace"
	"github.com/kvbench/kvbench/trace/internal/lz"
	"github.com/kvbench/kvbench/trace/internal/zstdblock"
)

func init() { trace.RegisterZstd(Codec) }

// Codec decodes with one goroutine (a trace is read in order, and a
// synchronous decoder is fastest per core) and encodes with one, in a
// 1 MiB window, as the reference's level 3 does; the row encoder's blocks
// are coded by internal/zstdblock.
var Codec = trace.ZstdCodec{NewReader: newReader, NewWriter: newWriter, NewRowCoder: newRowCoder}

func newRowCoder(w io.Writer) lz.Coder { return zstdblock.NewWriter(w) }

func newReader(r io.Reader) (io.ReadCloser, error) {
	d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("zst: %w", err)
	}
	return decoder{d}, nil
}

// decoder is a zstd.Decoder as an io.ReadCloser.
type decoder struct{ *zstd.Decoder }

func (d decoder) Close() error {
	d.Decoder.Close()
	return nil
}

func newWriter(w io.Writer, level int) (trace.ZstdWriter, error) {
	if level < 1 || level > 22 {
		return nil, fmt.Errorf("zst: level %d: must be between 1 and 22", level)
	}
	e, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithWindowSize(1<<20), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("zst: %w", err)
	}
	return e, nil
}
