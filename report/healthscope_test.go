package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/results"
)

// TestHealthScopeSpeedMax: README's first command (kvtrace | kvreplay
// --speed max | kvreport -) showed "storage_health PASS 3/3" beside "SLA
// not measured" for every class: under --speed max the SLA criteria are
// not judged, and the PASS is of the tiers' latency criteria alone. Every
// format says so where the SLA was not measured (text, md and html beside
// the criteria, json as storage_health_scope, kvreplay's summary on its
// storage_health line); the verdict is results' and unchanged. A run at
// --speed 1, whose SLA was measured, says nothing of the kind.
func TestHealthScopeSpeedMax(t *testing.T) {
	paced := loadOne(t, "testdata/closed_t1.json", "paced")
	max := loadOne(t, "testdata/closed_t1.json", "max")
	r := max.Result
	r.ClosedLoop, r.Replay.Speed = nil, 0
	s, err := results.Summarize(r, r.Summary.StorageKVTokensPerSec)
	if err != nil {
		t.Fatal(err)
	}
	r.Summary = s
	h := judgedHealth(r)
	if h.OverallStatus != results.HealthPass || h.TotalCount == 0 {
		t.Fatalf("test setup: %s %d/%d %q", h.OverallStatus, h.PassedCount, h.TotalCount, h.Reasons)
	}
	for _, c := range h.Criteria {
		if strings.Contains(c.Name, "SLA") {
			t.Fatalf("test setup: an SLA criterion under --speed max: %s", c.Name)
		}
	}
	const scope = "tier latency criteria only; SLA not measured at --speed max"
	if got := healthScope(paced.Result); got != "" {
		t.Errorf("a paced closed loop: scope %q", got)
	}
	if got := healthScope(r); got != scope {
		t.Errorf("--speed max: scope %q, want %q", got, scope)
	}
	rep, err := Build([]*Doc{max, paced}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"text", "md", "html", "json"} {
		var b bytes.Buffer
		if err := Render(&b, rep, f); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		want := scope
		if f == "text" || f == "md" {
			want = "(" + scope + ")"
		}
		if strings.Count(out, want) != 1 {
			t.Errorf("%s: %q %d times, want once (the --speed max run's):\n%.3000s", f, want, strings.Count(out, want), out)
		}
		if f == "json" {
			var doc struct {
				Groups []struct {
					Trials []struct {
						Health string `json:"storage_health"`
						Scope  string `json:"storage_health_scope"`
					} `json:"trials"`
				} `json:"groups"`
			}
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if tr := doc.Groups[0].Trials[0]; tr.Health != string(results.HealthPass) || tr.Scope != scope {
				t.Errorf("json: %+v", tr)
			}
		}
	}
	var b bytes.Buffer
	WriteReplaySummary(&b, r)
	if !strings.Contains(b.String(), "criteria passed): "+scope+"\n") {
		t.Errorf("kvreplay's summary:\n%s", b.String())
	}
}
