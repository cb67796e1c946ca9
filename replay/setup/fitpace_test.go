package setup

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// writesAt is a trace of 4 KiB Tier-2 writes, rate(t) a second at trace
// time t, for span.
func writesAt(t *testing.T, span time.Duration, rate func(time.Duration) int) replay.Source {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for s := time.Duration(0); s < span; s += time.Second {
		k := rate(s)
		for i := range k {
			rec := schema.Record{Time: s + time.Duration(i)*time.Second/time.Duration(k), Op: schema.OpWrite, Size: 4096,
				Tier: schema.TierNVMe, Key: []byte(fmt.Sprint("k", n)), Phase: schema.PhasePrefill}
			if err := w.Write(&rec); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	return replay.Source{Name: "mem", Rescan: true, Open: func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader(data)), nil }}
}

// TestFitPaceSettles: --fit's slower pace for an object store's requests
// (800/s assumed of 16 in flight, half of it the share) is settled at that
// pace. A 100 s trace asking 600 requests/s gets --speed 0.666, and so takes
// 150 s: --fit-time 2m bounds it (--duration 2m0s), and the why says the
// pace it replays at. A trace whose start is busier (2000/s for 30 s, then
// 200/s) gets a pace planned on its 2-minute window, which at that pace
// reaches less of the trace, its busier start: the pace is slowed until
// the window it gives fits (at most 0.2, 2000/s x 0.2 = 400/s). Each
// fitted replay's own advice fits. Before, --fit applied --speed 0.666
// for 150 s past --fit-time, and --speed 0.615 on the ramp, whose window
// then asked 573 requests/s.
func TestFitPaceSettles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		src      replay.Source
		maxSpeed float64
		flags    string
	}{
		{"even", writesAt(t, 100*time.Second, func(time.Duration) int { return 600 }), 0.666, "--duration 2m0s --speed 0.666"},
		{"busier start", writesAt(t, 600*time.Second, func(s time.Duration) int { return map[bool]int{true: 2000, false: 200}[s < 30*time.Second] }), 0.2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := replay.DefaultConfig()
			cfg.Speed = 1
			cfg.TierMap = [schema.NumTiers]string{"", "ram", "s3"}
			opts := &Options{}
			srcs := []replay.Source{tc.src}
			plan, err := replay.Prepare(context.Background(), &cfg, srcs)
			if err != nil {
				t.Fatal(err)
			}
			f := Fitting{Apply: true, Time: 2 * time.Minute}
			fitted, fit, _, err := f.Fit(context.Background(), &cfg, opts, srcs, plan)
			if err != nil {
				t.Fatal(err)
			}
			applied := strings.Join(fit.Applied, " ")
			if tc.flags != "" && applied != tc.flags {
				t.Errorf("--fit applies %q, want %q", applied, tc.flags)
			}
			if cfg.Speed > tc.maxSpeed || cfg.Duration != 2*time.Minute || !strings.Contains(applied, "--speed "+replay.FormatSpeed(cfg.Speed)) {
				t.Errorf("--fit applies %q: speed %v, duration %v; want --speed at most %v for --duration 2m0s", applied, cfg.Speed, cfg.Duration, tc.maxSpeed)
			}
			if a := Advise(&cfg, fitted, opts); !a.Fits {
				t.Errorf("the fitted replay does not fit: %q", a.Problems)
			}
			if want := fmt.Sprintf("at --speed %g", cfg.Speed); !strings.Contains(fit.Why, want) || strings.Contains(fit.Why, "keeps the trace's pace") {
				t.Errorf("why %q: want %q", fit.Why, want)
			}
		})
	}
}
