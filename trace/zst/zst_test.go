package zst_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
	"github.com/kvbench/kvbench/trace/zst"
)

// TestCodec: what the codec's writer compresses, at the fastest, the
// reference's and the smallest level, its reader gives back, through
// Flush and Close; a stream cut inside its frame reads as
// io.ErrUnexpectedEOF, as trace's Reader classifies it; levels out of
// range are refused.
func TestCodec(t *testing.T) {
	text := bytes.Repeat([]byte("0.000100,Read,131072,Tier-1,conv_user_0001_turn_1,Decode\n"), 2000)
	for _, level := range []int{1, 3, 22} {
		var buf bytes.Buffer
		w, err := zst.Codec.NewWriter(&buf, level)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(text[:len(text)/2]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		flushed := buf.Len()
		if _, err := w.Write(text[len(text)/2:]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if flushed == 0 || flushed >= buf.Len() {
			t.Errorf("level %d: %d bytes after Flush, %d after Close", level, flushed, buf.Len())
		}
		r, err := zst.Codec.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, text) {
			t.Fatalf("level %d: read back %d bytes (%v), want %d", level, len(got), err, len(text))
		}
		r, err = zst.Codec.NewReader(bytes.NewReader(buf.Bytes()[:buf.Len()-3]))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(r); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("level %d, cut short: %v, want io.ErrUnexpectedEOF", level, err)
		}
		r.Close()
	}
	for _, level := range []int{0, 23} {
		if _, err := zst.Codec.NewWriter(io.Discard, level); err == nil {
			t.Errorf("level %d accepted", level)
		}
	}
}

// TestRegistered: importing the package registers the codec, so that a
// trace.Writer writes at a library level and a trace.Reader reads the
// stream, detected by its magic.
func TestRegistered(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.WriterOptions{Compression: trace.CompressZstd, Level: trace.DefaultLevel})
	if err != nil {
		t.Fatal(err)
	}
	rec := schema.Record{Op: schema.OpWrite, Size: 4096, Tier: schema.TierCPU, Key: []byte("k"), Phase: schema.PhasePrefill}
	if err := w.Write(&rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := trace.NewReader(&buf)
	defer r.Close()
	var got schema.Record
	if err := r.Read(&got); err != nil || string(got.Key) != "k" || got.Size != 4096 {
		t.Fatalf("read %v, %v", got, err)
	}
	if !r.Compressed() {
		t.Error("the stream was not read as zstd")
	}
}
