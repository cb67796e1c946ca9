// Package zstdblock writes zstd frames (RFC 8878) from the literals and
// sequences (package lz) that its caller found: the entropy stage of a zstd encoder
// without its match finder. A caller that knows where its data repeats
// (trace's row encoder matches trace rows field by field) hands each block
// as literals and sequences; Writer codes the literals with Huffman
// (huff0) and the sequences with FSE tables fitted to the block, or the
// format's predefined tables for a block of few sequences, and writes the
// blocks in order on a goroutine of its own. It holds no match finder and
// no decoder: any zstd decoder reads what it writes.
package zstdblock

import (
	"encoding/binary"
	"io"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/huff0"

	"github.com/kvbench/kvbench/trace/internal/lz"
)

// Writer codes and writes blocks, in order, on a goroutine of its own: the
// entropy coding of one block runs beside the caller's matching of the
// next. Its methods are for one goroutine; Close must be called.
type Writer struct {
	w    io.Writer
	jobs chan job
	free chan *lz.Block
	done chan struct{}
	out  []byte
	huff huff0.Scratch
	// fitted and norm are the sequence tables of the block being coded.
	fitted [3]fseTable
	norm   [3][]int16
	codes  []codes // of the block's sequences

	mu  sync.Mutex
	err error
}

// job is a block to write, or a marker (sync), closed when every block
// before it is written.
type job struct {
	b    *lz.Block
	sync chan struct{}
}

// codes are the literal length, offset and match length codes of a
// sequence.
type codes struct{ ll, of, ml uint8 }

var _ lz.Coder = (*Writer)(nil)

// NewWriter returns a Writer to w, and starts its goroutine.
func NewWriter(w io.Writer) *Writer {
	c := &Writer{w: w, jobs: make(chan job, 8), free: make(chan *lz.Block, 10), done: make(chan struct{})}
	c.huff.Reuse = huff0.ReusePolicyNone
	go c.run()
	return c
}

func (c *Writer) run() {
	defer close(c.done)
	for jb := range c.jobs {
		if jb.sync != nil {
			close(jb.sync)
			continue
		}
		j := jb.b
		if c.Err() == nil {
			out := append(c.out[:0], j.Head...)
			out = c.code(out, j)
			c.out = out
			if _, err := c.w.Write(out); err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
		}
		j.Head, j.Lits, j.Seqs, j.Raw, j.Last = j.Head[:0], j.Lits[:0], j.Seqs[:0], j.Raw[:0], false
		select {
		case c.free <- j:
		default:
		}
	}
}

// Err returns the first error of the underlying writer; the blocks sent
// after it are dropped.
func (c *Writer) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// NewBlock returns an empty Block, reusing one written before.
func (c *Writer) NewBlock() *lz.Block {
	select {
	case j := <-c.free:
		return j
	default:
		return &lz.Block{}
	}
}

// Send queues b to be written after the blocks sent before it. The
// Writer owns b until it is written.
func (c *Writer) Send(b *lz.Block) { c.jobs <- job{b: b} }

// Sync waits until every block sent is written, and returns Err.
func (c *Writer) Sync() error {
	m := job{sync: make(chan struct{})}
	c.jobs <- m
	<-m.sync
	return c.Err()
}

// Close ends the goroutine once every block sent is written, and returns
// Err. It does not close the underlying writer; a second Close does
// nothing more.
func (c *Writer) Close() error {
	select {
	case <-c.done:
	default:
		close(c.jobs)
		<-c.done
	}
	return c.Err()
}

// code appends block j.
func (c *Writer) code(out []byte, j *lz.Block) []byte {
	hdr := len(out)
	out = append(out, 0, 0, 0)
	if len(j.Raw) > 0 || (len(j.Lits) == 0 && len(j.Seqs) == 0) {
		out = append(out, j.Raw...)
		blockHeader(out[hdr:], j.Last, 0, len(j.Raw))
		return out
	}
	out = c.literals(out, j.Lits)
	out = c.sequences(out, j.Seqs)
	blockHeader(out[hdr:], j.Last, 2, len(out)-hdr-3)
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
func (c *Writer) literals(out, lits []byte) []byte {
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
func (c *Writer) sequences(out []byte, seqs []lz.Sequence) []byte {
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
	if cap(c.codes) < n {
		c.codes = make([]codes, n)
	}
	cs := c.codes[:n]
	for i := range seqs {
		s := &seqs[i]
		k := codes{ll: llCode(s.LitLen), of: uint8(bits.Len32(s.OffBase) - 1), ml: mlCode(s.MLBase)}
		cs[i] = k
		counts[0][k.ll]++
		counts[1][k.of]++
		counts[2][k.ml]++
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
	s, k := &seqs[n-1], &cs[n-1]
	var ll, of, ml fseState
	ll.init(llT, k.ll)
	of.init(ofT, k.of)
	ml.init(mlT, k.ml)
	bw.add(s.LitLen, llBits[k.ll])
	bw.add(s.MLBase, mlBits[k.ml])
	bw.add(s.OffBase, k.of)
	for i := n - 2; i >= 0; i-- {
		s, k := &seqs[i], &cs[i]
		of.encode(&bw, ofT, k.of)
		ml.encode(&bw, mlT, k.ml)
		ll.encode(&bw, llT, k.ll)
		bw.add(s.LitLen, llBits[k.ll])
		bw.add(s.MLBase, mlBits[k.ml])
		bw.add(s.OffBase, k.of)
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
