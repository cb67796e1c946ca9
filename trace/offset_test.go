package trace_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// TestZstdErrorOffset: a .zst trace with bytes flipped in its middle, or
// cut short, fails with a *ParseError that names the file and the byte of
// the compressed stream where decoding failed (the end of the block it
// could not decode, or the stream's length), never line 0; the Reader's
// digest is of no content read to its end.
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
			r.Digest = true
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
			if sum, n, ok := r.ContentDigest(); ok {
				t.Errorf("a digest (%s, %d bytes) of a stream that failed", sum, n)
			}
		})
	}
}

// TestContentDigest: a Reader with Digest set hashes the trace's text, the
// same for the trace plain and compressed, and says so only once it read
// the content to its end.
func TestContentDigest(t *testing.T) {
	text := "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n0.5,Write,10,Tier-1,k,Prefill\n1.5,Read,10,Tier-1,k,Decode\n"
	want := sha256.Sum256([]byte(text))
	for _, tt := range []struct {
		name string
		data []byte
	}{{"plain", []byte(text)}, {"zstd", compress(t, []byte(text))}} {
		t.Run(tt.name, func(t *testing.T) {
			r := trace.NewReader(bytes.NewReader(tt.data))
			r.Digest = true
			var rec schema.Record
			if err := r.Read(&rec); err != nil {
				t.Fatal(err)
			}
			if _, _, ok := r.ContentDigest(); ok {
				t.Fatal("a digest before the end of the content")
			}
			for err := r.Read(&rec); err == nil; err = r.Read(&rec) {
			}
			sum, n, ok := r.ContentDigest()
			if !ok || sum != hex.EncodeToString(want[:]) || n != int64(len(text)) {
				t.Fatalf("digest %s of %d bytes (%v), want %x of %d", sum, n, ok, want, len(text))
			}
		})
	}
	r := trace.NewReader(strings.NewReader(text))
	if _, err := readRecords(t, r); err == nil {
		t.Fatal("no end")
	}
	if _, _, ok := r.ContentDigest(); ok {
		t.Fatal("a digest without Digest set")
	}
}
