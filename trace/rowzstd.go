package trace

import (
	"encoding/binary"
	"io"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/huff0"

	"github.com/kvbench/kvbench/schema"
)

// rowEncoder formats rows and writes them as one zstd frame (RFC 8878),
// finding its matches the way trace rows repeat instead of searching: a
// row's fields are compared, as values, with those of the row before and
// of the last row of the same key, and runs of equal fields become
// matches, a row equal to the one before extending the match before it.
// A trace row repeats its neighbours field by field (one request's rows
// share a time and the last four columns; a decode read repeats its key's
// size, tier and phase), so this finds most of what a general encoder
// finds at a fraction of its cost (BenchmarkKvtraceMLPerf8B). Literals
// are Huffman-coded (huff0); sequences with FSE tables fitted to the
// block (the format's predefined ones for a block of few sequences).
type rowEncoder struct {
	f rowFormatter
	// buf holds the content from stream position base: the window the
	// matches may reach back into, then the current block's rows.
	buf        []byte
	base       int64
	blockStart int        // index in buf of the current block's first byte
	litStart   int        // index in buf of the first byte not yet in a sequence
	lits       []byte     // the current block's literals
	seqs       []sequence // and sequences, copied to a job for the coder
	rep, saved [3]uint32  // repeat offsets, now and at the block's start
	prev       int        // index in buf of the row before; -1 for none
	prevShape  rowShape
	keys       []keyRow // by a hash of the key: the last row of the key
	coder      *blockCoder
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

// sequence is a zstd sequence: literals, then a match.
type sequence struct {
	litLen, mlBase, offBase uint32 // mlBase: match length - 3
	llCode, mlCode, ofCode  uint8
}

const (
	rowWindowLog = 20 // 1 MiB: what a match may reach back (as far as rows of a key recur, in the MLPerf 8B trace)
	rowWindow    = 1 << rowWindowLog
	maxBlock     = 128 << 10 // the format's largest block
	keyTableBits = 14
	// trimSlack is how far beyond the window buf grows before its start
	// is dropped: a copy of the window per trimSlack bytes written.
	trimSlack = 2 << 20
	// maxRowText bounds a row's text but for its key.
	maxRowText = 4 << 10
)

func newRowEncoder(w io.Writer, f rowFormatter) *rowEncoder {
	e := &rowEncoder{f: f, rep: [3]uint32{1, 4, 8}, keys: make([]keyRow, 1<<keyTableBits), prev: -1}
	for i := range e.keys {
		e.keys[i].pos = -1
	}
	e.saved = e.rep
	e.coder = newBlockCoder(w)
	// buf never grows: it holds the window, the slack before a trim, and
	// the rows of a block, each shorter than a block (or cut to blocks).
	e.buf = make([]byte, 0, rowWindow+trimSlack+2*maxBlock+maxRowText)
	e.buf = append(e.buf, header(f.mlperf)...)
	return e
}

// keyHash hashes a key, the same in every run.
func keyHash(k []byte) uint32 {
	h := uint64(len(k)) * 0x9e3779b97f4a7c15
	for len(k) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(k)) * 0xbf58476d1ce4e5b9
		h ^= h >> 29
		k = k[8:]
	}
	for _, c := range k {
		h = (h ^ uint64(c)) * 0x94d049bb133111eb
	}
	h ^= h >> 32
	return uint32(h) >> (32 - keyTableBits)
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
		q := &e.seqs[last]
		q.mlBase += uint32(n)
		q.mlCode = mlCode(q.mlBase)
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
	e.seqs = append(e.seqs, sequence{litLen: lit, mlBase: ml, offBase: offBase,
		llCode: llCode(lit), mlCode: mlCode(ml), ofCode: uint8(bits.Len32(offBase) - 1)})
}

// flush ends the current block and waits until it is written, so that a
// reader sees every row written.
func (e *rowEncoder) flush() error {
	if len(e.buf) > e.blockStart || !e.started {
		if err := e.block(len(e.buf), false); err != nil {
			return err
		}
	}
	return e.coder.sync()
}

// close ends the frame and waits until it is written.
func (e *rowEncoder) close() error {
	err := e.block(len(e.buf), true)
	if cerr := e.coder.stop(); err == nil {
		err = cerr
	}
	return err
}

// abort stops the coder's goroutine.
func (e *rowEncoder) abort() { e.coder.stop() }

// block hands buf[blockStart:end] to the coder as a block: compressed from
// the literals and sequences gathered, or raw when the compressed block
// might not be smaller (decided here, before coding, since a raw block
// leaves the repeat offsets as they were before it).
func (e *rowEncoder) block(end int, last bool) error {
	if err := e.coder.failed(); err != nil {
		return err
	}
	j := e.coder.newJob()
	if !e.started {
		// Magic, then a frame header: no checksum, no content size, a
		// window descriptor for rowWindow.
		j.head = append(j.head[:0], 0x28, 0xb5, 0x2f, 0xfd, 0x00, byte(rowWindowLog-10)<<3)
		e.started = true
	}
	e.lits = append(e.lits, e.buf[e.litStart:end]...)
	content := e.buf[e.blockStart:end]
	// At most 10 bytes a sequence (26 state bits and 54 extra bits), and
	// three table descriptions.
	if bound := len(e.lits) + 5 + 4 + 3*80 + 10*len(e.seqs); bound >= len(content) {
		e.rep = e.saved
		j.raw = append(j.raw[:0], content...)
	} else {
		j.lits = append(j.lits[:0], e.lits...)
		j.seqs = append(j.seqs[:0], e.seqs...)
	}
	e.lits, e.seqs = e.lits[:0], e.seqs[:0]
	j.last = last
	e.coder.send(j)
	e.saved = e.rep
	e.blockStart, e.litStart = end, end
	return nil
}

// blockJob is a block for the coder: a frame header before it, if any,
// then its literals and sequences, or its content when it is raw.
type blockJob struct {
	head []byte
	lits []byte
	seqs []sequence
	raw  []byte
	last bool
	sync chan struct{} // a marker, closed when every block before is written
}

// blockCoder codes and writes blocks, in order, on a goroutine of its own:
// the entropy coding of one block runs beside the matching of the next.
type blockCoder struct {
	w    io.Writer
	jobs chan *blockJob
	free chan *blockJob
	done chan struct{}
	out  []byte
	huff huff0.Scratch
	// fitted and norm are the sequence tables of the block being coded.
	fitted [3]fseTable
	norm   [3][]int16

	mu  sync.Mutex
	err error
}

func newBlockCoder(w io.Writer) *blockCoder {
	c := &blockCoder{w: w, jobs: make(chan *blockJob, 8), free: make(chan *blockJob, 10), done: make(chan struct{})}
	c.huff.Reuse = huff0.ReusePolicyNone
	go c.run()
	return c
}

func (c *blockCoder) run() {
	defer close(c.done)
	for j := range c.jobs {
		if j.sync != nil {
			close(j.sync)
			continue
		}
		if c.failed() == nil {
			out := append(c.out[:0], j.head...)
			out = c.code(out, j)
			c.out = out
			if _, err := c.w.Write(out); err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
		}
		j.head, j.lits, j.seqs, j.raw = j.head[:0], j.lits[:0], j.seqs[:0], j.raw[:0]
		select {
		case c.free <- j:
		default:
		}
	}
}

func (c *blockCoder) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *blockCoder) newJob() *blockJob {
	select {
	case j := <-c.free:
		return j
	default:
		return &blockJob{}
	}
}

func (c *blockCoder) send(j *blockJob) { c.jobs <- j }

// sync waits until every block sent is written.
func (c *blockCoder) sync() error {
	m := &blockJob{sync: make(chan struct{})}
	c.jobs <- m
	<-m.sync
	return c.failed()
}

// stop ends the goroutine once every block sent is written.
func (c *blockCoder) stop() error {
	select {
	case <-c.done:
	default:
		close(c.jobs)
		<-c.done
	}
	return c.failed()
}

// code appends block j.
func (c *blockCoder) code(out []byte, j *blockJob) []byte {
	hdr := len(out)
	out = append(out, 0, 0, 0)
	if len(j.raw) > 0 || (len(j.lits) == 0 && len(j.seqs) == 0) {
		out = append(out, j.raw...)
		blockHeader(out[hdr:], j.last, 0, len(j.raw))
		return out
	}
	out = c.literals(out, j.lits)
	out = c.sequences(out, j.seqs)
	blockHeader(out[hdr:], j.last, 2, len(out)-hdr-3)
	return out
}

func blockHeader(b []byte, last bool, typ, size int) {
	v := uint32(typ<<1 | size<<3)
	if last {
		v |= 1
	}
	b[0], b[1], b[2] = byte(v), byte(v>>8), byte(v>>16)
}

// literals appends the literals section: Huffman-coded when that is
// smaller, else raw.
func (c *blockCoder) literals(out, lits []byte) []byte {
	n := len(lits)
	if n >= 256 {
		comp, _, err := huff0.Compress4X(lits, &c.huff)
		if err == nil && len(comp)+5 < n && n < 1<<18 {
			c := len(comp)
			switch {
			case n < 1<<10 && c < 1<<10:
				v := uint32(2 | 1<<2 | n<<4 | c<<14)
				out = append(out, byte(v), byte(v>>8), byte(v>>16))
			case n < 1<<14 && c < 1<<14:
				v := uint32(2 | 2<<2 | n<<4 | c<<18)
				out = append(out, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
			default:
				v := uint64(2 | 3<<2 | n<<4 | c<<22)
				out = append(out, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32))
			}
			return append(out, comp...)
		}
	}
	switch {
	case n < 32:
		out = append(out, byte(n<<3))
	case n < 1<<12:
		out = append(out, byte(1<<2|n<<4), byte(n>>4))
	default:
		out = append(out, byte(3<<2|n<<4), byte(n>>4), byte(n>>12))
	}
	return append(out, lits...)
}

// sequences appends the sequences section. Each of its three codes is
// coded with a table fitted to the block's sequences when there are
// enough of them to pay for the table's description, else with the
// format's predefined table.
func (c *blockCoder) sequences(out []byte, seqs []sequence) []byte {
	n := len(seqs)
	switch {
	case n < 128:
		out = append(out, byte(n))
	case n < 0x7f00:
		out = append(out, byte(n>>8+128), byte(n))
	default:
		out = append(out, 0xff, byte(n-0x7f00), byte((n-0x7f00)>>8))
	}
	if n == 0 {
		return out
	}
	var counts [3][maxCodes]int32
	for i := range seqs {
		s := &seqs[i]
		counts[0][s.llCode]++
		counts[1][s.ofCode]++
		counts[2][s.mlCode]++
	}
	tables := [3]*fseTable{&predefLL, &predefOF, &predefML}
	modesAt := len(out)
	out = append(out, 0)
	for k, maxLog := range [3]uint8{9, 8, 9} {
		if n < fittedMin {
			continue
		}
		norm, log, ok := normalize(counts[k][:], n, maxLog, c.norm[k][:0])
		if !ok {
			continue
		}
		c.norm[k] = norm
		out = writeNCount(out, norm, log)
		c.fitted[k].build(log, norm)
		tables[k] = &c.fitted[k]
		out[modesAt] |= 2 << (6 - 2*k) // FSE_Compressed_Mode
	}
	llT, ofT, mlT := tables[0], tables[1], tables[2]
	bw := bitWriter{out: out}
	s := &seqs[n-1]
	var ll, of, ml fseState
	ll.init(llT, s.llCode)
	of.init(ofT, s.ofCode)
	ml.init(mlT, s.mlCode)
	bw.add(s.litLen, llBits[s.llCode])
	bw.add(s.mlBase, mlBits[s.mlCode])
	bw.add(s.offBase, s.ofCode)
	for i := n - 2; i >= 0; i-- {
		s := &seqs[i]
		of.encode(&bw, ofT, s.ofCode)
		ml.encode(&bw, mlT, s.mlCode)
		ll.encode(&bw, llT, s.llCode)
		bw.add(s.litLen, llBits[s.llCode])
		bw.add(s.mlBase, mlBits[s.mlCode])
		bw.add(s.offBase, s.ofCode)
	}
	bw.add(uint32(ml.state), mlT.log)
	bw.add(uint32(of.state), ofT.log)
	bw.add(uint32(ll.state), llT.log)
	return bw.close()
}

// maxCodes is the number of match length codes, the most of the three
// codes; fittedMin is how many sequences a block needs for fitted tables.
const (
	maxCodes  = 53
	fittedMin = 64
)

// normalize fits a distribution of counts (of n symbols) to a table of
// 1<<log entries, log at most maxLog: every symbol seen keeps at least
// one entry. It reports false when one symbol is all there is (the
// predefined table serves better than a table of one symbol).
func normalize(counts []int32, n int, maxLog uint8, norm []int16) ([]int16, uint8, bool) {
	last, seen := 0, 0
	for s, c := range counts {
		if c > 0 {
			last, seen = s, seen+1
		}
	}
	if seen < 2 {
		return norm, 0, false
	}
	log := uint8(min(max(bits.Len(uint(n))-1, 5), int(maxLog)))
	for 1<<log < 2*seen && log < maxLog {
		log++
	}
	if 1<<log < seen {
		return norm, 0, false
	}
	size := int32(1) << log
	sum, big := int32(0), 0
	for s := range last + 1 {
		v := int32(0)
		if c := counts[s]; c > 0 {
			v = max(1, int32((int64(c)*int64(size)+int64(n)/2)/int64(n)))
		}
		norm = append(norm, int16(v))
		sum += v
		if v > int32(norm[big]) {
			big = s
		}
	}
	// The rounding's excess or shortfall goes to the commonest symbol, or,
	// when it cannot take it all, is taken one entry at a time from the
	// symbols with the most.
	for sum != size {
		if d := size - sum; int32(norm[big])+d >= 1 {
			norm[big] += int16(d)
			break
		}
		m := 0
		for s := range norm {
			if norm[s] > norm[m] {
				m = s
			}
		}
		if norm[m] <= 1 {
			return norm, 0, false
		}
		norm[m]--
		sum--
	}
	return norm, log, true
}

// writeNCount appends the FSE table description of norm (RFC 8878
// 4.1.1): the accuracy log, then each symbol's count in as few bits as
// what remains allows, runs of absent symbols as repeat flags.
func writeNCount(out []byte, norm []int16, log uint8) []byte {
	var acc uint64
	var nb uint
	put := func(v uint64, n uint) {
		acc |= v << nb
		nb += n
		for nb >= 8 {
			out = append(out, byte(acc))
			acc >>= 8
			nb -= 8
		}
	}
	size := int32(1) << log
	remaining := size + 1
	threshold := size
	nbBits := uint(log) + 1
	put(uint64(log-5), 4)
	previous0 := false
	for s := 0; s < len(norm) && remaining > 1; {
		if previous0 {
			start := s
			for s < len(norm) && norm[s] == 0 {
				s++
			}
			for s >= start+24 {
				start += 24
				put(0xffff, 16)
			}
			for s >= start+3 {
				start += 3
				put(3, 2)
			}
			put(uint64(s-start), 2)
		}
		count := int32(norm[s])
		s++
		maxV := 2*threshold - 1 - remaining
		remaining -= max(count, -count)
		count++
		if count >= threshold {
			count += maxV
		}
		if count < maxV {
			put(uint64(count), nbBits-1)
		} else {
			put(uint64(count), nbBits)
		}
		previous0 = count == 1
		for remaining < threshold {
			nbBits--
			threshold >>= 1
		}
	}
	if nb > 0 {
		out = append(out, byte(acc))
	}
	return out
}

// bitWriter writes bits least significant first, as zstd's backward
// bitstreams are read from their end.
type bitWriter struct {
	out []byte
	acc uint64
	n   uint
}

// add appends the n low bits of v (n <= 32).
func (b *bitWriter) add(v uint32, n uint8) {
	b.acc |= uint64(v&(1<<n-1)) << b.n
	b.n += uint(n)
	if b.n >= 32 {
		b.out = binary.LittleEndian.AppendUint32(b.out, uint32(b.acc))
		b.acc >>= 32
		b.n -= 32
	}
}

// close adds the end mark and the last bytes.
func (b *bitWriter) close() []byte {
	b.add(1, 1)
	for b.n > 0 {
		b.out = append(b.out, byte(b.acc))
		b.acc >>= 8
		b.n -= min(b.n, 8)
	}
	return b.out
}

// fseTable is an FSE coding table built from a normalized distribution.
type fseTable struct {
	log    uint8
	states []uint16
	sym    []fseSymbol
	spread []uint8 // scratch for build
}

type fseSymbol struct {
	deltaNbBits    uint32
	deltaFindState int32
}

type fseState struct{ state uint16 }

func (s *fseState) init(t *fseTable, sym uint8) {
	tt := t.sym[sym]
	nb := (tt.deltaNbBits + 1<<15) >> 16
	im := int32(nb<<16 - tt.deltaNbBits)
	s.state = t.states[im>>nb+tt.deltaFindState]
}

func (s *fseState) encode(b *bitWriter, t *fseTable, sym uint8) {
	tt := t.sym[sym]
	nb := (uint32(s.state) + tt.deltaNbBits) >> 16
	b.add(uint32(s.state), uint8(nb))
	s.state = t.states[int32(s.state>>nb)+tt.deltaFindState]
}

// newFSETable builds the coding table of norm.
func newFSETable(log uint8, norm []int16) fseTable {
	var t fseTable
	t.build(log, norm)
	return t
}

// build makes t the coding table of norm (RFC 8878 4.1.1), as the decoder
// builds its decoding table, reusing t's memory.
func (t *fseTable) build(log uint8, norm []int16) {
	size := 1 << log
	high := size - 1
	var cumulBuf [maxCodes + 1]int
	cumul := cumulBuf[:len(norm)+1]
	symbols := t.spread[:0]
	symbols = append(symbols, make([]uint8, size)...)
	for s, v := range norm {
		if v == -1 {
			cumul[s+1] = cumul[s] + 1
			symbols[high] = uint8(s)
			high--
		} else {
			cumul[s+1] = cumul[s] + int(v)
		}
	}
	step := size>>1 + size>>3 + 3
	pos := 0
	for s, v := range norm {
		for range max(v, 0) {
			symbols[pos] = uint8(s)
			pos = (pos + step) & (size - 1)
			for pos > high {
				pos = (pos + step) & (size - 1)
			}
		}
	}
	t.spread = symbols
	t.log = log
	t.states = append(t.states[:0], make([]uint16, size)...)
	t.sym = append(t.sym[:0], make([]fseSymbol, len(norm))...)
	for u, s := range symbols {
		t.states[cumul[s]] = uint16(size + u)
		cumul[s]++
	}
	total := int32(0)
	for s, v := range norm {
		switch v {
		case 0:
		case -1, 1:
			t.sym[s] = fseSymbol{deltaNbBits: uint32(log)<<16 - 1<<log, deltaFindState: total - 1}
			total++
		default:
			maxBits := uint32(log) - uint32(bits.Len32(uint32(v-1))-1)
			t.sym[s] = fseSymbol{deltaNbBits: maxBits<<16 - uint32(v)<<maxBits, deltaFindState: total - int32(v)}
			total += int32(v)
		}
	}
}

// The predefined distributions and the extra bits of each code (RFC 8878
// 3.1.1.3.2).
var (
	predefLL = newFSETable(6, []int16{4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1,
		2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1})
	predefML = newFSETable(6, []int16{1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1})
	predefOF = newFSETable(5, []int16{1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1})

	llBits = [36]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	mlBits = [53]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	llSmall, mlSmall = codeTables()
)

// codeTables maps small literal lengths (below 64) and match lengths - 3
// (below 128) to their codes.
func codeTables() (ll [64]uint8, ml [128]uint8) {
	code, base := 0, 0
	for v := range ll {
		for code+1 < len(llBits) && v >= base+1<<llBits[code] {
			base += 1 << llBits[code]
			code++
		}
		ll[v] = uint8(code)
	}
	code, base = 0, 0
	for v := range ml {
		for code+1 < len(mlBits) && v >= base+1<<mlBits[code] {
			base += 1 << mlBits[code]
			code++
		}
		ml[v] = uint8(code)
	}
	return ll, ml
}

func llCode(v uint32) uint8 {
	if v < 64 {
		return llSmall[v]
	}
	return uint8(bits.Len32(v) - 1 + 19)
}

func mlCode(v uint32) uint8 {
	if v < 128 {
		return mlSmall[v]
	}
	return uint8(bits.Len32(v) - 1 + 36)
}
