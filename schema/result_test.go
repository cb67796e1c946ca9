package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestQoSStatsWithinTarget: within_target is written, read back, and reads
// as 0 from a document written before it existed.
func TestQoSStatsWithinTarget(t *testing.T) {
	q := QoSStats{QoS: "batch", Count: 20, TargetP95MS: 1000, WithinTarget: 19, Compliance: 0.95, Met: true}
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"within_target":19`) {
		t.Errorf("encoded %s", b)
	}
	var back QoSStats
	if err := json.Unmarshal(b, &back); err != nil || back != q {
		t.Errorf("round trip %+v, %v", back, err)
	}
	var old QoSStats
	if err := json.Unmarshal([]byte(`{"qos":"batch","count":20,"target_p95_ms":1000,"compliance":0.95,"met":true}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.WithinTarget != 0 || old.Compliance != 0.95 {
		t.Errorf("older document %+v", old)
	}
}
