package s3

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
)

// entry is one object of the run, from its create until it is replaced or
// removed: its size and, until it is written whole, the parts being
// assembled.
type entry struct {
	size   int64
	part   int64 // part size
	nparts int   // 0 for an empty object
	gone   atomic.Bool
	whole  atomic.Bool // written whole: the server holds it
	// etag is the ETag the server gave the object when it was written
	// whole (or rewritten), "" when it gave none: its GETs are
	// conditional on it. Set before whole.
	etag atomic.Pointer[string]

	mu       sync.Mutex
	bufs     [][]byte              // per part, nil until its first byte and after its upload
	filled   []int64               // bytes written into each part
	taking   map[int]chan struct{} // parts whose buffer a writer is taking, closed when it has
	once     sync.Once
	uploadID string // of a multipart upload, once started
	etags    []string
	uploaded int   // parts uploaded
	err      error // the first upload's failure: the object can never be whole
	ended    bool  // abandoned: no more uploads
}

func newEntry(size, part int64) *entry {
	n := int((size + part - 1) / part)
	return &entry{size: size, part: part, nparts: n, bufs: make([][]byte, n), filled: make([]int64, n)}
}

// stored reports that the object was written whole.
func (e *entry) stored() bool { return e.whole.Load() }

// store marks the object written whole, as the version whose ETag is
// etag.
func (e *entry) store(etag string) {
	e.etag.Store(&etag)
	e.whole.Store(true)
}

// version is what a GET of the object is checked against: its size and
// ETag.
func (e *entry) version() version {
	v := version{size: e.size}
	if t := e.etag.Load(); t != nil {
		v.etag = *t
	}
	return v
}

// partLen is part i's size.
func (e *entry) partLen(i int) int64 { return min(e.part, e.size-int64(i)*e.part) }

// abandon ends the entry's assembly: the buffers of its parts not
// written whole go back to b (those written whole, an upload gives back),
// and the id of a multipart upload it started and did not complete is
// returned to abort.
func (e *entry) abandon(b *Backend) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ended = true
	for i, buf := range e.bufs {
		if buf != nil && e.filled[i] < e.partLen(i) {
			b.putPart(buf, false)
		}
	}
	e.bufs = nil
	if e.whole.Load() {
		return ""
	}
	return e.uploadID
}

// object is one open object of the Backend.
type object struct {
	b      *Backend
	key    string // the trace's
	name   string // the S3 key
	e      *entry
	s      *slot // set on the Object of a create
	closed atomic.Bool

	rmu     sync.Mutex
	fetches map[int]*fetch // parts being read, by index
}

func (o *object) check(op string) error {
	if o.closed.Load() || o.b.closed.Load() {
		return fmt.Errorf("s3: %s %q: %w", op, o.key, backend.ErrClosed)
	}
	if o.e.gone.Load() {
		return fmt.Errorf("s3: %s %q: %w", op, o.key, backend.ErrStale)
	}
	return nil
}

// ReadAt reads len(p) bytes at off; the bytes up to the object's end and
// io.EOF past it. The object must have been written whole.
//
// The engine reads an object as blocks, several at once; an object store
// serves whole objects best. So the blocks of one part (the whole object,
// up to PartSize) share one GET of that part through this Object: the
// first block's ReadAt makes it, the others wait for it, and each copies
// its range out; the part's buffer goes once all its bytes were read (or
// at Close). A read of a whole part goes straight into p; the parts of a
// read that spans several are read at once.
func (o *object) ReadAt(p []byte, off int64) (int, error) {
	n, _, err := o.ReadAtFirstByte(p, off)
	return n, err
}

var _ backend.FirstByteReader = (*object)(nil)

// ReadAtFirstByte is ReadAt, and the instant the first byte of p came: of
// the GET that brought it (one this read made, or one it shared with other
// blocks of its part).
func (o *object) ReadAtFirstByte(p []byte, off int64) (int, time.Time, error) {
	var first time.Time
	if err := o.check("read"); err != nil {
		return 0, first, err
	}
	if off < 0 {
		return 0, first, fmt.Errorf("s3: read %q: negative offset %d", o.key, off)
	}
	e := o.e
	if !e.stored() {
		return 0, first, fmt.Errorf("s3: read %q: the object is not written whole yet (%d bytes)", o.key, e.size)
	}
	if off >= e.size {
		return 0, first, io.EOF
	}
	n := int(min(int64(len(p)), e.size-off))
	if n == 0 {
		// An empty p within the object: nothing to get.
		return 0, first, nil
	}
	// The parts the range covers, read at once (a block bigger than a
	// part is several GETs, which go side by side, as a multipart
	// upload's parts do).
	type segment struct {
		i  int
		in int64
		p  []byte
	}
	var segs []segment
	for done := 0; done < n; {
		at := off + int64(done)
		i := int(at / e.part)
		in := at - int64(i)*e.part
		seg := int(min(int64(n-done), e.partLen(i)-in))
		segs = append(segs, segment{i, in, p[done : done+seg]})
		done += seg
	}
	firsts := make([]time.Time, len(segs))
	errs := make([]error, len(segs))
	if len(segs) == 1 {
		firsts[0], errs[0] = o.readPart(segs[0].i, segs[0].in, segs[0].p)
	} else {
		var wg sync.WaitGroup
		for k, sg := range segs {
			wg.Go(func() { firsts[k], errs[k] = o.readPart(sg.i, sg.in, sg.p) })
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return 0, time.Time{}, fmt.Errorf("s3: read %q: %d bytes at offset %d: %w", o.key, n, off, err)
		}
	}
	first = firsts[0]
	if n < len(p) {
		return n, first, io.EOF
	}
	return n, first, nil
}

// fetch is one GET of a part that the blocks read from it share.
type fetch struct {
	done     chan struct{} // closed when buf, first and err are set
	buf      []byte
	first    time.Time // when the GET's first byte came
	err      error
	refs     int   // readers between joining and copying out
	consumed int64 // bytes copied out
}

// readPart copies the bytes at in of part i into p, through the part's
// shared fetch, and returns when the GET's first byte came.
func (o *object) readPart(i int, in int64, p []byte) (time.Time, error) {
	e, b := o.e, o.b
	plen := e.partLen(i)
	o.rmu.Lock()
	f := o.fetches[i]
	if f == nil && in == 0 && int64(len(p)) == plen {
		o.rmu.Unlock()
		return b.c.getRangeFirst(o.b.ctx, o.name, int64(i)*e.part, p, e.version())
	}
	first := f == nil
	if first {
		f = &fetch{done: make(chan struct{})}
		if o.fetches == nil {
			o.fetches = map[int]*fetch{}
		}
		o.fetches[i] = f
	}
	f.refs++
	o.rmu.Unlock()
	if first {
		buf := b.getBuf(plen)
		at, err := b.c.getRangeFirst(o.b.ctx, o.name, int64(i)*e.part, buf, e.version())
		if err != nil {
			b.putBuf(buf)
			buf = nil
		}
		f.buf, f.first, f.err = buf, at, err
		close(f.done)
	} else {
		<-f.done
	}
	if f.err == nil {
		copy(p, f.buf[in:])
	}
	o.rmu.Lock()
	defer o.rmu.Unlock()
	f.refs--
	f.consumed += int64(len(p))
	if f.err != nil || f.consumed >= plen {
		// A failed fetch is not kept: the next read tries again.
		if o.fetches[i] == f {
			delete(o.fetches, i)
		}
		if f.refs == 0 && f.buf != nil {
			b.putBuf(f.buf)
			f.buf = nil
		}
	}
	return f.first, f.err
}

// dropFetches gives back the buffers of parts read in part only.
func (o *object) dropFetches() {
	o.rmu.Lock()
	defer o.rmu.Unlock()
	for i, f := range o.fetches {
		delete(o.fetches, i)
		select {
		case <-f.done:
			if f.refs == 0 && f.buf != nil {
				o.b.putBuf(f.buf)
				f.buf = nil
			}
		default:
		}
	}
}

// WriteAt copies p into the parts it covers; a part written whole is
// uploaded before WriteAt returns (the last one completes the object).
// Each byte of a new object is written once. A write to an object already
// written whole rewrites it (a GET and a PUT of the whole object), which
// only tests do.
func (o *object) WriteAt(p []byte, off int64) (int, error) {
	if err := o.check("write"); err != nil {
		return 0, err
	}
	e := o.e
	if off < 0 || off+int64(len(p)) > e.size {
		return 0, fmt.Errorf("s3: write %q: %d bytes at offset %d pass the object's bounds (%d bytes)", o.key, len(p), off, e.size)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if e.stored() {
		return o.rewrite(p, off)
	}
	for done := 0; done < len(p); {
		at := off + int64(done)
		i := int(at / e.part)
		in := at - int64(i)*e.part
		plen := e.partLen(i)
		e.mu.Lock()
		if e.err != nil || e.ended {
			err := e.err
			e.mu.Unlock()
			if err == nil {
				return 0, fmt.Errorf("s3: write %q: %w", o.key, backend.ErrClosed)
			}
			return 0, fmt.Errorf("s3: write %q: an earlier part failed: %w", o.key, err)
		}
		if e.bufs[i] == nil {
			// One writer takes the part's buffer, outside the entry's
			// lock (an upload's end takes it) as it may wait for the
			// budget; the part's other blocks wait for that one.
			if ch := e.taking[i]; ch != nil {
				e.mu.Unlock()
				<-ch
				continue
			}
			ch := make(chan struct{})
			if e.taking == nil {
				e.taking = map[int]chan struct{}{}
			}
			e.taking[i] = ch
			e.mu.Unlock()
			buf := o.b.getPart(plen)
			e.mu.Lock()
			delete(e.taking, i)
			close(ch)
			if e.err != nil || e.ended {
				e.mu.Unlock()
				o.b.putPart(buf, false)
				continue
			}
			e.bufs[i] = buf
		}
		n := copy(e.bufs[i][in:], p[done:])
		e.filled[i] += int64(n)
		full := e.filled[i] >= plen
		var buf []byte
		if full {
			buf = e.bufs[i]
		}
		e.mu.Unlock()
		done += n
		if full {
			o.b.parts.sending()
			if err := o.upload(i, buf); err != nil {
				return 0, fmt.Errorf("s3: write %q: %w", o.key, err)
			}
		}
	}
	return len(p), nil
}

// upload sends part i, whose bytes are buf: a PUT of the whole object when
// it is one part, else an UploadPart of its multipart upload (started by
// the first part to go up), and the upload's completion after its last
// part.
func (o *object) upload(i int, buf []byte) error {
	e, b := o.e, o.b
	ctx := b.ctx
	b.mu.Lock()
	if o.s != nil {
		o.s.onServer = true // the server may take it even if we see an error
	}
	b.mu.Unlock()
	release := func() {
		e.mu.Lock()
		if e.bufs != nil {
			e.bufs[i] = nil
		}
		e.mu.Unlock()
		b.putPart(buf, true)
	}
	if e.nparts == 1 {
		etag, err := b.c.put(ctx, o.name, buf)
		release()
		if err != nil {
			return o.fail(err)
		}
		e.store(etag)
		return nil
	}
	e.once.Do(func() {
		id, err := b.c.createMultipart(ctx, o.name)
		e.mu.Lock()
		e.uploadID = id
		if err != nil && e.err == nil {
			e.err = err
		}
		e.mu.Unlock()
	})
	e.mu.Lock()
	id, err := e.uploadID, e.err
	e.mu.Unlock()
	if err != nil {
		release()
		return err
	}
	etag, err := b.c.uploadPart(ctx, o.name, id, i+1, buf)
	release()
	if err != nil {
		return o.fail(err)
	}
	e.mu.Lock()
	if e.etags == nil {
		e.etags = make([]string, e.nparts)
	}
	e.etags[i] = etag
	e.uploaded++
	last := e.uploaded == e.nparts
	etags := e.etags
	e.mu.Unlock()
	if !last {
		return nil
	}
	etag, err = b.c.completeMultipart(ctx, o.name, id, etags)
	if err != nil {
		return o.fail(err)
	}
	e.store(etag)
	return nil
}

// fail records the entry's first failure and aborts its multipart upload.
func (o *object) fail(err error) error {
	e := o.e
	e.mu.Lock()
	first := e.err == nil
	if first {
		e.err = err
	}
	id := e.uploadID
	e.mu.Unlock()
	if first && id != "" && o.b.c.abort(o.b.ctx, o.name, id) == nil {
		// Aborted: Close and Remove need not abort it again. (One that
		// failed, they try again, and Close lists what is left.)
		e.mu.Lock()
		if e.uploadID == id {
			e.uploadID = ""
		}
		e.mu.Unlock()
	}
	return err
}

// rewrite replaces the bytes at off of an object written whole: a GET of
// it, and a PUT (or multipart upload) of the whole.
func (o *object) rewrite(p []byte, off int64) (int, error) {
	e, b := o.e, o.b
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx := o.b.ctx
	whole := make([]byte, e.size)
	if err := b.c.getRange(ctx, o.name, 0, whole, e.version()); err != nil {
		return 0, fmt.Errorf("s3: rewrite %q: %w", o.key, err)
	}
	copy(whole[off:], p)
	etag, err := b.c.putWhole(ctx, o.name, whole, e.part)
	if err != nil {
		return 0, fmt.Errorf("s3: rewrite %q: %w", o.key, err)
	}
	e.store(etag)
	return len(p), nil
}

// Close ends this use of the object. The Object of a create that did not
// write it whole abandons it: it never appears (an empty object is put
// here, having no bytes to write).
func (o *object) Close() error {
	if !o.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("s3: close %q: %w", o.key, backend.ErrClosed)
	}
	o.dropFetches()
	if o.b.closed.Load() {
		return fmt.Errorf("s3: close %q: %w", o.key, backend.ErrClosed)
	}
	if o.s == nil || o.e.stored() {
		return nil
	}
	if o.e.size == 0 && !o.e.gone.Load() {
		o.b.mu.Lock()
		o.s.onServer = true
		o.b.mu.Unlock()
		etag, err := o.b.c.put(o.b.ctx, o.name, nil)
		if err != nil {
			return fmt.Errorf("s3: close %q: %w", o.key, err)
		}
		o.e.store(etag)
		return nil
	}
	if id := o.e.abandon(o.b); id != "" {
		o.b.c.abort(o.b.ctx, o.name, id)
	}
	return nil
}

// Remove deletes the object (unless a create has replaced it since this
// Object was opened) and closes the Object.
func (o *object) Remove() error {
	if !o.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("s3: remove %q: %w", o.key, backend.ErrClosed)
	}
	o.dropFetches()
	b := o.b
	b.mu.Lock()
	if b.objs == nil {
		b.mu.Unlock()
		return fmt.Errorf("s3: remove %q: %w", o.key, backend.ErrClosed)
	}
	s := b.objs[o.key]
	if s == nil || s.cur != o.e {
		b.mu.Unlock()
		return nil
	}
	o.e.gone.Store(true)
	onServer := s.onServer
	b.mu.Unlock()
	if id := o.e.abandon(o.b); id != "" {
		b.c.abort(o.b.ctx, o.name, id)
	}
	if onServer {
		if err := b.c.delete(o.b.ctx, o.name); err != nil {
			// The slot stays, so that Close tries again.
			return fmt.Errorf("s3: remove %q: %w", o.key, err)
		}
	}
	b.mu.Lock()
	if b.objs != nil && b.objs[o.key] == s && s.cur == o.e {
		delete(b.objs, o.key)
	}
	b.mu.Unlock()
	return nil
}
