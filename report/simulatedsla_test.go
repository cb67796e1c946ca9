package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestSimulatedSLAFigures: kvreport of a kvtrace --output document showed
// its SLA rows as "p95 ms 0, within target 100.0%, simulated": figures of
// virtual time, in which no storage I/O is timed, that read as a perfect
// result. Every format shows them missing ("-", null, an empty field), as
// any figure a run did not measure, beside the verdict "simulated".
func TestSimulatedSLAFigures(t *testing.T) {
	rep, err := Build([]*Doc{loadOne(t, "testdata/kvtrace_stats.json", "sim")}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows := slaRows(rep)
	if len(rows) == 0 {
		t.Fatal("test setup: no SLA row")
	}
	for _, f := range []string{"text", "md", "html", "json", "csv", "bench"} {
		var b bytes.Buffer
		if err := Render(&b, rep, f); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		var bad *regexp.Regexp
		switch f {
		case "text":
			bad = regexp.MustCompile(`interactive +[0-9]+ +0 +50 +100\.0%`)
		case "md":
			bad = regexp.MustCompile(`interactive \| [0-9]+ \| 0 \| 50 \| 100\.0%`)
		case "html":
			bad = regexp.MustCompile(`interactive</td><td>[0-9]+</td><td>0 ms<|>100\.0%<`)
		case "csv":
			bad = regexp.MustCompile(`qos_interactive_p95,ms,lower,50,0,|within_target,%,higher,95,100,`)
		case "bench":
			bad = regexp.MustCompile(`p95 0 ms|100\.0% within`)
		case "json":
			var doc struct {
				Groups []struct {
					Trials []struct {
						SLA []struct {
							QoS    string   `json:"qos"`
							P95    *float64 `json:"p95_ms"`
							Within *float64 `json:"within_target_pct"`
							SLA    string   `json:"sla"`
						} `json:"sla"`
					} `json:"trials"`
				} `json:"groups"`
			}
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			sla := doc.Groups[0].Trials[0].SLA
			if len(sla) != len(rows) {
				t.Fatalf("json: %d SLA rows, want %d", len(sla), len(rows))
			}
			for _, s := range sla {
				if s.P95 != nil || s.Within != nil || s.SLA != "simulated" {
					t.Errorf("json: %s: p95 %v, within %v, %s: want null, null, simulated", s.QoS, s.P95, s.Within, s.SLA)
				}
			}
			continue
		}
		if m := bad.FindString(out); m != "" {
			t.Errorf("%s: a simulated SLA figure shown as measured: %q in\n%.3000s", f, m, out)
		}
		if !strings.Contains(out, "simulated") {
			t.Errorf("%s: not marked simulated", f)
		}
	}
}
