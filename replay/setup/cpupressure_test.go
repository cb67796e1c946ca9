package setup

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/schema"
)

// TestCPUPressure: a replay's result has the share of its run during
// which some task waited for a CPU, where the kernel keeps it, and warns
// from cpuPressureWarn: a FAIL for lag on a machine short of CPUs read as
// the storage's.
func TestCPUPressure(t *testing.T) {
	for _, tc := range []struct {
		share float64
		warn  bool
	}{{0, false}, {0.11, false}, {0.249, false}, {0.25, true}, {0.93, true}} {
		w := cpuPressureWarning(tc.share)
		if (w != "") != tc.warn || tc.warn && !strings.HasPrefix(w, "CPU PRESSURE: ") {
			t.Errorf("cpuPressureWarning(%g) = %q, want a warning %v", tc.share, w, tc.warn)
		}
	}
	if _, ok := host.CPUStall(); !ok {
		t.Skip("no /proc/pressure/cpu here (a kernel without pressure stall information)")
	}
	var c cpuPressure
	c.start()
	res := &schema.Result{}
	c.end(res)
	if p := res.Replay.CPUPressure; p == nil || *p < 0 || *p > 1 {
		t.Errorf("cpu_pressure %v, want a share in [0, 1]", p)
	}
}
