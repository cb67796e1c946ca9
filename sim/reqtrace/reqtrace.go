package reqtrace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/kvbench/kvbench/internal/parsemsg"
)

// Request is one LLM request of a trace.
type Request struct {
	// Arrival is the time from the trace's first request, which arrives at
	// 0. It never decreases from one request to the next (see the package
	// doc); ShareGPT requests all arrive at 0.
	Arrival time.Duration
	// Stamp is the record's own timestamp: BurstGPT's Timestamp and a
	// Mooncake-style trace's, as durations from their zero (which the
	// files of one trace share), and an Azure trace's, from the file's
	// first record. Unlike Arrival it decreases where the trace's
	// timestamps do, so that a replay that sleeps (t - previous t) between
	// records, as the reference's BurstGPT replay does over all the files
	// of a pass, can be reproduced. 0 for ShareGPT.
	Stamp time.Duration
	// InputTokens is the prompt, or context, length in tokens (>= 0).
	InputTokens int
	// OutputTokens is the number of generated tokens (>= 0).
	OutputTokens int
	// HashIDs are a Mooncake-style request's prefix-block ids; equal ids
	// are the same reusable KV block. Nil for the other formats.
	HashIDs []int64
	// BlockTokens is the number of tokens each of HashIDs stands for, the
	// last one included, when the record has one id for each BlockTokens
	// tokens of input, rounded up (BlockTokens is MooncakeBlockTokens, or
	// Options.BlockTokens when given). It is 0 when the record's ids do
	// not fit that size (an LMBench-style trace hashes blocks of 6 to 101
	// tokens): its InputTokens are then apportioned evenly over its ids,
	// the first InputTokens % len(HashIDs) of them one token more
	// (ApportionTokens).
	BlockTokens int
	// Conversation is a ShareGPT request's conversation id: the element's
	// "id", or "conv_<index>" (0-based position in the file) when it has
	// none. "" for the other formats.
	Conversation string
	// Turn is a ShareGPT request's 1-based turn number in its conversation,
	// counting skipped pairs; 0 for the other formats.
	Turn int
}

// Format is a request-trace format.
type Format uint8

// The formats. FormatAuto, the zero value, asks NewReader and Open to
// Detect the format.
const (
	FormatAuto Format = iota
	FormatBurstGPT
	FormatShareGPT
	FormatMooncake
	FormatAzure
)

// String returns the format's name as ParseFormat takes it.
func (f Format) String() string {
	switch f {
	case FormatAuto:
		return "auto"
	case FormatBurstGPT:
		return "burstgpt"
	case FormatShareGPT:
		return "sharegpt"
	case FormatMooncake:
		return "mooncake"
	case FormatAzure:
		return "azure"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ParseFormat returns the format named s: "auto", "burstgpt", "sharegpt",
// "mooncake" or "azure", in any case. An unknown name is an error that
// wraps ErrUnknownFormat.
func ParseFormat(s string) (Format, error) {
	for f := FormatAuto; f <= FormatAzure; f++ {
		// Equal lengths: ASCII case only, not the Unicode letters that
		// fold to ASCII ones ("ſharegpt").
		if len(s) == len(f.String()) && strings.EqualFold(s, f.String()) {
			return f, nil
		}
	}
	return FormatAuto, fmt.Errorf("reqtrace: format %q: %w: want auto, burstgpt, sharegpt, mooncake or azure", s, ErrUnknownFormat)
}

// MarshalText implements encoding.TextMarshaler with the format's name.
func (f Format) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseFormat, so a
// Format can be a flag or a configuration field.
func (f *Format) UnmarshalText(b []byte) error {
	g, err := ParseFormat(string(b))
	if err != nil {
		return err
	}
	*f = g
	return nil
}

// Constants of the formats, as the reference and the data's authors use
// them.
const (
	// DefaultMaxConversations is the reference's --max-conversations: how
	// many ShareGPT conversations kv-cache.py reads by default.
	DefaultMaxConversations = 500
	// ShareGPTMaxInputTokens caps a ShareGPT request's InputTokens, as the
	// reference does.
	ShareGPTMaxInputTokens = 16384
	// ShareGPTMaxOutputTokens caps a ShareGPT request's OutputTokens.
	ShareGPTMaxOutputTokens = 2048
	// MooncakeBlockTokens is the number of tokens a Mooncake hash id stands
	// for.
	MooncakeBlockTokens = 512
)

// Reader reads a request trace one Request at a time.
type Reader interface {
	// Next overwrites *req with the next request. It returns io.EOF after
	// the last one, a *ParseError for malformed input, and another error
	// (wrapping the cause) when the underlying reader fails; errors are
	// sticky. A Mooncake Reader decodes HashIDs into the array behind the
	// req.HashIDs it is given, so a caller that keeps a Request's HashIDs
	// past the next call passes a Request with nil HashIDs or copies them.
	Next(req *Request) error
}

// Skipper is implemented by Readers that drop records the way the
// reference does, instead of failing: a BurstGPT Reader drops the rows
// kv-cache.py drops (a token count or timestamp that does not parse, and
// a few that it keeps or stops at: File.RefDepartures), and a
// ShareGPT Reader the turn pairs that are not a human turn followed by a gpt
// turn. Find it with a type assertion.
type Skipper interface {
	// Skipped returns how many records were dropped so far.
	Skipped() int64
	// SkipErrors returns a *ParseError for each of the first MaxSkipErrors
	// records dropped, saying where and why.
	SkipErrors() []error
}

// MaxSkipErrors is how many dropped records a Skipper describes.
const MaxSkipErrors = 10

// Options configure a Reader.
type Options struct {
	// Name names the input in errors: a file name, or "-" for standard
	// input. Open sets it to the path when it is empty.
	Name string
	// MaxConversations makes a ShareGPT Reader stop after the first
	// MaxConversations elements of the array, as the reference's
	// --max-conversations does (its default is DefaultMaxConversations);
	// 0 reads them all. The rest of the file is not read.
	MaxConversations int
	// TimeUnit is the unit of a Mooncake-style trace's timestamps: "s",
	// "ms", "us" or "ns"; "" finds it from the first timestamp.
	TimeUnit string
	// BlockTokens is the number of tokens a Mooncake-style trace's hash id
	// stands for; 0 takes MooncakeBlockTokens. A record whose ids do not
	// fit it has its input apportioned over them (Request.BlockTokens).
	BlockTokens int
	// OpenFile opens a path for Open; nil is os.Open. A caller that must
	// stop while the open waits (a named pipe with no writer yet blocks
	// in open(2)) gives one that a signal ends.
	OpenFile func(path string) (io.ReadCloser, error) `json:"-"`
}

// Validate reports whether o is usable.
func (o Options) Validate() error {
	switch o.TimeUnit {
	case "", "s", "ms", "us", "ns":
	default:
		return fmt.Errorf("reqtrace: time unit %q: want s, ms, us or ns", o.TimeUnit)
	}
	if o.BlockTokens < 0 {
		return fmt.Errorf("reqtrace: block tokens %d: must be >= 0 (0 is Mooncake's %d)", o.BlockTokens, MooncakeBlockTokens)
	}
	if o.MaxConversations < 0 {
		return fmt.Errorf("reqtrace: max conversations %d: must be >= 0 (0 reads all)", o.MaxConversations)
	}
	return nil
}

const (
	readBufferSize = 64 << 10
	// detectBytes is how much of the input NewReader gives Detect.
	detectBytes = 4 << 10
)

// utf8BOM is the UTF-8 byte order mark, which Excel and PowerShell put
// before CSV headers.
const utf8BOM = "\xef\xbb\xbf"

// NewReader returns a Reader of the trace r in format f, detecting the
// format from the first bytes when f is FormatAuto. A UTF-8 byte order mark
// is skipped. For the CSV formats it reads the header, and for ShareGPT the
// opening bracket, before returning, so a wrong format or a bad header is
// reported here (a *ParseError). NewReader does not decompress: Open does.
func NewReader(r io.Reader, f Format, opt Options) (Reader, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	tr := &errTracker{r: r}
	br := bufio.NewReaderSize(tr, readBufferSize)
	// A read error after some bytes stays in br, and the Reader returns it
	// after those bytes.
	head, err := br.Peek(detectBytes)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull && len(head) == 0 {
		return nil, parsemsg.ReadError("reqtrace", opt.Name, 1, err)
	}
	if f == FormatAuto {
		f, err = Detect(head)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				pe.File = opt.Name
			}
			return nil, err
		}
	}
	bom := bytes.HasPrefix(head, []byte(utf8BOM))
	if bom {
		br.Discard(len(utf8BOM)) // cannot fail: the bytes are buffered
	}
	b := base{name: opt.Name, tr: tr, bom: bom}
	switch f {
	case FormatBurstGPT:
		return newBurstGPT(b, br)
	case FormatShareGPT:
		return newShareGPT(b, br, opt.MaxConversations)
	case FormatMooncake:
		m := newMooncake(b, br)
		m.forced = opt.TimeUnit
		m.blocks.Tokens, m.blocks.Given = opt.BlockTokens, opt.BlockTokens > 0
		if !m.blocks.Given {
			m.blocks.Tokens = MooncakeBlockTokens
		}
		return m, nil
	case FormatAzure:
		return newAzure(b, br)
	}
	return nil, fmt.Errorf("reqtrace: %w: %v", ErrUnknownFormat, f)
}

// Detect returns the format of a trace from its first bytes (a KiB or so,
// at least the first line): a JSON array is ShareGPT; JSON object lines
// naming hash_ids or input_length are Mooncake; a CSV header with
// TIMESTAMP, ContextTokens and GeneratedTokens is Azure, and one with
// "Request tokens" is BurstGPT. Anything else is a *ParseError wrapping
// ErrUnknownFormat that quotes the first line.
func Detect(head []byte) (Format, error) {
	head = bytes.TrimPrefix(head, []byte(utf8BOM))
	start := 0
	for start < len(head) && isSpace(head[start]) {
		start++
	}
	line := 1 + bytes.Count(head[:start], []byte{'\n'})
	if start == len(head) {
		return FormatAuto, &ParseError{Line: line, Err: ErrUnknownFormat, Detail: "empty input"}
	}
	first := head[start:]
	if i := bytes.IndexAny(first, "\r\n"); i >= 0 {
		first = first[:i] // a CSV line may end with a lone CR, as Python's csv reads it
	}
	switch first[0] {
	case '[':
		return FormatShareGPT, nil
	case '{':
		if bytes.Contains(first, []byte(`"hash_ids"`)) || bytes.Contains(first, []byte(`"input_length"`)) {
			return FormatMooncake, nil
		}
	default:
		var ts, ctx, gen, req bool
		for f := range bytes.SplitSeq(first, []byte{','}) {
			switch string(bytes.Trim(f, " \t\"")) {
			case azureTimestamp:
				ts = true
			case azureContext:
				ctx = true
			case azureGenerated:
				gen = true
			case burstRequest:
				req = true
			}
		}
		switch {
		case ts && ctx && gen:
			return FormatAzure, nil
		case req:
			return FormatBurstGPT, nil
		}
	}
	return FormatAuto, &ParseError{
		Line:   line,
		Value:  parsemsg.Shorten(first),
		Err:    ErrUnknownFormat,
		Detail: "want a BurstGPT or Azure CSV header, a ShareGPT JSON array or Mooncake JSON lines",
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// File is a Reader of a trace file, or of standard input, opened by Open.
// Close must be called.
type File struct {
	r      Reader
	format Format
	close  []func() error
}

var (
	_ Reader  = (*File)(nil)
	_ Skipper = (*File)(nil)
)

// Magic numbers of the compressed streams Open reads (RFC 1952 section
// 2.3.1, RFC 8878 section 3.1.1).
const (
	gzipMagic = "\x1f\x8b"
	zstdMagic = "\x28\xb5\x2f\xfd"
)

// isZstd reports whether magic, an input's first four bytes, starts a zstd
// stream: a zstd frame, or a skippable frame (magic 0x184D2A50 to
// 0x184D2A5F, little-endian; RFC 8878 section 3.1.2), which pzstd writes
// before each of its frames and every zstd decoder skips.
func isZstd(magic []byte) bool {
	return string(magic) == zstdMagic ||
		len(magic) == 4 && magic[0]&0xf0 == 0x50 && string(magic[1:]) == "\x2a\x4d\x18"
}

// Open opens the trace at path, or standard input when path is "-", and
// returns a Reader of it in format f (FormatAuto detects it). A gzip or
// zstd stream, found by its magic number, is decompressed. opt.Name
// defaults to path. Close must be called; it does not close standard input.
func Open(path string, f Format, opt Options) (*File, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if opt.Name == "" {
		opt.Name = path
	}
	file := &File{}
	var src io.Reader
	if path == "-" {
		src = os.Stdin
	} else {
		open := opt.OpenFile
		if open == nil {
			open = func(p string) (io.ReadCloser, error) { return os.Open(p) }
		}
		fh, err := open(path)
		if err != nil {
			return nil, fmt.Errorf("reqtrace: %w", err)
		}
		src = fh
		file.close = append(file.close, fh.Close)
	}
	br := bufio.NewReaderSize(src, readBufferSize)
	magic, err := br.Peek(len(zstdMagic))
	if err != nil && err != io.EOF {
		file.Close()
		return nil, parsemsg.ReadError("reqtrace", opt.Name, 1, err)
	}
	var in io.Reader = br
	switch {
	case bytes.HasPrefix(magic, []byte(gzipMagic)):
		gz, err := gzip.NewReader(br)
		if err != nil {
			file.Close()
			return nil, parsemsg.ReadError("reqtrace", opt.Name, 1, fmt.Errorf("gzip: %w", err))
		}
		file.close = append(file.close, gz.Close)
		in = gz
	case isZstd(magic):
		// One goroutine: the trace is read in order.
		zd, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			file.Close()
			return nil, parsemsg.ReadError("reqtrace", opt.Name, 1, fmt.Errorf("zstd: %w", err))
		}
		file.close = append(file.close, func() error { zd.Close(); return nil })
		in = zd
	}
	r, err := NewReader(in, f, opt)
	if err != nil {
		file.Close()
		return nil, err
	}
	file.r = r
	file.format = r.(interface{ format() Format }).format()
	return file, nil
}

// Next reads the next request (see Reader).
func (f *File) Next(req *Request) error { return f.r.Next(req) }

// TimeUnit says how the file's timestamps were read, for formats whose
// unit is found from the data (a Mooncake-style JSONL); "" otherwise or
// before the first request.
func (f *File) TimeUnit() string {
	if u, ok := f.r.(interface{ TimeUnit() string }); ok {
		return u.TimeUnit()
	}
	return ""
}

// Line returns the line of the trace where the last request read was
// found (a ShareGPT request: where its conversation starts), for messages
// about it; 0 before the first.
func (f *File) Line() int {
	switch r := f.r.(type) {
	case *mooncake:
		return r.lastLine()
	case interface{ line() int }:
		return r.line()
	}
	return 0
}

// Conversations returns how many elements of a ShareGPT file's array were
// read so far, the last request's among them, so that requests of the same
// element, not only of the same id (ids can repeat), can be told; 0 for
// the other formats.
func (f *File) Conversations() int {
	if g, ok := f.r.(*shareGPT); ok {
		return g.index
	}
	return 0
}

// HashBlocks says how the hash ids of the records read so far map to
// tokens, for a Mooncake-style trace; nil for the other formats.
func (f *File) HashBlocks() *HashBlocks {
	if m, ok := f.r.(*mooncake); ok {
		return &m.blocks
	}
	return nil
}

// Early returns how many of the records read so far were stamped earlier
// than the record before them (their Arrival is that record's), and the
// line of the first; 0, 0 for a trace in order.
func (f *File) Early() (n int64, line int) {
	if b, ok := f.r.(interface{ earlyRecords() (int64, int) }); ok {
		return b.earlyRecords()
	}
	return 0, 0
}

func (b *base) earlyRecords() (int64, int) { return b.early, b.earlyLine }

// RefDepartures says where the records read so far were read otherwise
// than kv-cache.py reads them, for a BurstGPT file; nil for the other
// formats, which kv-cache.py does not read.
func (f *File) RefDepartures() *RefDepartures {
	if g, ok := f.r.(*burstGPT); ok {
		return &g.ref
	}
	return nil
}

// Format returns the file's format, as given to Open or detected.
func (f *File) Format() Format { return f.format }

// Skipped returns how many records the Reader dropped (see Skipper); 0 for
// formats that drop none.
func (f *File) Skipped() int64 {
	if s, ok := f.r.(Skipper); ok {
		return s.Skipped()
	}
	return 0
}

// SkipErrors describes the first records dropped (see Skipper).
func (f *File) SkipErrors() []error {
	if s, ok := f.r.(Skipper); ok {
		return s.SkipErrors()
	}
	return nil
}

// Close releases the decompressor and closes the file. Calling it again
// does nothing.
func (f *File) Close() error {
	var errs []error
	for i := len(f.close) - 1; i >= 0; i-- {
		if err := f.close[i](); err != nil {
			errs = append(errs, err)
		}
	}
	f.close = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("reqtrace: close: %w", err)
	}
	return nil
}

// base is what every format's Reader has: its name, the tracker that tells
// I/O errors from malformed input, the sticky error, and the arrival clock.
type base struct {
	name string
	tr   *errTracker
	err  error
	bom  bool // the input began with a UTF-8 byte order mark, dropped

	haveFirst bool
	prev      time.Duration
	// early counts the records stamped earlier than the one before them,
	// whose Arrival is that one's; earlyLine is the first one's line.
	early     int64
	earlyLine int
}

// fail makes err sticky and returns it.
func (b *base) fail(err error) error {
	b.err = err
	return err
}

// isIO reports whether err is the underlying reader's own error.
func (b *base) isIO(err error) bool { return b.tr.err != nil && err == b.tr.err }

// arrival turns an offset from the first request, that of the record on
// line, into an Arrival that never decreases, counting the records it
// moves (Early).
func (b *base) arrival(d time.Duration, line int) time.Duration {
	if d < b.prev {
		if b.early == 0 {
			b.earlyLine = line
		}
		b.early++
		d = b.prev
	}
	b.prev = d
	return d
}

// skipList counts dropped records and keeps the first few reasons.
type skipList struct {
	n    int64
	errs []error
}

func (s *skipList) add(err error) {
	s.n++
	if len(s.errs) < MaxSkipErrors {
		s.errs = append(s.errs, err)
	}
}

// Skipped implements Skipper.
func (s *skipList) Skipped() int64 { return s.n }

// SkipErrors implements Skipper.
func (s *skipList) SkipErrors() []error { return s.errs }

func isEOF(err error) bool { return err == io.EOF }
