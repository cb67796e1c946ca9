package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestAutoscalerActions drives the autoscaler with throughput series and
// compares its events with those of kv-cache.py's WorkloadAutoscaler and
// monitor loop, run by CPython 3.11 on the same series (monitoring.py of
// mlcommons/storage, a saturation of 0 and no metrics at the first
// sample, as in trace mode).
func TestAutoscalerActions(t *testing.T) {
	for _, tt := range []struct {
		mode      string
		users     int
		target    float64
		tokens    []int64 // over 10 s each: throughput tokens/10
		events    []string
		final     int
		peakUsers int
		peak      float64
	}{
		{"capacity", 20, 0.8, []int64{1000, 1020, 1025, 1032, 1035, 1039, 1100},
			[]string{"scale_up 28", "scale_up 33", "scale_up 39", "stop 39"}, 39, 33, 103.2},
		{"capacity", 3, 0.8, []int64{500, 500, 500}, []string{"scale_up 8", "stop 8"}, 8, 3, 50},
		{"qos", 4, 0.8, []int64{10, 20, 30, 40, 50, 60, 70, 80}, nil, 4, 0, 0},
		{"qos", 400, 0.8, []int64{10, 10, 10, 10, 10, 10},
			[]string{"scale_up 480", "scale_up 500", "scale_up 500", "scale_up 500", "scale_up 500"}, 500, 0, 0},
		{"qos", 20, 0, []int64{10, 10, 10, 10}, nil, 20, 0, 0},
	} {
		t.Run(fmt.Sprintf("%s %d users", tt.mode, tt.users), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.AutoscalerMode, cfg.NumUsers, cfg.TargetSaturation = tt.mode, tt.users, tt.target
			a := newAutoscaler(&cfg)
			for _, tok := range tt.tokens {
				if a.sample(10, tok, time.Unix(0, 0)) {
					break
				}
			}
			var got []string
			for _, ev := range a.events {
				got = append(got, fmt.Sprintf("%s %d", ev.Action, ev.Users))
			}
			if !slices.Equal(got, tt.events) {
				t.Errorf("events %q, want %q", got, tt.events)
			}
			s := a.summary()
			if s.InitialUsers != tt.users || s.FinalUsers != tt.final || s.TotalScaleEvents != len(tt.events) {
				t.Errorf("summary %+v, want users %d -> %d, %d events", s, tt.users, tt.final, len(tt.events))
			}
			if tt.mode == "capacity" && (s.PeakUserCount == nil || *s.PeakUserCount != tt.peakUsers || *s.PeakThroughput != tt.peak) {
				t.Errorf("summary peak %v users %v tokens/s, want %d, %v", s.PeakUserCount, s.PeakThroughput, tt.peakUsers, tt.peak)
			}
			if tt.mode == "qos" && (s.PeakUserCount != nil || s.PeakThroughput != nil) {
				t.Error("a qos summary has capacity mode's peak")
			}
		})
	}
}

// TestAutoscalerCapacityEndsRun: kv-cache.py's capacity autoscaler sets
// its stop event once the throughput has not risen 1 % over its peak at
// two samples, which ends the run, trace included, whatever --duration
// says; kvtrace took --enable-autoscaling for a no-op and wrote all 300 s.
// Its qos mode, at a trace run's storage latencies of 0, only scales the
// user count it reports, and the run goes on.
func TestAutoscalerCapacityEndsRun(t *testing.T) {
	for _, mode := range []string{"capacity", "qos", ""} {
		t.Run("mode "+mode, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Seed, cfg.NumUsers, cfg.Duration, cfg.GPUMemGB, cfg.CPUMemGB, cfg.GenerationMode = 42, 20, 300*time.Second, 0, 4, "none"
			cfg.EnableAutoscaling, cfg.AutoscalerMode = mode != "", mode
			if mode == "" {
				cfg.AutoscalerMode = "qos"
			}
			var last time.Duration
			res, err := Run(context.Background(), &cfg, func(r *schema.Record) error { last = r.Time; return nil })
			if err != nil {
				t.Fatal(err)
			}
			s := &res.Summary
			doc, err := json.Marshal(s.AutoscalingStats)
			if err != nil {
				t.Fatal(err)
			}
			switch mode {
			case "capacity":
				n := len(s.AutoscalingStats)
				if n == 0 || s.AutoscalingStats[n-1].Action != "stop" {
					t.Fatalf("autoscaling_stats %s: want a stop last", doc)
				}
				stop := s.AutoscalingStats[n-1].Timestamp.Sub(cfg.EpochBase)
				if last > stop || stop >= 300*time.Second || s.ElapsedTime != stop.Seconds() {
					t.Errorf("the stop at %v: last row at %v, elapsed_time %v", stop, last, s.ElapsedTime)
				}
				if len(res.Kvbench.Warnings) == 0 || !strings.Contains(res.Kvbench.Warnings[len(res.Kvbench.Warnings)-1], "autoscaler ended the run") {
					t.Errorf("warnings %q: want the stop said", res.Kvbench.Warnings)
				}
				if !strings.Contains(string(doc), `"read_latency_p95_ms":null`) || !strings.Contains(string(doc), `"peak_throughput_tokens_per_sec":`) {
					t.Errorf("autoscaling_stats %s: want the reference's keys", doc)
				}
			case "qos":
				if last < 290*time.Second || s.AutoscalingSummary == nil || len(res.ThroughputTimeline) != 29 {
					t.Errorf("last row at %v, summary %v, %d throughput samples: want the whole run, a summary and 29 samples",
						last, s.AutoscalingSummary, len(res.ThroughputTimeline))
				}
			default:
				if s.AutoscalingSummary != nil || len(s.AutoscalingStats) != 0 || len(res.ThroughputTimeline) != 0 {
					t.Errorf("without --enable-autoscaling: %s, %v, %d samples", doc, s.AutoscalingSummary, len(res.ThroughputTimeline))
				}
			}
		})
	}
}
