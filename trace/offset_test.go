package trace_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// TestZstdErrorOffset: a .zst trace with bytes flipped in its middle, or
// cut short, fails with a *ParseError that names the file and the byte of
// the compressed stream where decoding failed (the end of the block it
// could not decode, or the stream's length), never line 0; the Reader's
// WrapContent sees the decompressed text.
func TestZstdErrorOffset(t *testing.T) {
	var plain strings.Builder
	plain.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase,Request\n")
	for i := range 20000 {
		fmt.Fprintf(&plain, "%d.%06d,Write,%d,Tier-1,key-%d,Prefill,%d\n", i/1000, i%1000*997, 4096+i*7919%100000, i*7919, i)
	}
	z := compress(t, []byte(plain.String()))
	mid := len(z) / 2
	flipped := bytes.Clone(z)
	for i := mid; i < mid+16; i++ {
		flipped[i] ^= 0xff
	}
	for _, tt := range []struct {
		name     string
		data     []byte
		sentinel error
		lo, hi   int // the offset is in (lo, hi]
	}{
		{"bytes flipped", flipped, trace.ErrCorrupt, mid, len(z)},
		{"truncated", z[:mid], trace.ErrTruncated, mid - 1, mid},
		{"magic only", z[:4], trace.ErrTruncated, 3, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := trace.Open(writeFile(t, "run.csv.zst", tt.data))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var content bytes.Buffer
			r.WrapContent = func(c io.Reader) io.Reader { return io.TeeReader(c, &content) }
			var rec schema.Record
			for err == nil {
				err = r.Read(&rec)
			}
			var pe *trace.ParseError
			if !errors.As(err, &pe) || !errors.Is(err, tt.sentinel) {
				t.Fatalf("error %v, want a *ParseError of %v", err, tt.sentinel)
			}
			if !strings.HasSuffix(pe.File, "run.csv.zst") || pe.Line < 1 || pe.Offset <= int64(tt.lo) || pe.Offset > int64(tt.hi) {
				t.Errorf("file %q line %d offset %d, want line >= 1 and offset in (%d, %d]", pe.File, pe.Line, pe.Offset, tt.lo, tt.hi)
			}
			msg := err.Error()
			if want := fmt.Sprintf("run.csv.zst:%d: %v: at byte %d of the compressed stream", pe.Line, tt.sentinel, pe.Offset); !strings.Contains(msg, want) {
				t.Errorf("error %q, want it to say %q", msg, want)
			}
			if !strings.HasPrefix(plain.String(), content.String()) {
				t.Error("WrapContent saw other bytes than the trace's text")
			}
		})
	}
}
