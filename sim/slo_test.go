package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

func TestParseSLO(t *testing.T) {
	qos := DefaultConfig().QoS
	for _, tc := range []struct {
		in      string
		want    SLO
		wantErr string
	}{
		{in: "500", want: SLO{All: 500 * time.Millisecond}},
		{in: "0.5", want: SLO{All: 500 * time.Microsecond}},
		{in: "interactive=50,batch=2000", want: SLO{ByQoS: [3]time.Duration{50 * time.Millisecond, 0, 2 * time.Second}}},
		{in: "500, responsive=100", want: SLO{All: 500 * time.Millisecond, ByQoS: [3]time.Duration{0, 100 * time.Millisecond, 0}}},
		{in: "0", wantErr: `"0": want milliseconds above 0`},
		{in: "-5", wantErr: "want milliseconds above 0"},
		{in: "NaN", wantErr: "want milliseconds above 0"},
		{in: "fast=10", wantErr: `class "fast": want one of interactive, responsive, batch`},
		{in: "interactive=", wantErr: "want milliseconds above 0"},
	} {
		got, err := ParseSLO(tc.in, qos)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.wantErr)
			}
		case err != nil || got != tc.want:
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

// TestSLOAttainment runs the reference's 10-user realistic configuration
// with an SLO of 20 s and 5 s for interactive requests: the statistics'
// attainment is the share of the completed requests within their target,
// as the per-request completions (kvtrace --latency-dump) count it, and
// every completion is within the run.
func TestSLOAttainment(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumUsers, cfg.Duration, cfg.GPUMemGB, cfg.CPUMemGB, cfg.Seed = 10, 30*time.Second, 0, 4, 42
	var err error
	if cfg.SLO, err = ParseSLO("20000,interactive=5000", cfg.QoS); err != nil {
		t.Fatal(err)
	}
	var n, within int64
	byClass := map[string][2]int64{}
	res, err := RunWithHooks(context.Background(), &cfg, func(*schema.Record) error { return nil }, Hooks{Completed: func(c *Completion) error {
		n++
		if c.CompletedS > 30 || c.CompletedS < c.ArrivalS || c.WithinSLO == nil || c.User == "" || c.Phase == "" {
			t.Errorf("completion %+v", *c)
		}
		v := byClass[c.QoS]
		v[0]++
		if *c.WithinSLO {
			within++
			v[1]++
		}
		byClass[c.QoS] = v
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	slo := res.Kvbench.SLO
	if n != res.RequestsCompleted || slo == nil || slo.Requests != n || slo.Within != within || slo.TargetMS != 20000 {
		t.Fatalf("%d completions, %d within; statistics %+v of %d completed", n, within, slo, res.RequestsCompleted)
	}
	if within == 0 || within == n {
		t.Errorf("%d of %d within: want a target that splits them", within, n)
	}
	for name, v := range byClass {
		c := slo.ByQoS[name]
		if c == nil || c.Requests != v[0] || c.Within != v[1] || c.Attainment != float64(v[1])/float64(v[0]) {
			t.Errorf("%s: statistics %+v, completions %d, %d within", name, c, v[0], v[1])
		}
	}
	if slo.ByQoS["interactive"] != nil && slo.ByQoS["interactive"].TargetMS != 5000 {
		t.Errorf("interactive target %v ms", slo.ByQoS["interactive"].TargetMS)
	}
}
