package hist

import (
	"testing"
	"time"
)

// The tests of this file close gaps that mutation testing found: each
// fails on a small change to the code under it (named in its comment)
// that the rest of the package's tests let through.

// TestMeanIsMean: a Latency's mean is the mean of the values, not a
// percentile: 99 values of 100 µs and one of 1 s have a mean of 10099 µs
// (to the histogram's 0.1 %), far from their median.
func TestMeanIsMean(t *testing.T) {
	h := New()
	for range 99 {
		h.Record(100 * time.Microsecond)
	}
	h.Record(time.Second)
	if got, want := h.Latency().MeanUS, 10099.0; got < want*0.999 || got > want*1.001 {
		t.Errorf("mean %g us, want about %g", got, want)
	}
}

// TestClampJustAboveAnHour: a duration one microsecond above the
// highest value is clamped and counted so, not recorded as if in range.
func TestClampJustAboveAnHour(t *testing.T) {
	h := New()
	h.Record(time.Hour)
	h.Record(time.Hour + time.Microsecond)
	if low, high := h.Clamped(); low != 0 || high != 1 {
		t.Errorf("clamped low %d high %d, want 0 and 1", low, high)
	}
}
