package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace/internal/zstdtest"
)

// writeRecs writes recs with a Writer of opt, flushing every flushEvery
// records (0: never), and returns the output.
func writeRecs(tb testing.TB, opt WriterOptions, recs []schema.Record, flushEvery int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, opt)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			tb.Fatal(err)
		}
		if flushEvery > 0 && i%flushEvery == flushEvery-1 {
			if err := w.Flush(); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// checkRowEncoder writes recs plain and with the row encoder, and fails
// unless the encoder's stream decodes to the plain text.
func checkRowEncoder(tb testing.TB, opt WriterOptions, recs []schema.Record, flushEvery int) (plain, enc []byte) {
	tb.Helper()
	opt.Compression = CompressNone
	plain = writeRecs(tb, opt, recs, 0)
	opt.Compression, opt.Level = CompressZstd, 0
	enc = writeRecs(tb, opt, recs, flushEvery)
	if got := zstdtest.Decode(tb, enc); !bytes.Equal(got, plain) {
		i := 0
		for i < min(len(got), len(plain)) && got[i] == plain[i] {
			i++
		}
		tb.Fatalf("%d records, flush every %d: the decoded %d bytes differ from the %d written at byte %d: %q, want %q",
			len(recs), flushEvery, len(got), len(plain), i, got[i:min(i+60, len(got))], plain[i:min(i+60, len(plain))])
	}
	return plain, enc
}

// recsLike makes n records shaped as a simulation writes them: runs of
// rows of one request at one time, keys read again later, rows equal to
// the one before, Deletes (which the mlperf dialect drops).
func recsLike(rng *rand.Rand, n int) []schema.Record {
	recs := make([]schema.Record, 0, n)
	var t time.Duration
	req := uint64(1)
	var prev schema.Record
	for i := range n {
		if i > 0 {
			switch rng.IntN(8) {
			case 0, 1, 2:
				recs = append(recs, prev)
				continue
			case 3:
				t += time.Duration(rng.Int64N(5e6))
				req++
			}
		}
		key := fmt.Sprintf("conv_user_%04d_%04d_turn_%d", rng.IntN(40), rng.IntN(3), 1+rng.IntN(8))
		prev = schema.Record{Time: t, Op: schema.Op(rng.IntN(schema.NumOps)), Size: 131072 * int64(1+len(key)%7),
			Tier: schema.Tier(rng.IntN(schema.NumTiers)), Key: []byte(key), Phase: schema.Phase(rng.IntN(schema.NumPhases)),
			Request: req, QoS: schema.QoS(rng.IntN(schema.NumQoS)), User: req % 150, Tokens: rng.Int64N(500)}
		recs = append(recs, prev)
	}
	return recs
}

var bothDialects = []WriterOptions{
	{Dialect: DialectKvbench},
	{Dialect: DialectMLPerf, Base: time.Unix(EpochThreshold+12345, 678000)},
}

// TestRowEncoderRoundTrip: the row encoder's stream decodes, with the zstd
// library and the zstd command, to the plain trace, in both dialects,
// flushed or not, from no rows to several blocks and windows.
func TestRowEncoderRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 50, 3000, 200000} {
		recs := recsLike(rng, n)
		for _, opt := range bothDialects {
			for _, flush := range []int{0, 1, 777} {
				if n > 3000 && flush == 1 {
					continue
				}
				checkRowEncoder(t, opt, recs, flush)
			}
		}
	}
}

// TestRowEncoderShapes: rows the Writer accepts that a simulation does not
// write: a key longer than a block, keys of one hash slot, empty optional
// columns, many distinct keys beyond the window.
func TestRowEncoderShapes(t *testing.T) {
	long := schema.Record{Time: time.Second, Size: 5, Key: bytes.Repeat([]byte("k"), 200<<10)}
	var recs []schema.Record
	recs = append(recs, long, long, long) // a long row repeated
	for i := range 3 {
		recs = append(recs, long, schema.Record{Time: time.Second, Key: []byte("a")}, long)
		recs = append(recs, schema.Record{Time: time.Duration(i) * time.Hour, Key: []byte(strings.Repeat("b", i*1000+1))})
	}
	// Keys recurring beyond the window.
	for i := range 200000 {
		recs = append(recs, schema.Record{Time: time.Duration(i) * time.Millisecond, Op: schema.OpRead, Size: 1000,
			Key: []byte(fmt.Sprintf("key_%d", i%90000)), Request: uint64(i)})
	}
	for _, opt := range bothDialects {
		checkRowEncoder(t, opt, recs, 0)
	}
	// Keys recurring within it are matched.
	recs = recs[:0]
	for i := range 200000 {
		recs = append(recs, schema.Record{Time: time.Duration(i) * time.Millisecond, Op: schema.OpRead, Size: 1000,
			Key: []byte(fmt.Sprintf("key_%d", i%5000)), Request: uint64(i)})
	}
	for _, opt := range bothDialects {
		plain, enc := checkRowEncoder(t, opt, recs, 0)
		if len(enc) > len(plain)/3 {
			t.Errorf("%d bytes encoded to %d: keys read again are not matched", len(plain), len(enc))
		}
	}
}

// TestRowEncoderReferenceTrace: the reference's trace, when ../shared has
// it, round-trips through the row encoder.
func TestRowEncoderReferenceTrace(t *testing.T) {
	f, err := os.Open("../../shared/data/reference-traces/llama8b_u10_d30_gpu0_cpu4_s42.csv")
	if err != nil {
		t.Skipf("no reference trace (../shared is absent in a fresh clone): %v", err)
	}
	defer f.Close()
	r := NewReader(f)
	var recs []schema.Record
	for {
		var rec schema.Record
		err := r.Read(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rec.Key = bytes.Clone(rec.Key)
		if rec.Time < 0 {
			rec.Time = 0 // a row slightly out of order: the Writer takes none before 0
		}
		recs = append(recs, rec)
	}
	for _, opt := range bothDialects {
		plain, enc := checkRowEncoder(t, opt, recs, 0)
		t.Logf("%s: %d bytes -> %d", opt.Dialect, len(plain), len(enc))
	}
}

// FuzzRowEncoder: records built from the fuzzer's bytes (each byte picks
// which fields change from the record before) round-trip.
func FuzzRowEncoder(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 255, 0, 0, 7}, uint16(3))
	f.Add(bytes.Repeat([]byte{0x11, 0, 0x80, 0x3}, 100), uint16(0))
	f.Fuzz(func(t *testing.T, prog []byte, flush uint16) {
		var recs []schema.Record
		r := schema.Record{Key: []byte("k0")}
		for i, c := range prog {
			if c&1 != 0 {
				r.Time += time.Duration(c) * time.Microsecond
			}
			if c&2 != 0 {
				r.Op = schema.Op(int(c) % schema.NumOps)
			}
			if c&4 != 0 {
				r.Size = int64(c) * 1000
			}
			if c&8 != 0 {
				r.Key = []byte(fmt.Sprintf("k%d", int(c)%(i%7+1)))
			}
			if c&16 != 0 {
				r.Request++
				r.QoS = schema.QoS(int(c) % schema.NumQoS)
			}
			if c&32 != 0 {
				r.User, r.Tokens = uint64(c), int64(i)
			}
			if c&64 != 0 {
				r.Tier, r.Phase = schema.Tier(int(c)%schema.NumTiers), schema.Phase(int(c)%schema.NumPhases)
			}
			recs = append(recs, r)
		}
		for _, opt := range bothDialects {
			checkRowEncoder(t, opt, recs, int(flush%50))
		}
	})
}

// TestPlainKey: the eight-at-a-time check agrees with the byte table on
// every byte in every position of a word.
func TestPlainKey(t *testing.T) {
	for c := range 256 {
		for pos := range 11 {
			k := []byte("abcdefghijk")
			k[pos] = byte(c)
			want := true
			for _, b := range k {
				want = want && keyByteOK[b]
			}
			if got := plainKey(k); got != want {
				t.Fatalf("byte %#x at %d: plainKey %v, the table says %v", c, pos, got, want)
			}
		}
	}
}

// TestNoZstdCodec: without a registered codec, a zstd stream is refused
// with ErrNoZstd naming the input, as are a library level and the row
// encoder (level 0), whose blocks the codec codes.
func TestNoZstdCodec(t *testing.T) {
	saved := zstdCodec.Load()
	zstdCodec.Store(nil)
	defer zstdCodec.Store(saved)
	r := NewReader(bytes.NewReader([]byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0}))
	r.Name = "run.csv.zst"
	var rec schema.Record
	if err := r.Read(&rec); !errors.Is(err, ErrNoZstd) || !strings.Contains(err.Error(), "run.csv.zst") {
		t.Fatalf("read: %v, want ErrNoZstd naming the input", err)
	}
	if _, err := NewWriter(io.Discard, WriterOptions{Compression: CompressZstd, Level: 3}); !errors.Is(err, ErrNoZstd) {
		t.Fatalf("level 3: %v, want ErrNoZstd", err)
	}
	if _, err := NewWriter(io.Discard, WriterOptions{Compression: CompressZstd}); !errors.Is(err, ErrNoZstd) {
		t.Fatalf("level 0: %v, want ErrNoZstd", err)
	}
}
