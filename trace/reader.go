package trace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/bits"
	"os"
	"time"
	"unicode/utf8"

	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/schema"
)

// Column names of the format, as they appear in the header row.
const (
	ColTimestamp = "Timestamp"
	ColOperation = "Operation"
	ColSize      = "Object_Size_Bytes"
	ColTier      = "Tier"
	ColKey       = "Key"
	ColPhase     = "Phase"
	ColRequest   = "Request"
	ColQoS       = "QoS"
	ColUser      = "User"
	ColTokens    = "Tokens"
)

// EpochThreshold is the first-row timestamp, in seconds, from which a trace
// is taken to carry Unix-epoch timestamps (2001-09-09). No virtual-time trace
// is that long, and no epoch trace was written before then.
const EpochThreshold = 1_000_000_000

// zstdMagic starts every zstd frame (RFC 8878 section 3.1.1).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// isZstd reports whether magic, an input's first four bytes, starts a zstd
// stream: a zstd frame, or a skippable frame (magic 0x184D2A50 to
// 0x184D2A5F, little-endian; RFC 8878 section 3.1.2), which pzstd writes
// before each of its frames and every zstd decoder skips.
func isZstd(magic []byte) bool {
	return bytes.Equal(magic, zstdMagic) ||
		len(magic) == 4 && magic[0]&0xf0 == 0x50 && magic[1] == 0x2a && magic[2] == 0x4d && magic[3] == 0x18
}

// column roles, in the order of the kvbench dialect.
const (
	roleTimestamp = iota
	roleOperation
	roleSize
	roleTier
	roleKey
	rolePhase
	roleRequest
	roleQoS
	roleUser
	roleTokens
	numRoles
	numRequired = roleRequest // the roles before it are required
)

var roleNames = [numRoles]string{ColTimestamp, ColOperation, ColSize, ColTier, ColKey, ColPhase, ColRequest, ColQoS, ColUser, ColTokens}

const readBufferSize = 128 << 10

// Reader reads a trace one Record at a time from any io.Reader, plain or
// zstd (through the registered ZstdCodec). It never holds more than one
// line (at most MaxLineBytes) and a fixed buffer, whatever the trace's
// length, and in steady state Read does not allocate.
//
// A Reader is not safe for concurrent use. Its first error is sticky.
type Reader struct {
	// Name names the input in errors (a file name, or "-" for stdin). Set
	// it before the first Read.
	Name string
	// MaxSize, when positive, bounds Object_Size_Bytes: a larger size is
	// a *ParseError (ErrSizeTooLarge) at its line and column, for a
	// consumer that cannot represent it (the replay rounds sizes up to
	// blocks and adds them up). Set it before the first Read.
	MaxSize int64
	// Digest, when set before the first Read, makes the Reader hash the
	// trace's content as it reads it (ContentDigest): the CSV text, after
	// zstd decompression, so that a trace has one identity whether it was
	// stored compressed or not.
	Digest bool

	src    *errTracker
	br     *bufio.Reader
	zdec   io.ReadCloser
	zin    *countingReader // the compressed bytes the decoder read
	closer io.Closer
	digest *digester

	started bool
	err     error
	line    int

	header  []string
	index   [numRoles]int // field index of each role, -1 when absent
	nfields int
	fields  [][]byte

	haveFirst  bool
	isEpoch    bool
	firstRaw   int64 // first row's timestamp, ns, as written
	prevRaw    int64
	rows       int64
	outOfOrder int64
	compressed bool
}

// NewReader returns a Reader of r. The header is read by the first call to
// Read or Header.
func NewReader(r io.Reader) *Reader {
	return &Reader{src: &errTracker{r: r}}
}

// Open opens the trace file at path, or stdin when path is "-", and names the
// Reader after it. Close must be called.
func Open(path string) (*Reader, error) {
	if path == "-" {
		r := NewReader(os.Stdin)
		r.Name = "-"
		return r, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	r := NewReader(f)
	r.Name = path
	r.closer = f
	return r, nil
}

// Close releases the zstd decoder and closes the file opened by Open. It
// does not close an io.Reader given to NewReader.
func (r *Reader) Close() error {
	if r.zdec != nil {
		r.zdec.Close() // a decoder's Close only releases it
		r.zdec = nil
	}
	if r.closer != nil {
		err := r.closer.Close()
		r.closer = nil
		return err
	}
	return nil
}

// Header returns the header row's column names, reading it if no row has
// been read yet.
func (r *Reader) Header() ([]string, error) {
	if !r.started {
		r.start()
	}
	if r.header == nil {
		return nil, r.err
	}
	return r.header, nil
}

// HasRequest reports whether the trace has a Request column.
func (r *Reader) HasRequest() bool { return r.started && r.index[roleRequest] >= 0 }

// HasQoS reports whether the trace has a QoS column.
func (r *Reader) HasQoS() bool { return r.started && r.index[roleQoS] >= 0 }

// HasUser reports whether the trace has a User column: whether it says
// which user each request belongs to, as a closed-loop replay needs.
func (r *Reader) HasUser() bool { return r.started && r.index[roleUser] >= 0 }

// HasTokens reports whether the trace has a Tokens column.
func (r *Reader) HasTokens() bool { return r.started && r.index[roleTokens] >= 0 }

// Compressed reports whether the input is a zstd stream.
func (r *Reader) Compressed() bool { return r.compressed }

// Line returns the number of the line last read; the header is line 1.
func (r *Reader) Line() int { return r.line }

// Rows returns the number of records read so far.
func (r *Reader) Rows() int64 { return r.rows }

// OutOfOrder returns how many rows so far had a timestamp earlier than the
// row before them.
func (r *Reader) OutOfOrder() int64 { return r.outOfOrder }

// ContentDigest returns the hex SHA-256 of the trace's content (the CSV
// text, after zstd decompression) and its length in bytes, when Digest was
// set and the content was read to its end; ok is false otherwise. Two
// traces with equal digests hold the same rows.
func (r *Reader) ContentDigest() (sha256Hex string, n int64, ok bool) {
	if r.digest == nil || !r.digest.eof {
		return "", 0, false
	}
	return hex.EncodeToString(r.digest.h.Sum(nil)), r.digest.n, true
}

// Epoch returns the Unix time of the first row when the trace carries epoch
// timestamps (the reference's); ok is false for virtual-time traces and
// before the first row.
func (r *Reader) Epoch() (t time.Time, ok bool) {
	if !r.isEpoch {
		return time.Time{}, false
	}
	return time.Unix(0, r.firstRaw).UTC(), true
}

// start detects compression and reads the header.
func (r *Reader) start() error {
	if r.started || r.err != nil {
		return r.err
	}
	r.started = true
	for i := range r.index {
		r.index[i] = -1
	}
	r.br = bufio.NewReaderSize(r.src, readBufferSize)
	magic, err := r.br.Peek(len(zstdMagic))
	if err != nil && err != io.EOF {
		return r.fail(r.classify(err))
	}
	var content io.Reader = r.br
	if isZstd(magic) {
		r.compressed = true
		codec := registeredZstd()
		if codec == nil {
			return r.fail(fmt.Errorf("trace: %s: a zstd stream: %w", r.Name, ErrNoZstd))
		}
		// The decoder reads each block's bytes as it decodes it, so zin
		// counts how far into the stream it got.
		r.zin = &countingReader{r: r.br}
		d, err := codec.NewReader(r.zin)
		if err != nil {
			return r.fail(fmt.Errorf("trace: %s: %w", r.Name, err))
		}
		r.zdec, content = d, d
	}
	if r.Digest {
		r.digest = &digester{r: content, h: sha256.New()}
		content = r.digest
	}
	if content != io.Reader(r.br) {
		r.br = bufio.NewReaderSize(content, readBufferSize)
	}
	line, err := r.readLine()
	if err != nil {
		if err == io.EOF {
			return r.fail(&ParseError{File: r.Name, Line: 1, Err: ErrBadHeader, Detail: "empty input, want a header row"})
		}
		return r.fail(err)
	}
	line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	if len(line) == 0 {
		return r.fail(&ParseError{File: r.Name, Line: r.line, Err: ErrBadHeader, Detail: "empty first line, want a header row"})
	}
	if i := bytes.IndexByte(line, '"'); i >= 0 {
		return r.fail(&ParseError{File: r.Name, Line: r.line, Column: bytes.Count(line[:i], []byte{','}) + 1, Value: parsemsg.Shorten(line), Err: ErrQuoted})
	}
	parts := bytes.Split(line, []byte{','})
	header := make([]string, len(parts)) // r.header only once valid
	for i, p := range parts {
		name := string(bytes.TrimSpace(p))
		header[i] = name
		for role, rn := range roleNames {
			if name != rn {
				continue
			}
			if r.index[role] >= 0 {
				return r.fail(&ParseError{File: r.Name, Line: r.line, Column: i + 1, Value: name, Err: ErrBadHeader,
					Detail: fmt.Sprintf("column named twice (also column %d)", r.index[role]+1)})
			}
			r.index[role] = i
		}
	}
	var missing []string
	for role := 0; role < numRequired; role++ {
		if r.index[role] < 0 {
			missing = append(missing, roleNames[role])
		}
	}
	if len(missing) > 0 {
		return r.fail(&ParseError{File: r.Name, Line: r.line, Value: parsemsg.Shorten(line), Err: ErrBadHeader,
			Detail: fmt.Sprintf("missing required column(s) %s", joinNames(missing))})
	}
	r.header = header
	r.nfields = len(parts)
	r.fields = make([][]byte, 0, r.nfields)
	return nil
}

func joinNames(names []string) string {
	var b []byte
	for i, n := range names {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, n...)
	}
	return string(b)
}

func (r *Reader) fail(err error) error {
	r.err = err
	return err
}

// readLine returns the next line without its line ending. The slice is valid
// until the next call.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if len(line) == 0 && err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, r.classify(err)
	}
	r.line++
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, r.classify(err)
	}
	n := len(line)
	if n > 0 && line[n-1] == '\n' {
		n--
		if n > 0 && line[n-1] == '\r' {
			n--
		}
	}
	// The limit is on the line without its ending.
	if err == bufio.ErrBufferFull || n > MaxLineBytes {
		return nil, &ParseError{File: r.Name, Line: r.line, Value: parsemsg.Shorten(line), Err: ErrLineTooLong,
			Detail: fmt.Sprintf("more than %d bytes", MaxLineBytes)}
	}
	return line[:n], nil
}

// classify turns an error from the line buffer into a *ParseError when it
// comes from zstd decoding, or an I/O error when it comes from the
// underlying reader.
func (r *Reader) classify(err error) error {
	if !r.compressed || r.src.err != nil {
		return parsemsg.ReadError("trace", r.Name, r.line, err)
	}
	line := r.line + 1
	var off int64
	if r.zin != nil {
		off = r.zin.n
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &ParseError{File: r.Name, Line: line, Offset: off, Err: ErrTruncated, Detail: "the stream ends inside a frame"}
	}
	return &ParseError{File: r.Name, Line: line, Offset: off, Err: ErrCorrupt, Detail: err.Error()}
}

// Read reads the next row into rec. It returns io.EOF at the end of the
// trace and a *ParseError for malformed input. rec.Key reuses its capacity;
// all other fields are overwritten.
func (r *Reader) Read(rec *schema.Record) error {
	if r.err != nil {
		return r.err
	}
	if !r.started {
		if err := r.start(); err != nil {
			return err
		}
	}
	for {
		line, err := r.readLine()
		if err != nil {
			return r.fail(err)
		}
		if len(line) == 0 {
			continue
		}
		if err := r.parse(line, rec); err != nil {
			return r.fail(err)
		}
		r.rows++
		return nil
	}
}

func (r *Reader) parse(line []byte, rec *schema.Record) error {
	if i := bytes.IndexByte(line, '"'); i >= 0 {
		return r.fieldErr(bytes.Count(line[:i], []byte{','}), line, ErrQuoted, "fields are never quoted")
	}
	f := splitFields(r.fields[:0], line)
	r.fields = f
	if len(f) != r.nfields {
		col := min(len(f), r.nfields)
		return &ParseError{File: r.Name, Line: r.line, Column: col + 1, Value: parsemsg.Shorten(line), Err: ErrFieldCount,
			Detail: fmt.Sprintf("want %d fields as in the header", r.nfields)}
	}

	ix := &r.index
	ts := f[ix[roleTimestamp]]
	raw, ok := parseTimestamp(ts)
	if !ok {
		return r.fieldErr(ix[roleTimestamp], ts, ErrBadNumber, "want non-negative seconds such as 12.000250")
	}
	if !r.haveFirst {
		r.haveFirst = true
		r.firstRaw = raw
		r.isEpoch = raw >= EpochThreshold*int64(time.Second)
		r.prevRaw = raw
	}
	if raw < r.prevRaw {
		r.outOfOrder++
	}
	r.prevRaw = raw
	if r.isEpoch {
		rec.Time = time.Duration(raw - r.firstRaw)
	} else {
		rec.Time = time.Duration(raw)
	}

	b := f[ix[roleOperation]]
	if rec.Op, ok = schema.ParseOpBytes(b); !ok {
		return r.fieldErr(ix[roleOperation], b, ErrBadEnum, "want Read, Write or Delete")
	}
	b = f[ix[roleSize]]
	size, ok := parseUint(b, 1<<63-1)
	if !ok {
		if len(b) > 1 && b[0] == '-' {
			if _, digits := parseUint(b[1:], 1<<64-1); digits {
				return r.fieldErr(ix[roleSize], b, ErrNegativeSize, "want a size in bytes >= 0")
			}
		}
		return r.fieldErr(ix[roleSize], b, ErrBadNumber, "want a non-negative integer")
	}
	if r.MaxSize > 0 && size > uint64(r.MaxSize) {
		return r.fieldErr(ix[roleSize], b, ErrSizeTooLarge, fmt.Sprintf("want at most %d bytes here", r.MaxSize))
	}
	rec.Size = int64(size)
	b = f[ix[roleTier]]
	if rec.Tier, ok = schema.ParseTierBytes(b); !ok {
		return r.fieldErr(ix[roleTier], b, ErrBadEnum, "want "+schema.TierChoices)
	}
	b = f[ix[roleKey]]
	if !validKey(b) {
		return r.fieldErr(ix[roleKey], b, ErrBadKey, "want a non-empty name without whitespace or control characters")
	}
	rec.Key = append(rec.Key[:0], b...)
	b = f[ix[rolePhase]]
	if rec.Phase, ok = schema.ParsePhaseBytes(b); !ok {
		return r.fieldErr(ix[rolePhase], b, ErrBadEnum, "want Prefill, Decode or Evict")
	}
	rec.Request = 0
	if i := ix[roleRequest]; i >= 0 && len(f[i]) > 0 {
		if rec.Request, ok = parseUint(f[i], 1<<64-1); !ok {
			return r.fieldErr(i, f[i], ErrBadNumber, "want a non-negative integer or nothing")
		}
	}
	rec.QoS = schema.QoSNone
	if i := ix[roleQoS]; i >= 0 {
		if rec.QoS, ok = schema.ParseQoSBytes(f[i]); !ok {
			return r.fieldErr(i, f[i], ErrBadEnum, "want interactive, responsive, batch or nothing")
		}
	}
	rec.User = 0
	if i := ix[roleUser]; i >= 0 && len(f[i]) > 0 {
		if rec.User, ok = parseUint(f[i], 1<<64-1); !ok {
			return r.fieldErr(i, f[i], ErrBadNumber, "want a non-negative integer or nothing")
		}
	}
	rec.Tokens = 0
	if i := ix[roleTokens]; i >= 0 && len(f[i]) > 0 {
		var n uint64
		if n, ok = parseUint(f[i], 1<<63-1); !ok {
			return r.fieldErr(i, f[i], ErrBadNumber, "want a non-negative integer or nothing")
		}
		rec.Tokens = int64(n)
	}
	return nil
}

func (r *Reader) fieldErr(i int, value []byte, err error, detail string) error {
	name := ""
	if i < len(r.header) {
		name = r.header[i]
	}
	return &ParseError{File: r.Name, Line: r.line, Column: i + 1, Name: name, Value: parsemsg.Shorten(value), Err: err, Detail: detail}
}

// SWAR constants: eight bytes at a time in a uint64.
const (
	swarLSB = 0x0101010101010101
	swarLo7 = 0x7f7f7f7f7f7f7f7f
)

// zeroBytes returns x with the high bit set in exactly the bytes of x that
// are zero (the exact form of the "haszero" bit trick, without false
// positives; Hacker's Delight 6-1).
func zeroBytes(x uint64) uint64 {
	y := (x & swarLo7) + swarLo7
	return ^(y | x | swarLo7)
}

// splitFields appends the comma-separated fields of line to f. It looks at
// eight bytes at a time: field splitting is the codec's hot path (see
// BenchmarkReader).
func splitFields(f [][]byte, line []byte) [][]byte {
	start, i := 0, 0
	for ; i+8 <= len(line); i += 8 {
		m := zeroBytes(binary.LittleEndian.Uint64(line[i:]) ^ (swarLSB * ','))
		for m != 0 {
			j := i + bits.TrailingZeros64(m)>>3
			f = append(f, line[start:j])
			start = j + 1
			m &= m - 1
		}
	}
	for ; i < len(line); i++ {
		if line[i] == ',' {
			f = append(f, line[start:i])
			start = i + 1
		}
	}
	return append(f, line[start:])
}

// keyByteOK is a constant table: whether a byte may appear in a key as it
// is (printable ASCII other than comma and quote). Other bytes are either
// refused or, from 0x80, checked as UTF-8.
var keyByteOK = func() (t [256]bool) {
	for c := '!'; c < 0x7f; c++ {
		t[c] = c != ',' && c != '"'
	}
	return t
}()

// plainKey reports whether every byte of b is keyByteOK, eight at a time
// (a Writer checks the key of every row it writes).
func plainKey(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		below := (x - ones*0x21) &^ x & highs         // a byte under '!'
		above := ((x + ones*(0x7f-0x7e)) | x) & highs // a byte over '~'
		comma := ((x ^ ones*',') - ones) &^ (x ^ ones*',') & highs
		quote := ((x ^ ones*'"') - ones) &^ (x ^ ones*'"') & highs
		if below|above|comma|quote != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if !keyByteOK[c] {
			return false
		}
	}
	return true
}

// parseUint parses a non-empty run of ASCII digits no greater than max.
func parseUint(b []byte, max uint64) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	if len(b) < 19 && max >= 1e18-1 { // cannot overflow
		for _, c := range b {
			d := uint64(c - '0')
			if d > 9 {
				return 0, false
			}
			n = n*10 + d
		}
		return n, true
	}
	for _, c := range b {
		d := uint64(c - '0')
		if d > 9 {
			return 0, false
		}
		if n > (max-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// parseTimestamp parses digits[.digits] seconds into nanoseconds. Digits
// past the ninth decimal are checked and dropped.
func parseTimestamp(b []byte) (int64, bool) {
	i := bytes.IndexByte(b, '.')
	intPart, frac := b, []byte(nil)
	if i >= 0 {
		intPart, frac = b[:i], b[i+1:]
		if len(frac) == 0 {
			return 0, false
		}
	}
	const maxSec = (1<<63 - 1) / int64(time.Second)
	sec, ok := parseUint(intPart, uint64(maxSec))
	if !ok {
		return 0, false
	}
	var ns int64
	scale := int64(100_000_000)
	for _, c := range frac {
		d := int64(c - '0')
		if d < 0 || d > 9 {
			return 0, false
		}
		ns += d * scale
		scale /= 10
	}
	total := int64(sec) * int64(time.Second)
	if total > 1<<63-1-ns {
		return 0, false
	}
	return total + ns, true
}

// validKey reports whether b is a key the format allows: non-empty, valid
// UTF-8, and free of whitespace, control characters, commas and quotes.
func validKey(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if plainKey(b) {
		return true
	}
	ascii := true
	for _, c := range b {
		if !keyByteOK[c] {
			if c < 0x80 {
				return false
			}
			ascii = false
		}
	}
	if ascii {
		return true
	}
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			return false
		}
		if r == 0x85 || r == 0xa0 || r == 0x1680 || (r >= 0x2000 && r <= 0x200a) ||
			r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000 || (r >= 0x80 && r < 0xa0) {
			return false // Unicode whitespace and C1 controls
		}
		b = b[n:]
	}
	return true
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// digester hashes and counts the bytes read through it.
type digester struct {
	r   io.Reader
	h   hash.Hash
	n   int64
	eof bool
}

func (d *digester) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.h.Write(p[:n])
	d.n += int64(n)
	if err == io.EOF {
		d.eof = true
	}
	return n, err
}

// errTracker remembers the last error its reader returned other than io.EOF,
// so that a decoding error can be told from an I/O error.
type errTracker struct {
	r   io.Reader
	err error
}

func (t *errTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		t.err = err
	}
	return n, err
}
