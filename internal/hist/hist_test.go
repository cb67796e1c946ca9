package hist

import (
	"encoding/base64"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvbench/kvbench/schema"
)

// us is n microseconds.
func us(n int64) time.Duration { return time.Duration(n) * time.Microsecond }

// record returns a Histogram of the given microsecond values.
func record(tb testing.TB, values []int64) *Histogram {
	tb.Helper()
	h := New()
	for _, v := range values {
		h.Record(us(v))
	}
	return h
}

// randomValues returns n log-uniform values from 1 µs to about an hour, so
// every bucket range is exercised.
func randomValues(r *rand.Rand, n int) []int64 {
	vs := make([]int64, n)
	for i := range vs {
		vs[i] = int64(math.Exp(r.Float64() * math.Log(float64(HighestUS))))
	}
	return vs
}

// within reports whether got is within HdrHistogram's 3-digit precision of
// want (one part in 1000, plus one unit for rounding to whole µs).
func within(got, want float64) bool {
	return math.Abs(got-want) <= want/1000+1
}

func TestUniformPercentiles(t *testing.T) {
	h := New()
	for v := int64(1); v <= 10000; v++ {
		h.Record(us(v))
	}
	l := h.Latency()
	if l.Count != 10000 {
		t.Fatalf("count %d, want 10000", l.Count)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"min", l.MinUS, 1},
		{"mean", l.MeanUS, 5000.5},
		{"p50", l.P50US, 5000},
		{"p90", l.P90US, 9000},
		{"p95", l.P95US, 9500},
		{"p99", l.P99US, 9900},
		{"p99.9", l.P999US, 9990},
		{"p99.99", l.P9999US, 9999},
		{"max", l.MaxUS, 10000},
	} {
		if !within(c.got, c.want) {
			t.Errorf("%s = %g, want %g within 0.1 %%", c.name, c.got, c.want)
		}
	}
	if !strings.HasPrefix(l.Histogram, "HISTF") {
		// The V2 compressed cookie 0x1c849314 encodes as "HISTF".
		t.Errorf("histogram %.20q does not start with the V2 compressed cookie HISTF", l.Histogram)
	}
}

func TestConstantAndTwoPoint(t *testing.T) {
	h := New()
	for range 99 {
		h.Record(us(100))
	}
	h.Record(us(1_000_000))
	l := h.Latency()
	if l.P50US != 100 || l.P90US != 100 || l.P99US != 100 {
		t.Errorf("p50/p90/p99 = %g/%g/%g, want 100", l.P50US, l.P90US, l.P99US)
	}
	if !within(l.P999US, 1e6) || !within(l.MaxUS, 1e6) {
		t.Errorf("p99.9 %g, max %g, want 1e6", l.P999US, l.MaxUS)
	}
	if l.MinUS != 100 {
		t.Errorf("min %g, want 100", l.MinUS)
	}
}

func TestRecordClamps(t *testing.T) {
	h := New()
	for _, d := range []time.Duration{-time.Second, 0, 999 * time.Nanosecond, time.Microsecond, 2 * time.Hour, math.MaxInt64} {
		h.Record(d)
	}
	low, high := h.Clamped()
	if low != 3 || high != 2 {
		t.Errorf("clamped low %d high %d, want 3 and 2", low, high)
	}
	l := h.Latency()
	if l.Count != 6 || l.MinUS != 1 {
		t.Errorf("count %d min %g, want 6 and 1", l.Count, l.MinUS)
	}
	if !within(l.MaxUS, float64(HighestUS)) {
		t.Errorf("max %g, want about %d", l.MaxUS, HighestUS)
	}
	h.Reset()
	if low, high := h.Clamped(); low != 0 || high != 0 || h.Count() != 0 {
		t.Errorf("after Reset: count %d clamped %d/%d, want zeros", h.Count(), low, high)
	}
}

func TestEmpty(t *testing.T) {
	if l := New().Latency(); l != (schema.Latency{}) {
		t.Errorf("empty histogram gives %+v, want the zero Latency", l)
	}
	h, err := FromLatency(schema.Latency{})
	if err != nil || h.Count() != 0 {
		t.Fatalf("FromLatency(zero) = %v, %v; want an empty histogram", h, err)
	}
	if l, err := MergeLatencies(); err != nil || l != (schema.Latency{}) {
		t.Errorf("MergeLatencies() = %+v, %v; want the zero Latency", l, err)
	}
	l := record(t, []int64{5, 6}).Latency()
	m, err := MergeLatencies(schema.Latency{}, l, schema.Latency{})
	if err != nil || m != l {
		t.Errorf("merging with zero Latencies = %+v, %v; want %+v", m, err, l)
	}
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 100, 100_000} {
		l := record(t, randomValues(r, n)).Latency()
		h, err := FromLatency(l)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if back := h.Latency(); back != l {
			t.Errorf("n=%d: round trip\n got %+v\nwant %+v", n, back, l)
		}
	}
}

func TestMergeHalves(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vs := randomValues(r, 50_000)
	whole := record(t, vs)
	a, b := record(t, vs[:20_000]), record(t, vs[20_000:])
	if err := Merge(a, b); err != nil {
		t.Fatal(err)
	}
	if !a.h.Equals(whole.h) {
		t.Error("merged halves differ from the whole")
	}
	for p := 0.0; p <= 100; p += 0.5 {
		if got, want := a.ValueAtPercentile(p), whole.ValueAtPercentile(p); got != want {
			t.Errorf("p%g = %d, want %d", p, got, want)
		}
	}
	la, lw := a.Latency(), whole.Latency()
	if la != lw {
		t.Errorf("merged Latency\n got %+v\nwant %+v", la, lw)
	}
	m, err := MergeLatencies(record(t, vs[:20_000]).Latency(), record(t, vs[20_000:]).Latency())
	if err != nil {
		t.Fatal(err)
	}
	if m != lw {
		t.Errorf("MergeLatencies\n got %+v\nwant %+v", m, lw)
	}
}

func TestMergeClamps(t *testing.T) {
	a, b := New(), New()
	a.Record(0)
	b.Record(0)
	b.Record(3 * time.Hour)
	if err := Merge(a, b); err != nil {
		t.Fatal(err)
	}
	if low, high := a.Clamped(); low != 2 || high != 1 {
		t.Errorf("clamped %d/%d, want 2/1", low, high)
	}
}

// TestMergeProperties checks on random data that merging is associative
// and order-independent: every grouping and order of the parts gives the
// same encoded histogram.
func TestMergeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 20 {
		parts := make([]schema.Latency, 2+r.IntN(5))
		var all []int64
		for i := range parts {
			vs := randomValues(r, r.IntN(2000))
			all = append(all, vs...)
			parts[i] = record(t, vs).Latency()
		}
		want := record(t, all).Latency()

		got, err := MergeLatencies(parts...)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("trial %d: merge of %d parts differs from recording them together", trial, len(parts))
		}
		shuffled := append([]schema.Latency(nil), parts...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got, err := MergeLatencies(shuffled...); err != nil || got != want {
			t.Fatalf("trial %d: merge in another order differs (err %v)", trial, err)
		}
		// (p0 + ... + pk) + (pk+1 + ...) against the flat merge.
		k := 1 + r.IntN(len(parts)-1)
		left, err := MergeLatencies(parts[:k]...)
		if err != nil {
			t.Fatal(err)
		}
		right, err := MergeLatencies(parts[k:]...)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := MergeLatencies(left, right); err != nil || got != want {
			t.Fatalf("trial %d: grouped merge at %d differs (err %v)", trial, k, err)
		}
	}
}

func TestFromLatencyErrors(t *testing.T) {
	good := record(t, []int64{10, 20, 30}).Latency()

	// A valid V2 histogram of another geometry (1 ns to 1 min, 2 digits),
	// as another tool might write.
	other := hdrhistogram.New(1, 60_000_000_000, 2)
	_ = other.RecordValue(12345)
	otherEnc, err := other.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(good.Histogram)
	badCookie := append([]byte(nil), raw...)
	badCookie[0] ^= 0xff
	truncated := raw[:len(raw)-5]

	for _, c := range []struct {
		name string
		l    schema.Latency
		want error
	}{
		{"count without histogram", schema.Latency{Count: 3}, ErrNoHistogram},
		{"not base64", schema.Latency{Count: 3, Histogram: "not base64!"}, ErrCorrupt},
		{"too short", schema.Latency{Count: 3, Histogram: "HIST"}, ErrCorrupt},
		{"bad cookie", schema.Latency{Count: 3, Histogram: base64.StdEncoding.EncodeToString(badCookie)}, ErrCorrupt},
		{"truncated", schema.Latency{Count: 3, Histogram: base64.StdEncoding.EncodeToString(truncated)}, ErrCorrupt},
		{"other geometry", schema.Latency{Count: 1, Histogram: string(otherEnc)}, ErrGeometry},
		{"count mismatch", schema.Latency{Count: 4, Histogram: good.Histogram}, ErrCountMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := FromLatency(c.l)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "hist: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			_, err = MergeLatencies(good, c.l)
			if !errors.Is(err, c.want) || !strings.HasPrefix(err.Error(), "hist: latency 1: ") {
				t.Errorf("MergeLatencies err = %v, want %v naming latency 1", err, c.want)
			}
		})
	}
}

func TestMergeOverflow(t *testing.T) {
	a, b := New(), New()
	_ = a.h.RecordValues(10, math.MaxInt64-1)
	_ = b.h.RecordValues(10, 2)
	before := a.Latency()
	if err := Merge(a, b); !errors.Is(err, ErrOverflow) {
		t.Fatalf("err = %v, want ErrOverflow", err)
	}
	if a.Latency() != before {
		t.Error("a failed merge changed its destination")
	}
}

func TestConcurrent(t *testing.T) {
	c := NewConcurrent()
	const workers, each = 8, 5000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				c.Record(us(int64(1 + (w*each+i)%1000)))
				if i%1000 == 0 {
					_ = c.Latency() // snapshots race with recording
				}
			}
		}()
	}
	wg.Wait()
	l := c.Latency()
	if l.Count != workers*each {
		t.Errorf("count %d, want %d", l.Count, workers*each)
	}
	want := New()
	for i := range workers * each {
		want.Record(us(int64(1 + i%1000)))
	}
	if l != want.Latency() {
		t.Errorf("concurrent recording\n got %+v\nwant %+v", l, want.Latency())
	}
}
