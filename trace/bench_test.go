package trace_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gocarina/gocsv"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// The codec's bars (design section 8) are per core: run these with
// GOMAXPROCS=1 (go test -cpu 1) and read the rows/s metric.

const benchRows = 200_000

// benchRecords makes records shaped like the reference's 50-user traces:
// multi-turn keys, object sizes of tens to hundreds of MiB, a few rows per
// key, and times a few hundred microseconds apart.
func benchRecords(n int) []schema.Record {
	rng := rand.New(rand.NewPCG(42, 42))
	recs := make([]schema.Record, n)
	t := time.Duration(0)
	var key string
	var size int64
	for i := range recs {
		if i%8 == 0 {
			key = fmt.Sprintf("conv_user_%04d_%d_turn_%d", rng.IntN(500), 1795256439251+rng.IntN(30000), 1+rng.IntN(20))
			size = 131072 * int64(100+rng.IntN(10000))
		}
		t += time.Duration(rng.IntN(600)) * time.Microsecond
		op, phase := schema.OpRead, schema.PhaseDecode
		if i%8 == 0 {
			op, phase = schema.OpWrite, schema.PhasePrefill
		}
		recs[i] = schema.Record{Time: t, Op: op, Size: size, Tier: schema.Tier(rng.IntN(3)), Key: []byte(key),
			Phase: phase, Request: uint64(i/8 + 1), QoS: schema.QoS(1 + rng.IntN(3))}
	}
	return recs
}

func encode(tb testing.TB, recs []schema.Record, opt trace.WriterOptions) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, opt)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

var benchBase = time.Unix(1795256439, 72664000)

var benchCases = []struct {
	name string
	opt  trace.WriterOptions
}{
	{"kvbench/plain", trace.WriterOptions{Compression: trace.CompressNone}},
	{"kvbench/zstd", trace.WriterOptions{Compression: trace.CompressZstd}},
	{"kvbench/zstd-level3", trace.WriterOptions{Compression: trace.CompressZstd, Level: 3}},
	{"mlperf/plain", trace.WriterOptions{Dialect: trace.DialectMLPerf, Base: benchBase, Compression: trace.CompressNone}},
	{"mlperf/zstd", trace.WriterOptions{Dialect: trace.DialectMLPerf, Base: benchBase, Compression: trace.CompressZstd}},
}

func BenchmarkReader(b *testing.B) {
	recs := benchRecords(benchRows)
	for _, bc := range benchCases {
		data := encode(b, recs, bc.opt)
		b.Run(bc.name, func(b *testing.B) {
			var rec schema.Record
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			rows := 0
			for b.Loop() {
				r := trace.NewReader(bytes.NewReader(data))
				for {
					err := r.Read(&rec)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					rows++
				}
				r.Close()
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func BenchmarkWriter(b *testing.B) {
	recs := benchRecords(benchRows)
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			rows := 0
			for b.Loop() {
				w, err := trace.NewWriter(io.Discard, bc.opt)
				if err != nil {
					b.Fatal(err)
				}
				for i := range recs {
					if err := w.Write(&recs[i]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				rows += len(recs)
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// gocsvRow is the trace row as gocsv maps it: the struct-mapping library
// the design names, measured here on the codec's hot path.
type gocsvRow struct {
	Timestamp float64 `csv:"Timestamp"`
	Operation string  `csv:"Operation"`
	Size      int64   `csv:"Object_Size_Bytes"`
	Tier      string  `csv:"Tier"`
	Key       string  `csv:"Key"`
	Phase     string  `csv:"Phase"`
	Request   uint64  `csv:"Request"`
	QoS       string  `csv:"QoS"`
}

// BenchmarkReaderGocsv decodes the same plain kvbench trace with gocsv, for
// comparison with BenchmarkReader/kvbench/plain. It does less than the
// Reader (no enum or key validation) and is still far slower, which is why
// the codec is hand-written.
func BenchmarkReaderGocsv(b *testing.B) {
	data := encode(b, benchRecords(benchRows), trace.WriterOptions{Compression: trace.CompressNone})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		err := gocsv.UnmarshalToCallback(bytes.NewReader(data), func(r gocsvRow) {
			rows++
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
