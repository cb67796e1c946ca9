package trace_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
	_ "github.com/kvbench/kvbench/trace/zst" // the tests read zstd streams
)

// zstdMagic starts every zstd frame (RFC 8878 section 3.1.1), written out
// here rather than taken from the package.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// sentinels are every error class of the package.
var sentinels = []error{
	trace.ErrBadHeader, trace.ErrFieldCount, trace.ErrBadNumber, trace.ErrBadEnum,
	trace.ErrNegativeSize, trace.ErrSizeTooLarge, trace.ErrBadKey, trace.ErrQuoted, trace.ErrLineTooLong,
	trace.ErrTruncated, trace.ErrCorrupt,
}

// cloneRecord returns rec with its own Key.
func cloneRecord(rec *schema.Record) schema.Record {
	c := *rec
	c.Key = slices.Clone(rec.Key)
	return c
}

// readRecords reads r until its first error and returns the records read
// and that error (io.EOF at a clean end).
func readRecords(tb testing.TB, r *trace.Reader) ([]schema.Record, error) {
	tb.Helper()
	var recs []schema.Record
	var rec schema.Record
	for {
		err := r.Read(&rec)
		if err != nil {
			return recs, err
		}
		recs = append(recs, cloneRecord(&rec))
	}
}

// mustReadAll reads all of src and fails tb unless it ends with io.EOF.
func mustReadAll(tb testing.TB, src io.Reader) ([]schema.Record, *trace.Reader) {
	tb.Helper()
	r := trace.NewReader(src)
	tb.Cleanup(func() { r.Close() })
	recs, err := readRecords(tb, r)
	if err != io.EOF {
		tb.Fatalf("read after %d records: %v, want io.EOF", len(recs), err)
	}
	return recs, r
}

// compress returns plain as one zstd stream, made with the zstd library
// directly so that reader tests do not depend on the Writer.
func compress(tb testing.TB, plain []byte) []byte {
	tb.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		tb.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(plain, nil)
}

// writeFile writes data to name in a fresh temporary directory and returns
// its path.
func writeFile(tb testing.TB, name string, data []byte) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// recordsEqual reports whether a and b are equal, field by field.
func recordsEqual(a, b *schema.Record) bool {
	return a.Time == b.Time && a.Op == b.Op && a.Size == b.Size && a.Tier == b.Tier &&
		bytes.Equal(a.Key, b.Key) && a.Phase == b.Phase && a.Request == b.Request && a.QoS == b.QoS
}

// diffRecords fails tb at the first difference between got and want.
func diffRecords(tb testing.TB, got, want []schema.Record) {
	tb.Helper()
	for i := range min(len(got), len(want)) {
		if !recordsEqual(&got[i], &want[i]) {
			tb.Fatalf("record %d:\n got  %s\n want %s", i, got[i].String(), want[i].String())
		}
	}
	if len(got) != len(want) {
		tb.Fatalf("got %d records, want %d", len(got), len(want))
	}
}

// asParseError fails tb unless err is a *trace.ParseError.
func asParseError(tb testing.TB, err error) *trace.ParseError {
	tb.Helper()
	var pe *trace.ParseError
	if !errors.As(err, &pe) {
		tb.Fatalf("error %v (%T) is not a *trace.ParseError", err, err)
	}
	return pe
}
