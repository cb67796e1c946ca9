package trace_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// ioTrace returns a plain trace of about n rows, CRLF and LF mixed, with
// lines long enough to straddle the Reader's buffer boundaries.
func ioTrace(tb testing.TB, n int) []byte {
	tb.Helper()
	var b strings.Builder
	b.WriteString(h8 + "\r\n")
	for i := range n {
		end := "\n"
		if i%3 == 0 {
			end = "\r\n"
		}
		fmt.Fprintf(&b, "%d.%06d,%s,%d,Tier-%d,key-%d-%s,%s,%d,%s%s",
			i/1000, i%1000*997, []string{"Read", "Write", "Delete"}[i%3], i*4096, i%3,
			i, strings.Repeat("x", i%200), []string{"Prefill", "Decode", "Evict"}[i/3%3],
			i, []string{"", "interactive", "responsive", "batch"}[i%4], end)
	}
	return []byte(b.String())
}

// ioInputs are a plain trace, the same compressed, and a reference trace;
// each with the records of a plain, whole read.
type ioInput struct {
	name string
	data []byte
	want []schema.Record
}

func ioInputs(tb testing.TB) []ioInput {
	tb.Helper()
	plain := ioTrace(tb, 5000)
	if len(plain) < 300<<10 {
		tb.Fatalf("test trace of %d bytes is smaller than intended", len(plain))
	}
	want, _ := mustReadAll(tb, bytes.NewReader(plain))
	if len(want) != 5000 {
		tb.Fatalf("test trace has %d records, want 5000", len(want))
	}
	ref, err := os.ReadFile(filepath.Join(refDir, "llama8b_u50_d30_gpu0_cpu4_rag_s42.csv.zst"))
	if err != nil {
		tb.Fatal(err)
	}
	refWant, _ := mustReadAll(tb, bytes.NewReader(ref))
	return []ioInput{
		{"plain", plain, want},
		{"zstd", compress(tb, plain), want},
		{"reference zstd", ref, refWant},
	}
}

// TestIOTestReaders: readers that return a little at a time give the same
// records as a whole read.
func TestIOTestReaders(t *testing.T) {
	wrappers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"OneByteReader", iotest.OneByteReader},
		{"HalfReader", iotest.HalfReader},
		{"DataErrReader", iotest.DataErrReader},
		{"DataErrReader(OneByteReader)", func(r io.Reader) io.Reader { return iotest.DataErrReader(iotest.OneByteReader(r)) }},
	}
	for _, in := range ioInputs(t) {
		for _, w := range wrappers {
			t.Run(in.name+"/"+w.name, func(t *testing.T) {
				got, r := mustReadAll(t, w.wrap(bytes.NewReader(in.data)))
				diffRecords(t, got, in.want)
				if r.Compressed() != bytes.HasPrefix(in.data, zstdMagic) {
					t.Errorf("Compressed() = %v", r.Compressed())
				}
			})
		}
	}
}

// TestIOTestReaderSanity: iotest.TestReader agrees that the inputs are what
// the test thinks they are, so that a broken fixture cannot pass.
func TestIOTestReaderSanity(t *testing.T) {
	for _, in := range ioInputs(t) {
		if err := iotest.TestReader(bytes.NewReader(in.data), in.data); err != nil {
			t.Errorf("%s: %v", in.name, err)
		}
	}
}

// TestIOErrors: a failure of the underlying reader, at any point, is
// reported as an I/O error that wraps it, never as malformed input.
func TestIOErrors(t *testing.T) {
	boom := errors.New("boom: device on fire")
	for _, in := range ioInputs(t) {
		cuts := []int{0, 1, 3, 4, 5, len(in.data) / 3, len(in.data) / 2, len(in.data) - 1}
		for _, cut := range cuts {
			for _, oneByte := range []bool{false, true} {
				name := fmt.Sprintf("%s/ErrReader after %d bytes", in.name, cut)
				mk := func() io.Reader {
					var r io.Reader = io.MultiReader(bytes.NewReader(in.data[:cut]), iotest.ErrReader(boom))
					if oneByte {
						r = iotest.OneByteReader(r)
					}
					return r
				}
				if oneByte {
					name += "/OneByteReader"
				}
				t.Run(name, func(t *testing.T) {
					checkIOError(t, mk(), boom, in.want)
				})
			}
		}
		t.Run(in.name+"/TimeoutReader", func(t *testing.T) {
			// The second Read fails. For the plain trace that is before its
			// end; a small zstd stream may be whole in the first Read, and the
			// failure then comes where the decoder looks for another frame.
			checkIOError(t, iotest.TimeoutReader(bytes.NewReader(in.data)), iotest.ErrTimeout, in.want)
		})
		t.Run(in.name+"/TimeoutReader(HalfReader)", func(t *testing.T) {
			checkIOError(t, iotest.TimeoutReader(iotest.HalfReader(bytes.NewReader(in.data))), iotest.ErrTimeout, in.want)
		})
	}
}

// checkIOError reads src, which fails with cause before its end: the
// records before the failure must be a prefix of want, and the error must
// wrap cause, be sticky, and not be a ParseError.
func checkIOError(tb testing.TB, src io.Reader, cause error, want []schema.Record) {
	tb.Helper()
	r := trace.NewReader(src)
	r.Name = "pipe.csv"
	defer r.Close()
	got, err := readRecords(tb, r)
	if err == io.EOF || err == nil {
		tb.Fatalf("read %d records and %v; want an error wrapping %v", len(got), err, cause)
	}
	if !errors.Is(err, cause) {
		tb.Fatalf("error %v does not wrap %v", err, cause)
	}
	var pe *trace.ParseError
	if errors.As(err, &pe) {
		tb.Fatalf("I/O error reported as malformed input: %v", err)
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			tb.Errorf("I/O error %v wraps %v", err, s)
		}
	}
	if !strings.Contains(err.Error(), "pipe.csv") {
		tb.Errorf("error %q does not name the input", err)
	}
	if len(got) > len(want) {
		tb.Fatalf("read %d records before the error, want at most %d", len(got), len(want))
	}
	diffRecords(tb, got, want[:len(got)])
	var rec schema.Record
	if err2 := r.Read(&rec); err2 != err {
		tb.Errorf("Read after the error = %v, want the same %v", err2, err)
	}
}

// TestIOErrorAfterLastLine: an error after the last complete line is still
// an error: the Reader cannot know the trace is complete.
func TestIOErrorAfterLastLine(t *testing.T) {
	boom := errors.New("boom")
	data := lf(h8, g8, g8)
	r := trace.NewReader(io.MultiReader(strings.NewReader(data), iotest.ErrReader(boom)))
	got, err := readRecords(t, r)
	if len(got) != 2 || !errors.Is(err, boom) {
		t.Errorf("got %d records and %v; want 2 records and boom", len(got), err)
	}
}
