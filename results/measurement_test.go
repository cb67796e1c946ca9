package results

import (
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestNotAMeasurement: the one rule a search's probe and kvreport apply
// to a result (each had its own, in other words).
func TestNotAMeasurement(t *testing.T) {
	failed := schema.ErrorStats{Count: 2, First: []string{"nvme: write 2_a: no space left on device"}}
	for _, c := range []struct {
		name string
		r    schema.Result
		want string
	}{
		{"whole", schema.Result{Complete: true}, ""},
		{"cut short", schema.Result{IncompleteReason: "interrupt signal received"}, "an incomplete run (interrupt signal received)"},
		{"cut short, no reason", schema.Result{}, "an incomplete run (incomplete)"},
		{"failed operations", schema.Result{Complete: true, Errors: failed},
			"2 operation(s) failed, the first: nvme: write 2_a: no space left on device"},
		{"both", schema.Result{IncompleteReason: "before the clock", Errors: failed},
			"an incomplete run (before the clock); 2 operation(s) failed"},
	} {
		if got := NotAMeasurement(&c.r); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
