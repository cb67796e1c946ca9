package trace_test

import (
	"math"
	"testing"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

func TestScaledSize(t *testing.T) {
	for _, tt := range []struct {
		size  int64
		scale float64
		want  int64
	}{
		{0, 1, 0},
		{math.MaxInt64, 1, math.MaxInt64}, // exact at scale 1, no float round trip
		{131072, 1.0 / 1024, 128},
		{1000, 1.0 / 3, 333}, // truncated
		{1, 0.5, 0},
		{4096, 0.25, 1024},
	} {
		if got := trace.ScaledSize(tt.size, tt.scale); got != tt.want {
			t.Errorf("ScaledSize(%d, %g) = %d, want %d", tt.size, tt.scale, got, tt.want)
		}
	}
}

func TestColdRead(t *testing.T) {
	for _, tt := range []struct {
		op    schema.Op
		first bool
		want  bool
	}{
		{schema.OpRead, true, true},   // read before any row wrote it
		{schema.OpRead, false, false}, // read again, or after its Delete
		{schema.OpWrite, true, false},
		{schema.OpDelete, true, false},
	} {
		if got := trace.ColdRead(tt.op, tt.first); got != tt.want {
			t.Errorf("ColdRead(%s, first %v) = %v, want %v", tt.op, tt.first, got, tt.want)
		}
	}
}
