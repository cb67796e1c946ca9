package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestClosedMissedNamesCarriedRows: with --users, the rows a closed loop
// releases at their trace times are also the demotions and deletes of
// replayed users' objects that left-out users' requests carry, and the
// warning of those never released says so. A users search's probes of
// the 8B trace (no row without a User, 3504 Evict rows in its first 5 s)
// warned of "4 to 168 rows of no user (... preconditioning, RAG
// ingestion, request traces' requests)", which that trace has none of.
// Without --users every such row is of no user, as the warning says.
func TestClosedMissedNamesCarriedRows(t *testing.T) {
	for _, tt := range []struct {
		name      string
		userLimit int
		want, not string
	}{
		{"--users", 38, "--closed-loop: 168 rows released at their trace times (rows of no user: preconditioning, RAG ingestion, " +
			"request traces' requests; and demotions and deletes of the replayed users' objects that left-out users' requests carry) " +
			"due before the --duration window closed were never released", ""},
		{"every user", 0, "--closed-loop: 168 rows of no user (released at their trace times, as an open loop's: preconditioning, RAG ingestion, " +
			"request traces' requests) due before the --duration window closed were never released", "left-out"},
	} {
		c := &closedLoop{missed: 168}
		c.userLimit, c.rr = tt.userLimit, &rowReader{}
		res := &schema.Result{}
		c.report(res, 5*time.Second)
		got := strings.Join(res.Warnings, "\n")
		if !strings.Contains(got, tt.want) || (tt.not != "" && strings.Contains(got, tt.not)) {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
