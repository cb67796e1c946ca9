package trace

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// batchRows is how many records a Writer hands its output goroutine at a
// time, and batchesQueued how many batches may wait there: enough that
// bursts of rows do not stall the caller, little memory.
const (
	batchRows     = 1024
	batchesQueued = 16
)

var freeBatches = 0

// recBatch is records copied from Write, compactly: a batch is written
// on one core and read on another, and the cost of that is in the bytes
// moved. A record equal to the one before (a decode read repeated) is
// counted, not copied.
type recBatch struct {
	recs []packedRecord
	keys []byte // the keys, each once per run of records of one key
	n    int    // records, repeats included
}

// packedRecord is a schema.Record with its key in recBatch.keys, and how
// many times it repeats.
type packedRecord struct {
	time, size           int64
	request, user        uint64
	tokens               int64
	keyEnd               int32 // where the key ends in keys
	keyLen               int32
	op, tier, phase, qos uint8
	times                uint32
}

func newBatch() *recBatch {
	return &recBatch{recs: make([]packedRecord, 0, batchRows)}
}

// repeat counts rec again if it equals the last record added, whose key
// sameKey says rec's is; it reports whether the batch is full, and whether
// it did.
func (b *recBatch) repeat(rec *schema.Record, sameKey bool) (full, ok bool) {
	if !sameKey {
		return false, false
	}
	p := &b.recs[len(b.recs)-1]
	if p.time != int64(rec.Time) || p.size != rec.Size || p.request != rec.Request || p.user != rec.User ||
		p.tokens != rec.Tokens || p.op != uint8(rec.Op) || p.tier != uint8(rec.Tier) ||
		p.phase != uint8(rec.Phase) || p.qos != uint8(rec.QoS) {
		return false, false
	}
	p.times++
	b.n++
	return b.n >= batchRows, true
}

// add copies rec and reports whether the batch is full. A key equal to
// the last record's (sameKey) is not copied again.
func (b *recBatch) add(rec *schema.Record, sameKey bool) bool {
	b.n++
	var keyEnd int32
	if sameKey {
		keyEnd = b.recs[len(b.recs)-1].keyEnd
	} else {
		b.keys = append(b.keys, rec.Key...)
		keyEnd = int32(len(b.keys))
	}
	b.append(rec, keyEnd)
	return b.n >= batchRows
}

func (b *recBatch) append(rec *schema.Record, keyEnd int32) {
	b.recs = append(b.recs, packedRecord{time: int64(rec.Time), size: rec.Size, request: rec.Request, user: rec.User,
		tokens: rec.Tokens, keyEnd: keyEnd, keyLen: int32(len(rec.Key)), op: uint8(rec.Op), tier: uint8(rec.Tier),
		phase: uint8(rec.Phase), qos: uint8(rec.QoS), times: 1})
}

// lastKey reports whether key is that of the last record added, which
// the Writer checked.
func (b *recBatch) lastKey(key []byte) bool {
	n := len(b.recs)
	return n > 0 && sameKey(b.keys, &b.recs[n-1], key)
}

func sameKey(keys []byte, p *packedRecord, key []byte) bool {
	return int(p.keyLen) == len(key) && string(keys[p.keyEnd-p.keyLen:p.keyEnd]) == string(key)
}

// record unpacks record i.
func (b *recBatch) record(i int, rec *schema.Record) {
	p := &b.recs[i]
	*rec = schema.Record{Time: time.Duration(p.time), Op: schema.Op(p.op), Size: p.size, Tier: schema.Tier(p.tier),
		Key: b.keys[p.keyEnd-p.keyLen : p.keyEnd], Phase: schema.Phase(p.phase), Request: p.request,
		QoS: schema.QoS(p.qos), User: p.user, Tokens: p.tokens}
}

// rowSink formats and writes rows on the output goroutine.
type rowSink interface {
	// row formats and encodes rec.
	// keyAgain says rec's key is the previous record's.
	row(rec *schema.Record, keyAgain bool) error
	// repeat writes the row of rec, just written, n more times.
	repeat(rec *schema.Record, n int) error
	// flush writes what it holds to the underlying writer.
	flush() error
	// close ends the output (the zstd stream).
	close() error
	// abort gives up the output, incomplete.
	abort()
}

// outPipe runs a rowSink on a goroutine of its own, batch after batch.
type outPipe struct {
	sink rowSink
	full chan outMsg
	free chan *recBatch
	done chan struct{}

	mu  sync.Mutex
	err error // the sink's first error; the batches after it are dropped
}

// outMsg is a batch to write, or, with flushed set, a request to flush
// what came before and close flushed.
type outMsg struct {
	batch   *recBatch
	flushed chan struct{}
}

func newOutPipe(sink rowSink) *outPipe {
	p := &outPipe{sink: sink, full: make(chan outMsg, batchesQueued), free: make(chan *recBatch, batchesQueued+1), done: make(chan struct{})}
	go p.run()
	return p
}

func (p *outPipe) run() {
	defer close(p.done)
	for m := range p.full {
		if b := m.batch; b != nil {
			if p.failed() == nil {
				if err := p.rows(b); err != nil {
					p.fail(err)
				}
			}
			b.recs, b.keys, b.n = b.recs[:0], b.keys[:0], 0
			select {
			case p.free <- b:
			default:
			}
		}
		if m.flushed != nil {
			if p.failed() == nil {
				if err := p.sink.flush(); err != nil {
					p.fail(err)
				}
			}
			close(m.flushed)
		}
	}
}

func (p *outPipe) rows(b *recBatch) error {
	var rec schema.Record
	for i := range b.recs {
		b.record(i, &rec)
		keyAgain := i > 0 && b.recs[i].keyEnd == b.recs[i-1].keyEnd
		if err := p.sink.row(&rec, keyAgain); err != nil {
			return err
		}
		if n := int(b.recs[i].times) - 1; n > 0 {
			if err := p.sink.repeat(&rec, n); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *outPipe) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
}

func (p *outPipe) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// send queues b and returns an empty batch for the next records.
// The caller keeps b, which it fills again: its memory stays in the
// caller's cache, and a copy crosses to the pipe's goroutine in one sweep
// rather than record by record.
func (p *outPipe) send(b *recBatch) *recBatch {
	var c *recBatch
	select {
	case c = <-p.free:
	default:
		c = newBatch()
	}
	c.recs = append(c.recs[:0], b.recs...)
	c.keys = append(c.keys[:0], b.keys...)
	c.n = b.n
	p.full <- outMsg{batch: c}
	b.recs, b.keys, b.n = b.recs[:0], b.keys[:0], 0
	return b
}

// sync waits until everything sent is written and flushed; it returns the
// pipe's first error.
func (p *outPipe) sync() error {
	m := outMsg{flushed: make(chan struct{})}
	p.full <- m
	<-m.flushed
	return p.failed()
}

// stop ends the goroutine once it has written everything sent, then, if
// complete, ends the output; it returns the pipe's first error.
func (p *outPipe) stop(complete bool) error {
	close(p.full)
	<-p.done
	if complete && p.failed() == nil {
		if err := p.sink.close(); err != nil {
			p.fail(err)
		}
	} else {
		p.sink.abort()
	}
	return p.failed()
}

// header returns the header row of a dialect.
func header(mlperf bool) string {
	if mlperf {
		// CRLF, as the reference's csv.writer ends its rows.
		return ColTimestamp + "," + ColOperation + "," + ColSize + "," + ColTier + "," + ColKey + "," + ColPhase + "\r\n"
	}
	return strings.Join(roleNames[:], ",") + "\n"
}

// textSink writes rows as text to w, in chunks; through zenc, the zstd
// library's encoder, when it is not nil.
type textSink struct {
	w     io.Writer
	zenc  ZstdWriter
	f     rowFormatter
	chunk []byte
	prev  int    // where the previous row starts in chunk; -1: in last
	last  []byte // the previous row, when chunk no longer holds it
}

// textChunk is how many bytes of rows a textSink writes at a time.
const textChunk = 256 << 10

func newTextSink(w io.Writer, zenc ZstdWriter, f rowFormatter) *textSink {
	s := &textSink{w: w, zenc: zenc, f: f, chunk: make([]byte, 0, textChunk+4096), prev: -1}
	s.chunk = append(s.chunk, header(f.mlperf)...)
	return s
}

func (s *textSink) row(rec *schema.Record, keyAgain bool) error {
	start := len(s.chunk)
	var dup bool
	s.chunk, _, dup = s.f.format(s.chunk, rec, keyAgain)
	if dup {
		if s.prev >= 0 {
			s.chunk = append(s.chunk, s.chunk[s.prev:start]...)
		} else {
			s.chunk = append(s.chunk, s.last...)
		}
	}
	s.prev = start
	if len(s.chunk) >= textChunk {
		return s.write()
	}
	return nil
}

func (s *textSink) repeat(rec *schema.Record, n int) error {
	for range n {
		if err := s.row(rec, true); err != nil {
			return err
		}
	}
	return nil
}

func (s *textSink) write() error {
	_, err := s.w.Write(s.chunk)
	if s.prev >= 0 {
		s.last = append(s.last[:0], s.chunk[s.prev:]...)
		s.prev = -1
	}
	s.chunk = s.chunk[:0]
	return err
}

func (s *textSink) flush() error { return s.writeThen(ZstdWriter.Flush) }

func (s *textSink) close() error { return s.writeThen(ZstdWriter.Close) }

func (s *textSink) abort() {}

// writeThen writes the rows held, then, when compressing, calls end on
// the encoder (Flush ends its block, Close its frame).
func (s *textSink) writeThen(end func(ZstdWriter) error) error {
	if err := s.write(); err != nil {
		return err
	}
	if s.zenc != nil {
		return end(s.zenc)
	}
	return nil
}

// Field bits: bit i stands for a row's field i (column order of the
// dialect's header).
const (
	fieldTime = 1 << iota
	fieldOp
	fieldSize
	fieldTier
	fieldKey
	fieldPhase
	fieldRequest
	fieldQoS
	fieldUser
	fieldTokens
)

// colKey is the Key's field, in both dialects.
const colKey = 4

// maxFields is the number of fields of the kvbench dialect's rows.
const maxFields = 10

// rowShape is where a formatted row's fields end (after their comma or
// newline), from the row's start.
type rowShape struct {
	n    int
	ends [maxFields]int32
}

// fieldStart is where field i starts, from the row's start.
func (s *rowShape) fieldStart(i int) int32 {
	if i == 0 {
		return 0
	}
	return s.ends[i-1]
}

// rowFormatter formats rows, reusing the text of the previous row's fields
// where they repeat: a simulation writes runs of rows of one request at
// one time, and many rows identical to the one before (decode reads).
type rowFormatter struct {
	mlperf   bool
	base     int64 // the mlperf dialect's epoch, in microseconds
	have     bool  // the fields below hold a previous row
	prev     schema.Record
	prevUS   int64
	key      []byte // prev's key, copied
	shape    rowShape
	ts       []byte // the text of prevUS, with its comma
	tail     []byte // the text of prev's last four columns (kvbench dialect)
	tailEnds [4]int32
}

// micros is rec's timestamp as the row carries it, in microseconds.
func (f *rowFormatter) micros(rec *schema.Record) int64 {
	us := (int64(rec.Time) + 500) / 1000
	if f.mlperf {
		us += f.base
	}
	return us
}

// same returns the fields of rec (whose timestamp is us) equal to those of
// o (whose timestamp is ous), its key aside.
func (f *rowFormatter) same(rec *schema.Record, us int64, o *schema.Record, ous int64) uint32 {
	m := bit(us == ous, fieldTime) | bit(rec.Op == o.Op, fieldOp) | bit(rec.Size == o.Size, fieldSize) |
		bit(rec.Tier == o.Tier, fieldTier) | bit(rec.Phase == o.Phase, fieldPhase)
	if !f.mlperf {
		m |= bit(rec.Request == o.Request, fieldRequest) | bit(rec.QoS == o.QoS, fieldQoS) |
			bit(rec.User == o.User, fieldUser) | bit(rec.Tokens == o.Tokens, fieldTokens)
	}
	return m
}

// bit is b when c holds, else 0.
func bit(c bool, b uint32) uint32 {
	if c {
		return b
	}
	return 0
}

// all is the set of a row's fields.
func (f *rowFormatter) all() uint32 {
	if f.mlperf {
		return 1<<6 - 1
	}
	return 1<<maxFields - 1
}

// format appends rec's row to b and records its shape in f.shape. It
// returns the fields equal to the previous row's (none for the first
// row); when all are, it appends nothing and reports dup: the caller
// repeats the previous row, whose shape f.shape still is. keyAgain says
// rec's key is the previous row's, without comparing them.
func (f *rowFormatter) format(b []byte, rec *schema.Record, keyAgain bool) (_ []byte, same uint32, dup bool) {
	us := f.micros(rec)
	if f.have {
		same = f.same(rec, us, &f.prev, f.prevUS)
		if keyAgain || string(rec.Key) == string(f.key) {
			same |= fieldKey
		}
		if same == f.all() {
			return b, same, true
		}
	}
	start := len(b)
	sh := &f.shape
	if same&fieldTime == 0 {
		t := f.ts[:0]
		t = strconv.AppendInt(t, us/1_000_000, 10)
		frac := us % 1_000_000
		t = append(t, '.',
			byte('0'+frac/100000), byte('0'+frac/10000%10), byte('0'+frac/1000%10),
			byte('0'+frac/100%10), byte('0'+frac/10%10), byte('0'+frac%10), ',')
		f.ts = t
	}
	b = append(b, f.ts...)
	sh.ends[0] = int32(len(b) - start)
	b = append(b, rec.Op.String()...)
	b = append(b, ',')
	sh.ends[1] = int32(len(b) - start)
	b = strconv.AppendInt(b, rec.Size, 10)
	b = append(b, ',')
	sh.ends[2] = int32(len(b) - start)
	b = append(b, rec.Tier.String()...)
	b = append(b, ',')
	sh.ends[3] = int32(len(b) - start)
	b = append(b, rec.Key...)
	b = append(b, ',')
	sh.ends[4] = int32(len(b) - start)
	b = append(b, rec.Phase.String()...)
	if f.mlperf {
		b = append(b, '\r', '\n')
		sh.ends[5] = int32(len(b) - start)
		sh.n = 6
	} else {
		b = append(b, ',')
		sh.ends[5] = int32(len(b) - start)
		const tail = fieldRequest | fieldQoS | fieldUser | fieldTokens
		if same&tail != tail {
			t := f.tail[:0]
			if rec.Request != 0 {
				t = strconv.AppendUint(t, rec.Request, 10)
			}
			t = append(t, ',')
			f.tailEnds[0] = int32(len(t))
			t = append(t, rec.QoS.String()...)
			t = append(t, ',')
			f.tailEnds[1] = int32(len(t))
			if rec.User != 0 {
				t = strconv.AppendUint(t, rec.User, 10)
			}
			t = append(t, ',')
			f.tailEnds[2] = int32(len(t))
			if rec.Tokens != 0 {
				t = strconv.AppendInt(t, rec.Tokens, 10)
			}
			t = append(t, '\n')
			f.tailEnds[3] = int32(len(t))
			f.tail = t
		}
		at := int32(len(b) - start)
		b = append(b, f.tail...)
		for i, e := range f.tailEnds {
			sh.ends[6+i] = at + e
		}
		sh.n = maxFields
	}
	f.have = true
	f.prev = *rec
	f.prev.Key = nil
	f.prevUS = us
	if same&fieldKey == 0 {
		f.key = append(f.key[:0], rec.Key...)
	}
	return b, same, false
}
