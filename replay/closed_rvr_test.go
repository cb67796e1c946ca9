package replay_test

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay/backend"
)

// TestUsersBeyondTrace: a closed loop of --users 3 of a trace of 1 user
// replays that user, and the result says that it replayed 1, not 3, in a
// warning; before, only closed_loop.users (1 beside user_limit 3) did.
// --users 1 of it says nothing.
func TestUsersBeyondTrace(t *testing.T) {
	src := memTrace(t, windowTrace())
	for _, n := range []int{3, 1} {
		cfg := closedConfig()
		cfg.TierMap[2] = "ram"
		cfg.Users = n
		res, err := runReplay(t, cfg, src, map[string]backend.Backend{"ram": newRAM(t, 64<<20)})
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(res.Warnings, "\n")
		warned := strings.Contains(w, "--users 3: the traces have 1 user: it was replayed, not 3")
		if res.ClosedLoop == nil || res.ClosedLoop.Users != 1 || warned != (n == 3) {
			t.Errorf("--users %d: warnings:\n%s", n, w)
		}
	}
}
