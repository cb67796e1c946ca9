package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestReferenceTraceModeNoPass: kv-cache.py in trace mode timed no
// storage I/O, and its storage_health PASS judged latencies of zero (a
// PASS without grounds): every format shows it NO_DATA, with why, and
// none has its storage_health_pass (it was PASS and 1, beside an SLA the
// same report called not measured). A measured document keeps its PASS.
func TestReferenceTraceModeNoPass(t *testing.T) {
	r := build(t, []string{"testdata/kvcache_py/u50_d20_trace_mode.json"}, LoadOptions{}, BuildOptions{})
	g := r.Groups[0]
	if h := judgedHealth(g.Trials[0]); h.OverallStatus != schema.HealthNoData || len(h.Reasons) != 1 || h.Reasons[0] != refTraceModePass {
		t.Errorf("storage_health %q %q, want NO_DATA: %q", h.OverallStatus, h.Reasons, refTraceModePass)
	}
	if _, ok := g.Stats[MetricHealth]; ok || g.Health[0] != string(schema.HealthNoData) {
		t.Errorf("health %q, storage_health_pass %+v: want NO_DATA and none", g.Health, g.Stats[MetricHealth])
	}
	for _, f := range []string{"text", "md", "csv", "json", "html", "bench"} {
		var b bytes.Buffer
		if err := Render(&b, r, f); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.Contains(out, MetricHealth+",") || strings.Contains(out, `"`+MetricHealth+`": 1`) ||
			strings.Contains(out, `"storage_health": "PASS"`) || strings.Contains(out, " PASS ") {
			t.Errorf("%s: the trace-mode document passes:\n%s", f, out)
		}
		if f != "csv" && f != "bench" && !strings.Contains(out, "NO_DATA") {
			t.Errorf("%s: no NO_DATA:\n%s", f, out)
		}
	}
	var j struct {
		Groups []struct {
			Trials []struct {
				Health  string             `json:"storage_health"`
				Metrics map[string]float64 `json:"metrics"`
			} `json:"trials"`
		} `json:"groups"`
	}
	var b bytes.Buffer
	if err := Render(&b, r, "json"); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if tr := j.Groups[0].Trials[0]; tr.Health != "NO_DATA" {
		t.Errorf("json trial: %+v", tr)
	} else if _, ok := tr.Metrics[MetricHealth]; ok {
		t.Errorf("json trial has %s: %+v", MetricHealth, tr)
	}

	// A document that timed its storage I/O keeps its verdict.
	m := build(t, []string{"testdata/kvcache_py/u50_d20_hand_measured.json"}, LoadOptions{}, BuildOptions{})
	if h := m.Groups[0].Health[0]; h == string(schema.HealthNoData) || h == "" {
		t.Errorf("a measured document's storage_health: %q", h)
	}
}
