package trace

import (
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace/internal/lz"
)

// rowEncoder formats rows and writes them as one zstd frame (RFC 8878),
// finding its matches the way trace rows repeat instead of searching: a
// row's fields are compared, as values, with those of the row before and
// of the last row of the same key, and runs of equal fields become
// matches, a row equal to the one before extending the match before it.
// A trace row repeats its neighbours field by field (one request's rows
// share a time and the last four columns; a decode read repeats its key's
// size, tier and phase), so this finds most of what a general encoder
// finds at a fraction of its cost (BenchmarkKvtraceMLPerf8B). This is the
// match finder; the registered codec's row coder (ZstdCodec.NewRowCoder,
// internal/zstdblock) codes and writes the blocks.
type rowEncoder struct {
	f rowFormatter
	// buf holds the content from stream position base: the window the
	// matches may reach back into, then the current block's rows.
	buf        []byte
	base       int64
	blockStart int           // index in buf of the current block's first byte
	litStart   int           // index in buf of the first byte not yet in a sequence
	lits       []byte        // the current block's literals
	seqs       []lz.Sequence // and sequences, copied to a block for the coder
	rep, saved [3]uint32     // repeat offsets, now and at the block's start
	prev       int           // index in buf of the row before; -1 for none
	prevShape  rowShape
	keys       []keyRow // by a hash of the key: the last row of the key
	coder      lz.Coder
	started    bool
}

// keyRow is the last row of a key: where it is in the stream, its shape
// and its values, in a cache line.
type keyRow struct {
	pos                  int64 // -1: none
	us, size             int64
	req, user            uint64
	tokens               int64
	op, tier, phase, qos uint8
	n                    uint8
	ends                 [maxFields]uint8 // rows of over 255 bytes are not kept
}

// sameAs is rowFormatter.same against a keyRow.
func (f *rowFormatter) sameAs(rec *schema.Record, us int64, k *keyRow) uint32 {
	o := schema.Record{Op: schema.Op(k.op), Size: k.size, Tier: schema.Tier(k.tier), Phase: schema.Phase(k.phase),
		Request: k.req, QoS: schema.QoS(k.qos), User: k.user, Tokens: k.tokens}
	return f.same(rec, us, &o, k.us)
}

// set makes k the row of rec at stream position pos, of shape sh.
func (k *keyRow) set(pos int64, rec *schema.Record, us int64, sh *rowShape) {
	if sh.ends[sh.n-1] > 255 {
		k.pos = -1
		return
	}
	*k = keyRow{pos: pos, us: us, size: rec.Size, req: rec.Request, user: rec.User, tokens: rec.Tokens,
		op: uint8(rec.Op), tier: uint8(rec.Tier), phase: uint8(rec.Phase), qos: uint8(rec.QoS), n: uint8(sh.n)}
	for i := range sh.n {
		k.ends[i] = uint8(sh.ends[i])
	}
}

// shape returns k's row shape.
func (k *keyRow) shape() rowShape {
	sh := rowShape{n: int(k.n)}
	for i := range sh.n {
		sh.ends[i] = int32(k.ends[i])
	}
	return sh
}

const (
	rowWindowLog = 20 // 1 MiB: what a match may reach back (as far as rows of a key recur, in the MLPerf 8B trace)
	rowWindow    = 1 << rowWindowLog
	maxBlock     = lz.MaxBlock
	keyTableBits = 14
	// trimSlack is how far beyond the window buf grows before its start
	// is dropped: a copy of the window per trimSlack bytes written.
	trimSlack = 2 << 20
	// maxRowText bounds a row's text but for its key.
	maxRowText = 4 << 10
)

func newRowEncoder(coder lz.Coder, f rowFormatter) *rowEncoder {
	e := &rowEncoder{f: f, rep: [3]uint32{1, 4, 8}, keys: make([]keyRow, 1<<keyTableBits), prev: -1}
	for i := range e.keys {
		e.keys[i].pos = -1
	}
	e.saved = e.rep
	e.coder = coder
	// buf never grows: it holds the window, the slack before a trim, and
	// the rows of a block, each shorter than a block (or cut to blocks).
	e.buf = make([]byte, 0, rowWindow+trimSlack+2*maxBlock+maxRowText)
	e.buf = append(e.buf, header(f.mlperf)...)
	return e
}

// keyHash hashes a key to a slot of the key table, the same in every run.
func keyHash(k []byte) uint32 {
	return uint32(keyHash64(k)) >> (32 - keyTableBits)
}

// row formats rec and encodes it against the row before and the last row
// of its key.
func (e *rowEncoder) row(rec *schema.Record, keyAgain bool) error {
	e.trim()
	s := len(e.buf)
	if e.prev < 0 {
		e.f.have = false // no row before to repeat or match: format it all
	}
	var same uint32
	var dup bool
	e.buf, same, dup = e.f.format(e.buf, rec, keyAgain)
	if dup {
		e.buf = append(e.buf, e.buf[e.prev:s]...)
	}
	end := len(e.buf)
	if end-e.blockStart > maxBlock && s > e.blockStart {
		if err := e.block(s, false); err != nil {
			return err
		}
	}
	if end-e.blockStart > maxBlock {
		// A row longer than a block: literals, in pieces.
		for end-e.blockStart > maxBlock {
			if err := e.block(e.blockStart+maxBlock, false); err != nil {
				return err
			}
		}
		e.prev = -1
		return nil
	}
	shape := &e.f.shape
	if dup && e.prev >= 0 {
		// The row before again: one match, or the match before, longer.
		e.match(s, end, e.prev)
		e.prev = s
		return nil
	}
	var cands [2]struct {
		start int
		shape *rowShape
		same  uint32
	}
	if e.prev >= 0 {
		cands[0].start, cands[0].shape, cands[0].same = e.prev, &e.prevShape, same
	}
	var keyShape rowShape
	if same&fieldKey == 0 {
		// The last row of the key, unless it is the row before.
		k := &e.keys[keyHash(rec.Key)]
		if k.pos >= e.base && int64(end)+e.base-k.pos <= rowWindow {
			ks := int(k.pos - e.base)
			if ks != e.prev && string(e.buf[ks+int(k.ends[colKey-1]):ks+int(k.ends[colKey])-1]) == string(rec.Key) {
				keyShape = k.shape()
				cands[1].start, cands[1].shape = ks, &keyShape
				cands[1].same = e.f.sameAs(rec, e.f.prevUS, k) | fieldKey
			}
		}
		k.set(e.base+int64(s), rec, e.f.prevUS, shape)
	}
	// Runs of fields equal in a candidate become matches: a run goes on
	// in the candidate it started in while it can.
	run, first := -1, 0 // the current run's candidate (-1: none) and first field
	for i := range shape.n {
		bit := uint32(1) << i
		if run >= 0 && cands[run].same&bit != 0 {
			continue
		}
		if run >= 0 {
			c := &cands[run]
			e.match(s+int(shape.fieldStart(first)), s+int(shape.fieldStart(i)), c.start+int(c.shape.fieldStart(first)))
		}
		run, first = -1, i
		for c := range cands {
			if cands[c].same&bit != 0 {
				run = c
				break
			}
		}
	}
	if run >= 0 {
		c := &cands[run]
		e.match(s+int(shape.fieldStart(first)), end, c.start+int(c.shape.fieldStart(first)))
	}
	e.prev, e.prevShape = s, *shape
	return nil
}

// repeat writes the row before, that of rec, n more times: each a match
// of the row before, which the first extends.
func (e *rowEncoder) repeat(rec *schema.Record, n int) error {
	for range n {
		if e.prev < 0 {
			if err := e.row(rec, true); err != nil {
				return err
			}
			continue
		}
		e.trim()
		s := len(e.buf)
		e.buf = append(e.buf, e.buf[e.prev:s]...)
		end := len(e.buf)
		if end-e.blockStart > maxBlock {
			if err := e.block(s, false); err != nil {
				return err
			}
		}
		e.match(s, end, e.prev)
		e.prev = s
	}
	return nil
}

// trim drops what lies beyond the window before the current block.
func (e *rowEncoder) trim() {
	drop := e.blockStart - rowWindow
	if drop < trimSlack && len(e.buf) < rowWindow+trimSlack+maxBlock {
		return
	}
	n := copy(e.buf, e.buf[drop:])
	e.buf = e.buf[:n]
	e.base += int64(drop)
	e.blockStart -= drop
	e.litStart -= drop
	if e.prev >= 0 {
		e.prev -= drop
		if e.prev < 0 {
			e.prev = -1
		}
	}
}

// match makes buf[from:to] a match of the bytes at src, after the
// literals before it; a match shorter than the format's minimum stays
// literals.
func (e *rowEncoder) match(from, to, src int) {
	n := to - from
	if n < 3 {
		return
	}
	off := uint32(from - src)
	lit := uint32(from - e.litStart)
	if last := len(e.seqs) - 1; lit == 0 && last >= 0 && off == e.rep[0] {
		// The match goes on from the one before (rows repeating rows):
		// one longer sequence, copied over itself where it overlaps.
		e.seqs[last].Extend(uint32(n))
		e.litStart = to
		return
	}
	e.lits = append(e.lits, e.buf[e.litStart:from]...)
	e.litStart = to
	// The offset, as a repeat code where it can be one (RFC 8878 3.1.1.5).
	var offBase uint32
	switch {
	case lit != 0 && off == e.rep[0]:
		offBase = 1
	case lit != 0 && off == e.rep[1], lit == 0 && off == e.rep[2]:
		offBase = 2
	case lit != 0 && off == e.rep[2], lit == 0 && off == e.rep[0]-1:
		offBase = 3
	case lit == 0 && off == e.rep[1]:
		offBase = 1
	default:
		offBase = off + 3
	}
	// The repeat offsets after it, as a decoder updates them.
	if offBase > 3 {
		e.rep = [3]uint32{off, e.rep[0], e.rep[1]}
	} else {
		code := offBase - 1
		if lit == 0 {
			code++
		}
		if code > 0 {
			if code >= 2 {
				e.rep[2] = e.rep[1]
			}
			e.rep[1] = e.rep[0]
			e.rep[0] = off
		}
	}
	ml := uint32(n - 3)
	e.seqs = append(e.seqs, lz.Sequence{LitLen: lit, MLBase: ml, OffBase: offBase})
}

// flush ends the current block and waits until it is written, so that a
// reader sees every row written.
func (e *rowEncoder) flush() error {
	if len(e.buf) > e.blockStart || !e.started {
		if err := e.block(len(e.buf), false); err != nil {
			return err
		}
	}
	return e.coder.Sync()
}

// close ends the frame and waits until it is written.
func (e *rowEncoder) close() error {
	err := e.block(len(e.buf), true)
	if cerr := e.coder.Close(); err == nil {
		err = cerr
	}
	return err
}

// abort stops the coder's goroutine.
func (e *rowEncoder) abort() { e.coder.Close() }

// block hands buf[blockStart:end] to the coder as a block: compressed from
// the literals and sequences gathered, or raw when the compressed block
// might not be smaller (decided here, before coding, since a raw block
// leaves the repeat offsets as they were before it).
func (e *rowEncoder) block(end int, last bool) error {
	if err := e.coder.Err(); err != nil {
		return err
	}
	j := e.coder.NewBlock()
	if !e.started {
		j.Head = lz.FrameHeader(j.Head[:0], rowWindowLog)
		e.started = true
	}
	e.lits = append(e.lits, e.buf[e.litStart:end]...)
	content := e.buf[e.blockStart:end]
	if lz.Bound(len(e.lits), len(e.seqs)) >= len(content) {
		e.rep = e.saved
		j.Raw = append(j.Raw[:0], content...)
	} else {
		j.Lits = append(j.Lits[:0], e.lits...)
		j.Seqs = append(j.Seqs[:0], e.seqs...)
	}
	e.lits, e.seqs = e.lits[:0], e.seqs[:0]
	j.Last = last
	e.coder.Send(j)
	e.saved = e.rep
	e.blockStart, e.litStart = end, end
	return nil
}
