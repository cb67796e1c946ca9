package hist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvbench/kvbench/schema"
)

// FuzzFromLatency feeds arbitrary text and counts to the decoder: it must
// never panic, must fail with one of the package's sentinel errors, and
// whatever it accepts must encode back to a Latency it accepts again with
// the same histogram.
func FuzzFromLatency(f *testing.F) {
	good := record(f, []int64{1, 7, 300, 40_000, 3_000_000}).Latency()
	f.Add(good.Count, good.Histogram)
	f.Add(int64(0), "")
	f.Add(int64(1), "HISTFAAAAEV42pNpmSzMwMDAxwABzFCaEUoz2X+AMIKZAAEfAhc=")
	f.Add(int64(3), "!!!")
	raw, _ := base64.StdEncoding.DecodeString(good.Histogram)
	f.Add(good.Count, base64.StdEncoding.EncodeToString(raw[:len(raw)/2]))
	// A valid frame around a zlib stream of garbage and of a huge geometry.
	for _, inner := range [][]byte{[]byte("garbage"), header(3, 1, 1<<62, 0)} {
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		_, _ = w.Write(inner)
		_ = w.Close()
		frame := binary.BigEndian.AppendUint32(nil, compressedCookie|0x10)
		frame = binary.BigEndian.AppendUint32(frame, uint32(z.Len()))
		f.Add(int64(1), base64.StdEncoding.EncodeToString(append(frame, z.Bytes()...)))
	}

	sentinels := []error{ErrNoHistogram, ErrCorrupt, ErrGeometry, ErrCountMismatch}
	f.Fuzz(func(t *testing.T, count int64, enc string) {
		h, err := FromLatency(schema.Latency{Count: count, Histogram: enc})
		if err != nil {
			if d, derr := hdrhistogram.Decode([]byte(enc)); derr == nil && d.TotalCount() == count && count > 0 &&
				d.LowestTrackableValue() == LowestUS && d.HighestTrackableValue() == HighestUS && d.SignificantFigures() == SigFigs {
				t.Logf("hdrhistogram-go accepts what hist refuses (%v); fine only for a ratio other than 1 or a bad checksum", err)
			}
			for _, s := range sentinels {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error %v wraps none of the sentinel errors", err)
		}
		l := h.Latency()
		if l.Count != count {
			t.Fatalf("decoded count %d, Latency said %d", l.Count, count)
		}
		if enc == "" {
			return
		}
		// hdrhistogram-go's decoder must agree with ours.
		d, derr := hdrhistogram.Decode([]byte(enc))
		if derr != nil {
			t.Fatalf("hist accepted what hdrhistogram-go refuses: %v", derr)
		}
		if !d.Equals(h.h) {
			t.Fatal("hist and hdrhistogram-go decode different histograms")
		}
		h2, err := FromLatency(l)
		if err != nil {
			t.Fatalf("re-decoding an encoding of our own: %v", err)
		}
		if !h2.h.Equals(h.h) {
			t.Fatal("re-decoded histogram differs")
		}
	})
}

// header is a V2 payload header with the given geometry and no counts.
func header(digits int32, lowest, highest int64, payload int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, payloadCookie|0x10)
	b = binary.BigEndian.AppendUint32(b, uint32(payload))
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(digits))
	b = binary.BigEndian.AppendUint64(b, uint64(lowest))
	b = binary.BigEndian.AppendUint64(b, uint64(highest))
	return binary.BigEndian.AppendUint64(b, 0x3ff0000000000000) // 1.0
}
