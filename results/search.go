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

// PlateauGain is the least gain in offered load over the peak before it
// that a doubling of a capacity search's load must bring to count as
// improving. Below saturation a doubling nearly doubles the offered load
// delivered; at the plateau it adds nothing but noise, which stays well
// under this, as a fall does.
const PlateauGain = 0.10

// OfferedLoadFell names the probes of a capacity search (in the order
// run, --speed rising) whose offered load fell below the most a probe at
// a lower --speed delivered by more than PlateauGain, a plateau's noise,
// each with the figure it fell from; "" when none did. A probe that is
// not a measurement counts neither way. It is the one wording of this
// noise, which a capacity search's peak (the most one probe delivered) is
// no more certain than: kvreplay's search reason and kvreport's answer
// both say it so.
func OfferedLoadFell(probes []schema.SearchProbe) string {
	var parts []string
	best := -1
	for i, p := range probes {
		if p.NotMeasured != "" {
			continue
		}
		if best >= 0 && p.OfferedBps < (1-PlateauGain)*probes[best].OfferedBps {
			b := probes[best]
			parts = append(parts, fmt.Sprintf("%s at --speed %g (%.0f %% from %s at --speed %g)",
				FormatRate(p.OfferedBps), p.Speed, 100*(p.OfferedBps/b.OfferedBps-1), FormatRate(b.OfferedBps), b.Speed))
		}
		if best < 0 || p.OfferedBps > probes[best].OfferedBps {
			best = i
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("the offered load fell as --speed rose, by more than the %.0f %% a plateau's noise moves it: %s", 100*PlateauGain, strings.Join(parts, ", "))
}
