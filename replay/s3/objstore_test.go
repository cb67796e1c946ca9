package s3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// memWriterAt is a WriterAt over a byte slice, safe for writes to
// different ranges at once.
type memWriterAt struct {
	mu sync.Mutex
	p  []byte
}

func (m *memWriterAt) WriteAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if off+int64(len(p)) > int64(len(m.p)) {
		return 0, errors.New("write past the end")
	}
	return copy(m.p[off:], p), nil
}

// TestObjectStore: Put, Get, GetRange and Delete of objects below, at and
// above the part size (a multipart upload of parts sent at once, and
// ranged GETs of them), replacement, not found, and nothing left.
func TestObjectStore(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	px := s3test.Throttle(t, srv)
	b := newBackend(t, px.Endpoint, s3.Config{PartSize: s3.MinPartSize, MaxBackoff: time.Millisecond})
	ctx := context.Background()
	const part = s3.MinPartSize
	sizes := map[string]int64{"small": 300 << 10, "part": part, "three": 2*part + 4096, "empty": 0}
	data := map[string][]byte{}
	for key, size := range sizes {
		p := make([]byte, size)
		replaytest.Fill(p, uint64(size), 0)
		data[key] = p
		if err := b.Put(ctx, key, bytes.NewReader(p), size); err != nil {
			t.Fatalf("Put(%s): %v", key, err)
		}
	}
	// Parts retried after 503s read their sections again.
	px.Fail(2)
	if err := b.Put(ctx, "three", bytes.NewReader(data["three"]), sizes["three"]); err != nil {
		t.Fatalf("Put through 2 throttling responses: %v", err)
	}
	for key, size := range sizes {
		w := &memWriterAt{p: make([]byte, size)}
		if err := b.Get(ctx, key, w, size); err != nil {
			t.Fatalf("Get(%s): %v", key, err)
		}
		if !bytes.Equal(w.p, data[key]) {
			t.Errorf("Get(%s): the bytes differ from those put", key)
		}
	}
	for _, tc := range []struct {
		off    int64
		n, got int
		eof    bool
	}{
		{0, 4096, 4096, false},
		{part - 100, 200, 200, false},
		{2*part + 4000, 200, 96, true},
		{2*part + 4096, 10, 0, true},
		{100, 0, 0, false}, // nothing asked: no request
	} {
		p := make([]byte, tc.n)
		n, err := b.GetRange(ctx, "three", p, tc.off)
		if n != tc.got || errors.Is(err, io.EOF) != tc.eof || err != nil && !errors.Is(err, io.EOF) {
			t.Errorf("GetRange(%d bytes at %d) = %d, %v; want %d (EOF %v)", tc.n, tc.off, n, err, tc.got, tc.eof)
		} else if !bytes.Equal(p[:n], data["three"][tc.off:tc.off+int64(n)]) {
			t.Errorf("GetRange(%d bytes at %d): the bytes differ", tc.n, tc.off)
		}
	}
	// A smaller replacement.
	if err := b.Put(ctx, "three", bytes.NewReader(data["small"]), sizes["small"]); err != nil {
		t.Fatal(err)
	}
	if err := b.Get(ctx, "three", &memWriterAt{p: make([]byte, sizes["three"])}, sizes["three"]); err == nil {
		t.Error("Get with the replaced object's size succeeded")
	}
	w := &memWriterAt{p: make([]byte, sizes["small"])}
	if err := b.Get(ctx, "three", w, sizes["small"]); err != nil || !bytes.Equal(w.p, data["small"]) {
		t.Errorf("Get of the replacement: %v", err)
	}
	if err := b.Delete(ctx, "small"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetRange(ctx, "small", make([]byte, 10), 0); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("GetRange after Delete: %v, want ErrNotFound", err)
	}
	if err := b.Delete(ctx, "never"); err != nil {
		t.Errorf("Delete of an object that never was: %v", err)
	}
	st := b.Stats()
	if st.Requests["CreateMultipartUpload"] != 2 || st.Throttled != 2 || st.Retries != 2 {
		t.Errorf("stats %+v: want 2 multipart uploads, 2 throttled requests retried", st)
	}
	// A cancelled context stops a request.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.Put(cctx, "late", bytes.NewReader(data["small"]), sizes["small"]); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context: %v", err)
	}
	prefix := b.RunPrefix()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	noneUnder(t, srv, prefix)
	if err := b.Put(ctx, "k", bytes.NewReader(nil), 0); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("Put after Close: %v", err)
	}
	if err := b.Delete(ctx, "k"); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("Delete after Close: %v", err)
	}
	if _, err := b.GetRange(ctx, "k", nil, 0); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("GetRange after Close: %v", err)
	}
}
