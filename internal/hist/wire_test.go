package hist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvbench/kvbench/schema"
)

// jHiccup is an interval histogram written by Java HdrHistogram (jHiccup
// 2.0.7, from HdrHistogram's test log tagged-Log.logV2.hlog).
const jHiccup = "HISTFAAAAEV42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPEBEJISEuATEZMQ4uASkhIR4nrxg9v2lMaxhvMekILGZkKmcCAEf2CsI="

// v2 is an HdrHistogram V2 compressed encoding, parsed independently of
// hdrhistogram-go from the format's description (HdrHistogram's
// AbstractHistogram.encodeIntoCompressedByteBuffer and the ZigZag LEB128
// counts of its ZigZagEncoding).
type v2 struct {
	digits          int32
	lowest, highest int64
	ratio           float64
	counts          map[int]int64 // counts index -> count, non-zero only
}

func parseV2(tb testing.TB, s string) v2 {
	tb.Helper()
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		tb.Fatal(err)
	}
	if c := binary.BigEndian.Uint32(raw); c != 0x1c849314 {
		tb.Fatalf("cookie %#x, want 0x1c849314", c)
	}
	n := binary.BigEndian.Uint32(raw[4:])
	if int(n) != len(raw)-8 {
		tb.Fatalf("compressed length %d, have %d bytes", n, len(raw)-8)
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		tb.Fatal(err)
	}
	in, err := io.ReadAll(z)
	if err != nil {
		tb.Fatal(err)
	}
	if c := binary.BigEndian.Uint32(in) &^ 0xf0; c != 0x1c849303 {
		tb.Fatalf("payload cookie %#x", c)
	}
	p := v2{
		digits:  int32(binary.BigEndian.Uint32(in[12:])),
		lowest:  int64(binary.BigEndian.Uint64(in[16:])),
		highest: int64(binary.BigEndian.Uint64(in[24:])),
		ratio:   math.Float64frombits(binary.BigEndian.Uint64(in[32:])),
		counts:  map[int]int64{},
	}
	payload := in[40:]
	if int(binary.BigEndian.Uint32(in[4:])) != len(payload) {
		tb.Fatalf("payload length %d, have %d", binary.BigEndian.Uint32(in[4:]), len(payload))
	}
	idx := 0
	for len(payload) > 0 {
		// LEB128 of at most 9 bytes, the ninth holding 8 bits.
		var u uint64
		k := 0
		for shift := 0; ; shift += 7 {
			if k == len(payload) {
				tb.Fatalf("truncated varint at counts index %d", idx)
			}
			b := payload[k]
			k++
			if k == 9 {
				u |= uint64(b) << 56
				break
			}
			u |= uint64(b&0x7f) << shift
			if b < 0x80 {
				break
			}
		}
		payload = payload[k:]
		v := int64(u>>1) ^ -int64(u&1) // ZigZag
		if v < 0 {
			idx += int(-v) // a run of zero counts
			continue
		}
		if v > 0 {
			p.counts[idx] = v
		}
		idx++
	}
	return p
}

// index is the counts index of an exactly representable value in this
// package's geometry: 2048 sub-buckets of unit 1, so values below 2048 are
// their own index, and each later power of two adds 1024 buckets of twice
// the width.
func index(v int64) int {
	if v < 2048 {
		return int(v)
	}
	shift := 0
	for v>>shift >= 2048 {
		shift++
	}
	return (shift+1)*1024 + int(v>>shift) - 1024
}

// TestWireFormat checks the encoding against the V2 format parsed without
// hdrhistogram-go, first on a Java-written histogram (so that the parser is
// known good), then on one of ours.
func TestWireFormat(t *testing.T) {
	java := parseV2(t, jHiccup)
	d, err := hdrhistogram.Decode([]byte(jHiccup))
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, c := range java.counts {
		total += c
	}
	if total != d.TotalCount() || total == 0 {
		t.Fatalf("Java histogram: parsed %d values, hdrhistogram-go %d", total, d.TotalCount())
	}

	values := map[int64]int64{1: 3, 5: 1, 2047: 2, 2048: 1, 4096: 5, 1 << 20: 1 << 60, 3_000_000_000: 4}
	h := New()
	for v, c := range values {
		_ = h.h.RecordValues(v, c) // as many Records
	}
	p := parseV2(t, h.Latency().Histogram)
	if p.digits != SigFigs || p.lowest != LowestUS || p.highest != HighestUS || p.ratio != 1 {
		t.Errorf("header: %d digits, %d to %d, ratio %g", p.digits, p.lowest, p.highest, p.ratio)
	}
	if len(p.counts) != len(values) {
		t.Errorf("%d non-zero counts, want %d: %v", len(p.counts), len(values), p.counts)
	}
	for v, c := range values {
		if got := p.counts[index(v)]; got != c {
			t.Errorf("value %d (index %d): count %d, want %d", v, index(v), got, c)
		}
	}

	// The Java histogram is valid, but not of this package's geometry.
	if _, err := FromLatency(schema.Latency{Count: total, Histogram: jHiccup}); !errors.Is(err, ErrGeometry) {
		t.Errorf("FromLatency(Java jHiccup histogram) err = %v, want ErrGeometry", err)
	}
}

// TestDecoderAgrees checks hist's decoder against hdrhistogram-go's on
// random histograms, and the geometry constant it relies on.
func TestDecoderAgrees(t *testing.T) {
	if n := len(New().h.Export().Counts); n != countsLen {
		t.Fatalf("hdrhistogram-go allocates %d counters, countsLen is %d", n, countsLen)
	}
	r := rand.New(rand.NewPCG(7, 8))
	huge := New() // counts whose varints take 9 bytes, the last of 8 bits
	_ = huge.h.RecordValues(10, 1<<62+12345)
	_ = huge.h.RecordValues(1<<20, 1<<56+1)
	for _, n := range []int{0, 1, 10, 1000, 100_000} {
		h := huge
		if n > 0 {
			h = record(t, randomValues(r, n))
		}
		l := h.Latency()
		ours, err := FromLatency(l)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := hdrhistogram.Decode([]byte(l.Histogram))
		if err != nil {
			t.Fatal(err)
		}
		if !ours.h.Equals(theirs) {
			t.Errorf("n=%d: decoders disagree", n)
		}
	}
}
