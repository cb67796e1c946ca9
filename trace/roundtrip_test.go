package trace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	oldrand "math/rand"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/quick"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// maxVirtual is the first virtual time the kvbench dialect cannot carry:
// a first row at EpochThreshold seconds makes an epoch trace.
const maxVirtual = trace.EpochThreshold * time.Second

// keyRunes are runes a key may hold: no whitespace, commas, quotes or
// control characters.
var keyRunes = []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:;!#$%&'()*+<=>?@[\\]^`{|}~éüñßключ日本語\U0001F600\u200b\uFFFD")

func randKey(rng *rand.Rand) []byte {
	n := 1 + rng.IntN(40)
	if rng.IntN(50) == 0 {
		n = 1 + rng.IntN(2000)
	}
	var b []byte
	for range n {
		b = append(b, string(keyRunes[rng.IntN(len(keyRunes))])...)
	}
	return b
}

// randTime returns a virtual time the kvbench dialect can carry, a whole
// number of microseconds.
func randTime(rng *rand.Rand) time.Duration {
	switch rng.IntN(6) {
	case 0:
		return 0
	case 1:
		return maxVirtual - time.Duration(rng.Int64N(1000))*time.Microsecond - time.Microsecond
	case 2:
		return time.Duration(rng.Int64N(int64(maxVirtual/time.Microsecond))) * time.Microsecond
	default:
		return time.Duration(rng.Int64N(3600e6)) * time.Microsecond
	}
}

func randSize(rng *rand.Rand) int64 {
	switch rng.IntN(5) {
	case 0:
		return 0
	case 1:
		return math.MaxInt64 - rng.Int64N(3)
	case 2:
		return rng.Int64()
	default:
		return rng.Int64N(1 << 32)
	}
}

func randRequest(rng *rand.Rand) uint64 {
	switch rng.IntN(4) {
	case 0:
		return 0
	case 1:
		return math.MaxUint64 - rng.Uint64N(3)
	case 2:
		return rng.Uint64()
	default:
		return rng.Uint64N(10000)
	}
}

// randRecord returns a valid record of the kvbench dialect.
func randRecord(rng *rand.Rand) schema.Record {
	return schema.Record{
		Time:    randTime(rng),
		Op:      schema.Op(rng.IntN(schema.NumOps)),
		Size:    randSize(rng),
		Tier:    schema.Tier(rng.IntN(schema.NumTiers)),
		Key:     randKey(rng),
		Phase:   schema.Phase(rng.IntN(schema.NumPhases)),
		Request: randRequest(rng),
		QoS:     schema.QoS(rng.IntN(schema.NumQoS)),
		User:    randRequest(rng),
		Tokens:  int64(randRequest(rng) >> 1),
	}
}

// writeAll writes recs with a Writer to a buffer and closes it.
func writeAll(tb testing.TB, opt trace.WriterOptions, recs []schema.Record) (*trace.Writer, []byte) {
	tb.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, opt)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			tb.Fatalf("Write(%s): %v", recs[i].String(), err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return w, buf.Bytes()
}

var kvbenchColumns = []string{"Timestamp", "Operation", "Object_Size_Bytes", "Tier", "Key", "Phase", "Request", "QoS", "User", "Tokens"}

// TestRoundTripKvbench: random valid records written in the kvbench dialect
// read back equal, all eight fields, plain and zstd.
func TestRoundTripKvbench(t *testing.T) {
	rng := rand.New(rand.NewPCG(20240601, 1))
	for iter := range 300 {
		recs := make([]schema.Record, rng.IntN(60))
		for i := range recs {
			recs[i] = randRecord(rng)
		}
		for _, comp := range []trace.Compression{trace.CompressAuto, trace.CompressNone, trace.CompressZstd} {
			w, data := writeAll(t, trace.WriterOptions{Compression: comp}, recs)
			if got, want := bytes.HasPrefix(data, zstdMagic), comp == trace.CompressZstd; got != want {
				t.Fatalf("iteration %d, compression %d: zstd magic %v, want %v", iter, comp, got, want)
			}
			if w.Rows() != int64(len(recs)) || w.Dropped() != 0 {
				t.Fatalf("Rows, Dropped = %d, %d; want %d, 0", w.Rows(), w.Dropped(), len(recs))
			}
			got, r := mustReadAll(t, bytes.NewReader(data))
			diffRecords(t, got, recs)
			hdr, _ := r.Header()
			if !slices.Equal(hdr, kvbenchColumns) {
				t.Fatalf("header %q, want %q", hdr, kvbenchColumns)
			}
			if _, ok := r.Epoch(); ok {
				t.Fatalf("iteration %d: a kvbench trace read as an epoch trace", iter)
			}
			if comp != trace.CompressZstd && len(recs) > 0 {
				// Plain output is exactly LF-terminated lines with no blank line.
				if !bytes.HasSuffix(data, []byte("\n")) || bytes.Contains(data, []byte("\r")) || bytes.Contains(data, []byte("\n\n")) {
					t.Fatalf("iteration %d: output is not plain LF lines", iter)
				}
				if lines := bytes.Count(data, []byte("\n")); lines != len(recs)+1 {
					t.Fatalf("iteration %d: %d lines, want %d", iter, lines, len(recs)+1)
				}
			}
		}
	}
}

// TestRoundTripMLPerf: the mlperf dialect is the reference's six columns
// with epoch timestamps from Base; Delete rows are dropped and counted,
// Request and QoS are lost, and reading normalises to the first row.
func TestRoundTripMLPerf(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for iter := range 300 {
		base := time.UnixMicro(trace.EpochThreshold*1e6 + rng.Int64N(3e15))
		recs := make([]schema.Record, 1+rng.IntN(60))
		for i := range recs {
			recs[i] = randRecord(rng)
			if rng.IntN(3) == 0 {
				recs[i].Op = schema.OpDelete
			}
			if rng.IntN(5) == 0 {
				// Past the kvbench limit: the mlperf dialect carries it.
				recs[i].Time = maxVirtual + time.Duration(rng.Int64N(1e12))*time.Microsecond
			}
		}
		// The first row is time 0, the epoch is Base.
		recs[0].Time = 0
		recs[0].Op = schema.Op(rng.IntN(2))

		var want []schema.Record
		var deletes int64
		for _, r := range recs {
			if r.Op == schema.OpDelete {
				deletes++
				continue
			}
			r.Request, r.QoS = 0, schema.QoSNone
			want = append(want, r)
		}
		for _, comp := range []trace.Compression{trace.CompressNone, trace.CompressZstd} {
			w, data := writeAll(t, trace.WriterOptions{Dialect: trace.DialectMLPerf, Base: base, Compression: comp}, recs)
			if w.Dropped() != deletes || w.Rows() != int64(len(want)) {
				t.Fatalf("iteration %d: Rows, Dropped = %d, %d; want %d, %d", iter, w.Rows(), w.Dropped(), len(want), deletes)
			}
			if got := bytes.HasPrefix(data, zstdMagic); got != (comp == trace.CompressZstd) {
				t.Fatalf("iteration %d: zstd magic %v with compression %d", iter, got, comp)
			}
			got, r := mustReadAll(t, bytes.NewReader(data))
			diffRecords(t, got, want)
			hdr, _ := r.Header()
			if !slices.Equal(hdr, referenceColumns) || r.HasRequest() || r.HasQoS() {
				t.Fatalf("header %q, want %q", hdr, referenceColumns)
			}
			ep, ok := r.Epoch()
			if !ok || !ep.Equal(base) {
				t.Fatalf("iteration %d: Epoch() = %v, %v; want %v", iter, ep, ok, base)
			}
			if comp == trace.CompressNone {
				// The first timestamp is Base itself, with 6 decimals.
				first := strings.SplitN(strings.SplitN(string(data), "\n", 3)[1], ",", 2)[0]
				if wantTS := fmt.Sprintf("%d.%06d", base.Unix(), base.Nanosecond()/1000); first != wantTS {
					t.Fatalf("first timestamp %q, want %q", first, wantTS)
				}
			}
		}
	}
}

// quickRecord generates valid records for testing/quick.
type quickRecord schema.Record

func (quickRecord) Generate(r *oldrand.Rand, size int) reflect.Value {
	rng := rand.New(rand.NewPCG(r.Uint64(), r.Uint64()))
	return reflect.ValueOf(quickRecord(randRecord(rng)))
}

// TestRoundTripQuick is the kvbench round trip under testing/quick, with
// its own generator and shrink-free reporting of the failing input.
func TestRoundTripQuick(t *testing.T) {
	roundTrip := func(in []quickRecord, zstd bool) bool {
		recs := make([]schema.Record, len(in))
		for i := range in {
			recs[i] = schema.Record(in[i])
		}
		opt := trace.WriterOptions{Compression: trace.CompressNone}
		if zstd {
			opt.Compression = trace.CompressZstd
		}
		_, data := writeAll(t, opt, recs)
		got, _ := mustReadAll(t, bytes.NewReader(data))
		if len(got) != len(recs) {
			return false
		}
		for i := range got {
			if !recordsEqual(&got[i], &recs[i]) {
				t.Logf("record %d: got %s, want %s", i, got[i].String(), recs[i].String())
				return false
			}
		}
		return true
	}
	cfg := &quick.Config{MaxCount: 300, Rand: oldrand.New(oldrand.NewSource(42))}
	if err := quick.Check(roundTrip, cfg); err != nil {
		t.Error(err)
	}
}

// TestWriterRoundsToMicrosecond: times are written with 6 decimals,
// rounded half up to the microsecond.
func TestWriterRoundsToMicrosecond(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	times := []time.Duration{0, 1, 499, 500, 999, 1000, 1499, 1500, 999_999_499, 999_999_500}
	for range 500 {
		times = append(times, time.Duration(rng.Int64N(int64(maxVirtual)-1000)))
	}
	recs := make([]schema.Record, len(times))
	for i, ts := range times {
		recs[i] = schema.Record{Time: ts, Key: []byte("k")}
	}
	_, data := writeAll(t, trace.WriterOptions{}, recs)
	got, _ := mustReadAll(t, bytes.NewReader(data))
	for i, ts := range times {
		want := (ts + 500) / 1000 * 1000
		if got[i].Time != want {
			t.Errorf("Time %d ns read back as %d ns, want %d", int64(ts), int64(got[i].Time), int64(want))
		}
	}
}

// TestWriterOutputReadable: whatever a Writer accepts, a Reader reads back
// (times to the microsecond), over the whole range of Time, in both
// dialects. A record after a first row at time 0 must read back with its
// own time.
func TestWriterOutputReadable(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	times := []time.Duration{
		maxVirtual - 1, maxVirtual - 499, maxVirtual - 500, maxVirtual - 501, maxVirtual - 1000,
		maxVirtual, math.MaxInt64, math.MaxInt64 - 499, math.MaxInt64 - 500, math.MaxInt64 / 2,
		math.MaxInt64 - 3e15*1000,
	}
	for range 200 {
		times = append(times, time.Duration(rng.Int64()))
	}
	bases := []time.Time{time.Unix(trace.EpochThreshold, 0), time.UnixMicro(1795255939072664), time.Unix(4e9, 0)}
	for _, d := range []trace.Dialect{trace.DialectKvbench, trace.DialectMLPerf} {
		for _, base := range bases {
			for _, ts := range times {
				var buf bytes.Buffer
				w, err := trace.NewWriter(&buf, trace.WriterOptions{Dialect: d, Base: base})
				if err != nil {
					t.Fatal(err)
				}
				first := schema.Record{Key: []byte("first")}
				if err := w.Write(&first); err != nil {
					t.Fatal(err)
				}
				rec := schema.Record{Time: ts, Key: []byte("k")}
				werr := w.Write(&rec)
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				got, rerr := readRecords(t, trace.NewReader(&buf))
				if werr != nil {
					if !errors.Is(werr, trace.ErrBadNumber) {
						t.Errorf("%s: Write(time %d) = %v, want ErrBadNumber", d, int64(ts), werr)
					}
					if rerr != io.EOF || len(got) != 1 {
						t.Errorf("%s: after a refused record: %d records, %v", d, len(got), rerr)
					}
					if d == trace.DialectMLPerf && ts < maxVirtual {
						t.Errorf("mlperf refused time %v: %v", ts, werr)
					}
					continue
				}
				if rerr != io.EOF || len(got) != 2 {
					t.Errorf("%s base %d: time %d ns accepted, but reading gives %d records, %v\n%s", d, base.Unix(), int64(ts), len(got), rerr, buf.Bytes())
					continue
				}
				want := time.Duration(int64(ts)/1000+(int64(ts)%1000+500)/1000) * 1000
				if got[1].Time != want {
					t.Errorf("%s base %d: time %d ns read back as %d ns, want %d\n%s", d, base.Unix(), int64(ts), int64(got[1].Time), int64(want), buf.Bytes())
				}
				if d != trace.DialectKvbench {
					continue
				}
				// As the first row, it must not turn the trace into an
				// epoch trace.
				_, data := writeAll(t, trace.WriterOptions{}, []schema.Record{rec})
				if got, _ := mustReadAll(t, bytes.NewReader(data)); got[0].Time != want {
					t.Errorf("time %d ns alone read back as %d ns, want %d\n%s", int64(ts), int64(got[0].Time), int64(want), data)
				}
			}
		}
	}
}

// TestWriterRejects: the Writer refuses records the format cannot carry,
// and the refusal is not sticky.
func TestWriterRejects(t *testing.T) {
	good := func() schema.Record {
		return schema.Record{Time: time.Second, Op: schema.OpWrite, Size: 1, Tier: schema.TierCPU, Key: []byte("k"), Phase: schema.PhasePrefill}
	}
	tests := []struct {
		name     string
		mod      func(*schema.Record)
		sentinel error
		mlperf   bool // also refused in the mlperf dialect
	}{
		{"op 7", func(r *schema.Record) { r.Op = schema.Op(7) }, trace.ErrBadEnum, true},
		{"op 3", func(r *schema.Record) { r.Op = schema.Op(schema.NumOps) }, trace.ErrBadEnum, true},
		{"tier 4", func(r *schema.Record) { r.Tier = schema.Tier(4) }, trace.ErrBadEnum, true},
		{"phase 9", func(r *schema.Record) { r.Phase = schema.Phase(9) }, trace.ErrBadEnum, true},
		{"qos 4", func(r *schema.Record) { r.QoS = schema.QoS(4) }, trace.ErrBadEnum, true},
		{"negative size", func(r *schema.Record) { r.Size = -1 }, trace.ErrNegativeSize, true},
		{"min size", func(r *schema.Record) { r.Size = math.MinInt64 }, trace.ErrNegativeSize, true},
		{"empty key", func(r *schema.Record) { r.Key = nil }, trace.ErrBadKey, true},
		{"key with space", func(r *schema.Record) { r.Key = []byte("a b") }, trace.ErrBadKey, true},
		{"key with tab", func(r *schema.Record) { r.Key = []byte("a\tb") }, trace.ErrBadKey, true},
		{"key with newline", func(r *schema.Record) { r.Key = []byte("a\nb") }, trace.ErrBadKey, true},
		{"key with comma", func(r *schema.Record) { r.Key = []byte("a,b") }, trace.ErrBadKey, true},
		{"key with quote", func(r *schema.Record) { r.Key = []byte(`a"b`) }, trace.ErrBadKey, true},
		{"key invalid UTF-8", func(r *schema.Record) { r.Key = []byte("a\xffb") }, trace.ErrBadKey, true},
		{"key no-break space", func(r *schema.Record) { r.Key = []byte("a\u00a0b") }, trace.ErrBadKey, true},
		{"negative time", func(r *schema.Record) { r.Time = -1 }, trace.ErrBadNumber, true},
		{"min time", func(r *schema.Record) { r.Time = math.MinInt64 }, trace.ErrBadNumber, true},
		{"time at epoch threshold", func(r *schema.Record) { r.Time = maxVirtual }, trace.ErrBadNumber, false},
		{"time rounding to epoch threshold", func(r *schema.Record) { r.Time = maxVirtual - 400 }, trace.ErrBadNumber, false},
		{"max time", func(r *schema.Record) { r.Time = math.MaxInt64 }, trace.ErrBadNumber, true},
	}
	base := time.UnixMicro(1795255939072664)
	for _, tt := range tests {
		for _, d := range []trace.Dialect{trace.DialectKvbench, trace.DialectMLPerf} {
			t.Run(tt.name+"/"+d.String(), func(t *testing.T) {
				var buf bytes.Buffer
				w, err := trace.NewWriter(&buf, trace.WriterOptions{Dialect: d, Base: base})
				if err != nil {
					t.Fatal(err)
				}
				g := good()
				if err := w.Write(&g); err != nil {
					t.Fatal(err)
				}
				bad := good()
				tt.mod(&bad)
				err = w.Write(&bad)
				refused := d == trace.DialectKvbench || tt.mlperf
				if !refused {
					if err != nil {
						t.Fatalf("mlperf refused %s: %v", bad.String(), err)
					}
					w.Close()
					return
				}
				if !errors.Is(err, tt.sentinel) {
					t.Fatalf("Write(%s) = %v, want %v", bad.String(), err, tt.sentinel)
				}
				var pe *trace.ParseError
				if errors.As(err, &pe) {
					t.Errorf("a refused record is reported as a ParseError: %v", err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q is not one line", err)
				}
				if w.Rows() != 1 || w.Dropped() != 0 {
					t.Errorf("Rows, Dropped = %d, %d after a refused record; want 1, 0", w.Rows(), w.Dropped())
				}
				// Not sticky: the next record is written.
				g2 := good()
				g2.Time = 2 * time.Second
				if err := w.Write(&g2); err != nil {
					t.Fatalf("Write after a refused record: %v", err)
				}
				if err := w.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				got, _ := mustReadAll(t, &buf)
				if len(got) != 2 || got[1].Time-got[0].Time != time.Second {
					t.Fatalf("read back %v, want the two good records", got)
				}
			})
		}
	}
}

// TestWriterOptionsValidate: bad options are refused before anything is
// written; every problem is reported.
func TestWriterOptionsValidate(t *testing.T) {
	good := []trace.WriterOptions{
		{},
		{Dialect: trace.DialectMLPerf, Base: time.Unix(trace.EpochThreshold, 0)},
		{Dialect: trace.DialectMLPerf, Base: time.UnixMicro(1795255939072664), Compression: trace.CompressZstd, Level: 22},
		{Compression: trace.CompressZstd, Level: 1},
		{Compression: trace.CompressNone},
		{Base: time.Time{}}, // Base is unused by the kvbench dialect
	}
	for _, o := range good {
		if err := o.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", o, err)
		}
	}
	bad := []struct {
		opt  trace.WriterOptions
		want []string
	}{
		{trace.WriterOptions{Dialect: trace.DialectMLPerf}, []string{"base"}},
		{trace.WriterOptions{Dialect: trace.DialectMLPerf, Base: time.Unix(trace.EpochThreshold-1, 0)}, []string{"base"}},
		{trace.WriterOptions{Dialect: trace.DialectMLPerf, Base: time.Unix(0, 0)}, []string{"base"}},
		{trace.WriterOptions{Dialect: 2}, []string{"dialect"}},
		{trace.WriterOptions{Level: 23}, []string{"level"}},
		{trace.WriterOptions{Level: -1}, []string{"level"}},
		{trace.WriterOptions{Compression: 3}, []string{"compression"}},
		{trace.WriterOptions{Dialect: trace.DialectMLPerf, Level: 99, Compression: 7}, []string{"base", "level", "compression"}},
	}
	for _, tt := range bad {
		err := tt.opt.Validate()
		if err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", tt.opt)
			continue
		}
		for _, s := range tt.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Validate(%+v) = %q, does not mention %s", tt.opt, err, s)
			}
		}
		var buf bytes.Buffer
		if w, err := trace.NewWriter(&buf, tt.opt); err == nil || w != nil || buf.Len() != 0 {
			t.Errorf("NewWriter(%+v) = %v, %v and wrote %d bytes; want an error and nothing written", tt.opt, w, err, buf.Len())
		}
		dir := t.TempDir()
		if w, err := trace.Create(filepath.Join(dir, "x.csv.zst"), tt.opt); err == nil || w != nil {
			t.Errorf("Create(%+v) = %v, %v; want an error", tt.opt, w, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("Create with bad options left %d files", len(ents))
		}
	}
}

func TestParseDialect(t *testing.T) {
	for _, d := range []trace.Dialect{trace.DialectKvbench, trace.DialectMLPerf} {
		got, err := trace.ParseDialect(d.String())
		if err != nil || got != d {
			t.Errorf("ParseDialect(%q) = %v, %v", d.String(), got, err)
		}
	}
	if trace.DialectKvbench.String() != "kvbench" || trace.DialectMLPerf.String() != "mlperf" {
		t.Errorf("dialect names %q, %q", trace.DialectKvbench, trace.DialectMLPerf)
	}
	for _, s := range []string{"", "MLPerf", "reference", "kvbench "} {
		if _, err := trace.ParseDialect(s); err == nil {
			t.Errorf("ParseDialect(%q) accepted", s)
		}
	}
}

// TestCreate: Create compresses by name unless told, writes under a
// temporary name and renames on Close; Abort leaves nothing.
func TestCreate(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	recs := make([]schema.Record, 500)
	for i := range recs {
		recs[i] = randRecord(rng)
	}
	tests := []struct {
		name string
		comp trace.Compression
		zstd bool
	}{
		{"run.csv", trace.CompressAuto, false},
		{"run.csv.zst", trace.CompressAuto, true},
		{"run.zst", trace.CompressAuto, true},
		{"run.zstd", trace.CompressAuto, false},
		{"run.csv", trace.CompressZstd, true},
		{"run.csv.zst", trace.CompressNone, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.name, tt.comp), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tt.name)
			w, err := trace.Create(path, trace.WriterOptions{Compression: tt.comp})
			if err != nil {
				t.Fatal(err)
			}
			for i := range recs {
				if err := w.Write(&recs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			// Not visible under its name before Close; one temporary file.
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Stat before Close: %v, want fs.ErrNotExist", err)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 || ents[0].Name() == tt.name || !strings.HasPrefix(ents[0].Name(), ".") {
				t.Fatalf("directory before Close holds %v, want one hidden temporary file", ents)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			ents, _ = os.ReadDir(dir)
			if len(ents) != 1 || ents[0].Name() != tt.name {
				t.Fatalf("directory after Close holds %v, want only %s", ents, tt.name)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", st.Mode().Perm())
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.HasPrefix(data, zstdMagic); got != tt.zstd {
				t.Errorf("file starts with the zstd magic: %v, want %v", got, tt.zstd)
			}
			r, err := trace.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readRecords(t, r)
			r.Close()
			if err != io.EOF {
				t.Fatal(err)
			}
			diffRecords(t, got, recs)
			if r.Compressed() != tt.zstd {
				t.Errorf("Compressed() = %v, want %v", r.Compressed(), tt.zstd)
			}
			// Close again is harmless; Write after Close is refused.
			if err := w.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if err := w.Write(&recs[0]); err == nil {
				t.Errorf("Write after Close succeeded")
			}
		})
	}
}

func TestCreateAbort(t *testing.T) {
	for _, name := range []string{"a.csv", "a.csv.zst"} {
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		// An older trace under the same name survives an aborted rewrite.
		if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := trace.Create(path, trace.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rec := schema.Record{Key: []byte("k")}
		for range 1000 {
			if err := w.Write(&rec); err != nil {
				t.Fatal(err)
			}
		}
		w.Abort()
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 || ents[0].Name() != name {
			t.Errorf("after Abort the directory holds %v, want only the old %s", ents, name)
		}
		if b, _ := os.ReadFile(path); string(b) != "old" {
			t.Errorf("Abort replaced the old file with %d bytes", len(b))
		}
		if err := w.Write(&rec); err == nil {
			t.Errorf("Write after Abort succeeded")
		}
		if err := w.Close(); err == nil {
			t.Errorf("Close after Abort succeeded")
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("Close after Abort left %v", ents)
		}
		w.Abort() // twice is harmless
	}
	// Abort with nothing old leaves an empty directory.
	dir := t.TempDir()
	w, err := trace.Create(filepath.Join(dir, "b.csv.zst"), trace.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("after Abort the directory holds %v", ents)
	}
}

// failWriter fails every write after the first n bytes.
type failWriter struct {
	n   int
	err error
}

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return len(p), nil
	}
	n := f.n
	f.n = 0
	return n, f.err
}

// TestWriterIOErrorSticky: a failure of the underlying writer is returned,
// wrapped, by that and every later call.
func TestWriterIOErrorSticky(t *testing.T) {
	for _, comp := range []trace.Compression{trace.CompressNone, trace.CompressZstd} {
		boom := errors.New("disk full")
		w, err := trace.NewWriter(&failWriter{n: 100, err: boom}, trace.WriterOptions{Compression: comp})
		if err != nil {
			t.Fatal(err)
		}
		rec := schema.Record{Key: []byte(strings.Repeat("k", 100))}
		var werr error
		for range 10000 {
			if werr = w.Write(&rec); werr != nil {
				break
			}
		}
		if werr == nil {
			werr = w.Flush()
		}
		if !errors.Is(werr, boom) {
			t.Fatalf("compression %d: error %v, want one wrapping %v", comp, werr, boom)
		}
		if err := w.Write(&rec); !errors.Is(err, boom) {
			t.Errorf("Write after the error = %v", err)
		}
		if err := w.Flush(); !errors.Is(err, boom) {
			t.Errorf("Flush after the error = %v", err)
		}
		if err := w.Close(); !errors.Is(err, boom) {
			t.Errorf("Close after the error = %v", err)
		}
	}
}

// TestWriterFlushPipe: rows flushed are readable before Close, also
// through zstd.
func TestWriterFlushPipe(t *testing.T) {
	for _, comp := range []trace.Compression{trace.CompressNone, trace.CompressZstd} {
		var buf bytes.Buffer
		w, err := trace.NewWriter(&buf, trace.WriterOptions{Compression: comp})
		if err != nil {
			t.Fatal(err)
		}
		rec := schema.Record{Key: []byte("k"), Time: time.Millisecond}
		for range 3 {
			if err := w.Write(&rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r := trace.NewReader(bytes.NewReader(buf.Bytes()))
		got, err := readRecords(t, r)
		if len(got) != 3 {
			t.Errorf("compression %d: %d records readable after Flush (%v), want 3", comp, len(got), err)
		}
		if comp == trace.CompressZstd && !errors.Is(err, trace.ErrTruncated) {
			t.Errorf("an unclosed zstd stream ends with %v, want ErrTruncated", err)
		}
		w.Close()
	}
}

func TestWriterLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	recs := make([]schema.Record, 2000)
	for i := range recs {
		recs[i] = randRecord(rng)
		recs[i].Key = []byte(fmt.Sprintf("conv_user_%04d_turn_%d", i%50, i%7))
	}
	for _, level := range []int{0, 1, 3, 9, 22} {
		_, data := writeAll(t, trace.WriterOptions{Compression: trace.CompressZstd, Level: level}, recs)
		got, _ := mustReadAll(t, bytes.NewReader(data))
		diffRecords(t, got, recs)
	}
}

// TestMetaRoundTrip: WriteMeta then ReadMeta gives the same Meta.
func TestMetaRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "run.csv.zst")
	m := &trace.Meta{
		FormatVersion: trace.FormatVersion, Dialect: "kvbench", Tool: "kvtrace", ToolVersion: "v0.1.0",
		CommandLine: []string{"kvtrace", "gen", "--seed", "42", "--model", "llama3.1-8b"},
		Seed:        -42, Model: "llama3.1-8b", BytesPerToken: 131072, TensorParallel: 8,
		TierCapacityBytes: map[string]int64{"Tier-0": 0, "Tier-1": 4 << 30, "Tier-2": 1 << 40},
		PeakLiveBytes:     map[string]int64{"Tier-1": 123456789},
		EpochBase:         1795255939.072664, MeasuredFrom: 12.5,
		Counts: trace.MetaCounts{Rows: 33134, Objects: 2416, Requests: 2416, ReadBytes: math.MaxInt64, WriteBytes: math.MaxInt64 - 1, DroppedDeletes: 3},
		Config: json.RawMessage(`{"users":50,"tiers":["gpu","cpu"],"nested":{"a":null}}`),
	}
	if err := trace.WriteMeta(tracePath, m); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "run.csv.zst.meta.json" {
		t.Fatalf("directory holds %v, want only the sidecar", ents)
	}
	if trace.MetaPath(tracePath) != tracePath+".meta.json" {
		t.Errorf("MetaPath = %q", trace.MetaPath(tracePath))
	}
	st, _ := os.Stat(trace.MetaPath(tracePath))
	if st.Mode().Perm() != 0o644 {
		t.Errorf("sidecar mode %v, want 0644", st.Mode().Perm())
	}
	raw, _ := os.ReadFile(trace.MetaPath(tracePath))
	if !json.Valid(raw) || !strings.Contains(string(raw), `"format_version": 1`) || !strings.Contains(string(raw), `"measured_from_s": 12.5`) {
		t.Errorf("sidecar is not the documented JSON:\n%s", raw)
	}
	got, err := trace.ReadMeta(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	compact := func(b json.RawMessage) string {
		var out bytes.Buffer
		if err := json.Compact(&out, b); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if compact(got.Config) != compact(m.Config) {
		t.Errorf("Config = %s, want %s", got.Config, m.Config)
	}
	g, w := *got, *m
	g.Config, w.Config = nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Errorf("ReadMeta =\n%+v\nwant\n%+v", g, w)
	}

	// Overwriting replaces it.
	m2 := &trace.Meta{FormatVersion: 1, Tool: "other"}
	if err := trace.WriteMeta(tracePath, m2); err != nil {
		t.Fatal(err)
	}
	got, err = trace.ReadMeta(tracePath)
	if err != nil || got.Tool != "other" || got.Seed != 0 || got.Counts.Rows != 0 {
		t.Errorf("after overwrite ReadMeta = %+v, %v", got, err)
	}
}

func TestMetaMissing(t *testing.T) {
	_, err := trace.ReadMeta(filepath.Join(t.TempDir(), "none.csv"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadMeta without a sidecar: %v, want os.ErrNotExist", err)
	}
	_, err = trace.ReadMeta("-")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf(`ReadMeta("-"): %v, want os.ErrNotExist`, err)
	}
	if err := trace.WriteMeta("-", &trace.Meta{}); err != nil {
		t.Errorf(`WriteMeta("-") = %v, want nil`, err)
	}
	if _, err := os.Stat(trace.MetaPath("-")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf(`WriteMeta("-") wrote a file`)
		os.Remove(trace.MetaPath("-"))
	}
}

func TestMetaRead(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		ok      bool
		check   func(*trace.Meta) bool
		errText string
	}{
		{"unknown fields ignored", `{"format_version":1,"tool":"x","future":{"a":[1,2]},"counts":{"rows":5,"new_count":3}}`, true,
			func(m *trace.Meta) bool { return m.Tool == "x" && m.Counts.Rows == 5 }, ""},
		{"no version", `{"tool":"y"}`, true, func(m *trace.Meta) bool { return m.Tool == "y" && m.FormatVersion == 0 }, ""},
		{"empty object", `{}`, true, func(m *trace.Meta) bool { return reflect.DeepEqual(*m, trace.Meta{}) }, ""},
		{"newer version", `{"format_version":2,"tool":"x"}`, false, nil, "format version 2"},
		{"much newer version", `{"format_version":100}`, false, nil, "100"},
		{"malformed", `{"format_version":1,`, false, nil, ""},
		{"wrong type", `{"format_version":"1"}`, false, nil, ""},
		{"empty file", ``, false, nil, ""},
		{"null", " null\n", false, nil, "null, not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tracePath := filepath.Join(t.TempDir(), "t.csv")
			if err := os.WriteFile(trace.MetaPath(tracePath), []byte(tt.json), 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := trace.ReadMeta(tracePath)
			if tt.ok {
				if err != nil {
					t.Fatalf("ReadMeta = %v", err)
				}
				if !tt.check(m) {
					t.Errorf("ReadMeta = %+v", m)
				}
				return
			}
			if err == nil {
				t.Fatalf("ReadMeta = %+v, want an error", m)
			}
			if errors.Is(err, os.ErrNotExist) {
				t.Errorf("a bad sidecar reported as missing: %v", err)
			}
			if !strings.Contains(err.Error(), trace.MetaPath(tracePath)) || !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("error %q does not name the sidecar or %q", err, tt.errText)
			}
		})
	}
}

// TestWriterRepeatedFields: rows that repeat some or all of the fields of
// the row before (as a simulation writes them: runs of one request at one
// time, identical decode reads) read back as written, in both dialects;
// the Writer reuses the text of repeated fields.
func TestWriterRepeatedFields(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	recs := make([]schema.Record, 20000)
	for i := range recs {
		r := randRecord(rng)
		r.Key = []byte(fmt.Sprintf("conv_user_%04d_turn_%d", rng.IntN(5), rng.IntN(3)))
		if i > 0 {
			p := recs[i-1]
			switch rng.IntN(6) {
			case 0:
				r = p // the same row again
			case 1:
				r.Time, r.Request, r.QoS, r.User, r.Tokens = p.Time, p.Request, p.QoS, p.User, p.Tokens
			case 2:
				r.Time = p.Time
			case 3:
				r.Time = p.Time/1000*1000 + p.Time%1000/2 // often the same microsecond
			case 4:
				r.Request, r.QoS, r.User, r.Tokens = p.Request, p.QoS, p.User, p.Tokens^1
			}
		}
		recs[i] = r
	}
	recs[0].Time, recs[0].Op = 0, schema.OpRead // the mlperf dialect's time 0
	for _, d := range []trace.Dialect{trace.DialectKvbench, trace.DialectMLPerf} {
		for _, comp := range []trace.Compression{trace.CompressNone, trace.CompressZstd} {
			opt := trace.WriterOptions{Dialect: d, Base: time.Unix(trace.EpochThreshold+5, 0), Compression: comp}
			var want []schema.Record
			for _, r := range recs {
				if d == trace.DialectMLPerf {
					if r.Op == schema.OpDelete {
						continue
					}
					r.Request, r.QoS = 0, schema.QoSNone
				}
				want = append(want, r)
			}
			_, data := writeAll(t, opt, recs)
			got, _ := mustReadAll(t, bytes.NewReader(data))
			diffRecords(t, got, want)
			for i := range got {
				if d == trace.DialectKvbench && (got[i].User != want[i].User || got[i].Tokens != want[i].Tokens) {
					t.Fatalf("record %d: user %d, tokens %d; want %d, %d", i, got[i].User, got[i].Tokens, want[i].User, want[i].Tokens)
				}
			}
		}
	}
}
