package results

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/schema"
)

// ProbesDisagreed names the numbers of users at which a users search's
// probes both passed and failed, with how many of each count's probes
// passed: "probes disagreed at 10 users (1 of 2 passed), 12 users (2 of 3
// passed)"; "" when none did. A probe that is not a measurement
// (NotMeasured) counts neither way. It is the one wording of this noise
// at the boundary, which a search's answer is no more certain than:
// kvreplay's search reason and kvreport's answer both say it so.
func ProbesDisagreed(probes []schema.SearchProbe) string {
	type tally struct{ pass, all int }
	by := map[int]*tally{}
	for _, p := range probes {
		if p.NotMeasured != "" {
			continue
		}
		t := by[p.Users]
		if t == nil {
			t = &tally{}
			by[p.Users] = t
		}
		t.all++
		if p.Pass {
			t.pass++
		}
	}
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(by)) {
		if t := by[n]; t.pass > 0 && t.pass < t.all {
			users := fmt.Sprintf("%d users", n)
			if n == 1 {
				users = "1 user"
			}
			parts = append(parts, fmt.Sprintf("%s (%d of %d passed)", users, t.pass, t.all))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "probes disagreed at " + strings.Join(parts, ", ")
}
