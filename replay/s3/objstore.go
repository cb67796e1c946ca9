package s3

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/kvbench/kvbench/replay/backend"
)

// The Backend is also a backend.ObjectStore: an engine that finds the
// capability puts and gets whole objects, streamed from and into its own
// memory with no part buffers.
var _ backend.ObjectStore = (*Backend)(nil)

// Put stores the object key of size bytes read from r: one PUT of a
// section of r up to PartSize, a multipart upload of PartSize sections
// uploaded at once above (as many in flight as Concurrency allows).
// Nothing is buffered: a retried request reads its section again.
func (b *Backend) Put(ctx context.Context, key string, r io.ReaderAt, size int64) error {
	if size < 0 {
		return fmt.Errorf("s3: put %q: negative size %d", key, size)
	}
	if err := b.checkParts("put", key, size); err != nil {
		return err
	}
	e := &entry{size: size, part: b.part}
	b.mu.Lock()
	if b.objs == nil {
		b.mu.Unlock()
		return fmt.Errorf("s3: put %q: %w", key, backend.ErrClosed)
	}
	b.replaceLocked(key, e).onServer = true
	b.mu.Unlock()
	name := b.objectKey(key)
	var etag string
	var err error
	if size <= b.part {
		etag, err = b.c.putFrom(ctx, name, io.NewSectionReader(r, 0, size), size)
	} else {
		etag, err = b.putParts(ctx, name, r, size)
	}
	if err != nil {
		return fmt.Errorf("s3: put %q: %w", key, err)
	}
	e.store(etag)
	return nil
}

// putParts uploads r's size bytes as a multipart upload, its parts at
// once, and returns the object's ETag.
func (b *Backend) putParts(ctx context.Context, name string, r io.ReaderAt, size int64) (string, error) {
	id, err := b.c.createMultipart(ctx, name)
	if err != nil {
		return "", err
	}
	n := int((size + b.part - 1) / b.part)
	etags := make([]string, n)
	err = eachPart(ctx, n, func(ctx context.Context, i int) error {
		off := int64(i) * b.part
		var err error
		etags[i], err = b.c.uploadPartFrom(ctx, name, id, i+1, io.NewSectionReader(r, off, min(b.part, size-off)), min(b.part, size-off))
		return err
	})
	var etag string
	if err == nil {
		etag, err = b.c.completeMultipart(ctx, name, id, etags)
	}
	if err != nil {
		// Past ctx's end, as Close's clean-up: an upload left unfinished
		// keeps its parts (billed) until aborted.
		actx, stop := b.cleanupContext(ctx)
		b.c.abort(actx, name, id)
		stop()
	}
	return etag, err
}

// lookup returns the version (size and ETag) of the object key when it
// was written whole, with size bytes (any, for a size below 0).
func (b *Backend) lookup(op, key string, size int64) (version, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.objs == nil {
		return version{}, fmt.Errorf("s3: %s %q: %w", op, key, backend.ErrClosed)
	}
	s := b.objs[key]
	if s == nil || s.cur == nil || !s.cur.stored() {
		return version{}, fmt.Errorf("s3: %s %q: %w", op, key, backend.ErrNotFound)
	}
	if size >= 0 && s.cur.size != size {
		return version{}, fmt.Errorf("s3: %s %q of %d bytes: the object has %d", op, key, size, s.cur.size)
	}
	return s.cur.version(), nil
}

// Get reads the whole object key into w: one GET up to PartSize, ranged
// GETs of PartSize at once above, each streamed into w at its offset.
func (b *Backend) Get(ctx context.Context, key string, w io.WriterAt, size int64) error {
	v, err := b.lookup("get", key, size)
	if err != nil {
		return err
	}
	name := b.objectKey(key)
	if size <= b.part {
		if err := b.c.getInto(ctx, name, w, 0, size, v); err != nil {
			return fmt.Errorf("s3: get %q: %w", key, err)
		}
		return nil
	}
	n := int((size + b.part - 1) / b.part)
	err = eachPart(ctx, n, func(ctx context.Context, i int) error {
		off := int64(i) * b.part
		return b.c.getInto(ctx, name, w, off, min(b.part, size-off), v)
	})
	if err != nil {
		return fmt.Errorf("s3: get %q: %w", key, err)
	}
	return nil
}

// eachPart runs part(ctx, i) for the n parts of an object at once (as many
// in flight as requests may be), and returns the first failure, which
// fails the object's Put or Get: it ends the other parts (those in flight
// abandoned, those waiting for a request slot never sent).
func eachPart(ctx context.Context, n int, part func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	for i := range n {
		wg.Go(func() {
			if err := part(ctx, i); err != nil {
				once.Do(func() {
					first = err
					cancel()
				})
			}
		})
	}
	wg.Wait()
	return first
}

// GetRange reads len(p) bytes of the object key at off with one ranged
// GET; io.EOF with fewer where the object ends first.
func (b *Backend) GetRange(ctx context.Context, key string, p []byte, off int64) (int, error) {
	v, err := b.lookup("get", key, -1)
	if err != nil {
		return 0, err
	}
	size := v.size
	if off < 0 {
		return 0, fmt.Errorf("s3: get %q: negative offset %d", key, off)
	}
	if off >= size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		// "bytes=off-(off-1)" is no range: a server sends the whole object.
		return 0, nil
	}
	n := int(min(int64(len(p)), size-off))
	if err := b.c.getRange(ctx, b.objectKey(key), off, p[:n], v); err != nil {
		return 0, fmt.Errorf("s3: get %q: %d bytes at offset %d: %w", key, n, off, err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Delete removes the object key; one that does not exist is no error.
func (b *Backend) Delete(ctx context.Context, key string) error {
	b.mu.Lock()
	if b.objs == nil {
		b.mu.Unlock()
		return fmt.Errorf("s3: delete %q: %w", key, backend.ErrClosed)
	}
	s := b.objs[key]
	if s == nil {
		b.mu.Unlock()
		return nil
	}
	cur, onServer := s.cur, s.onServer
	if cur != nil {
		cur.gone.Store(true)
	}
	b.mu.Unlock()
	if cur != nil {
		if id := cur.abandon(b); id != "" {
			b.c.abort(ctx, b.objectKey(key), id)
		}
	}
	if onServer {
		if err := b.c.delete(ctx, b.objectKey(key)); err != nil {
			return fmt.Errorf("s3: delete %q: %w", key, err)
		}
	}
	b.mu.Lock()
	if b.objs != nil && b.objs[key] == s && s.cur == cur {
		delete(b.objs, key)
	}
	b.mu.Unlock()
	return nil
}
