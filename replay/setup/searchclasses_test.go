package setup

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
)

// TestSearchKnowsTheTracesClasses: a users search gives the search the
// traces' users by QoS class (the prescan's), so that an answer whose
// probes replayed none of a class's users says so: here a system that
// serves 1 user, whose probe of 1 replays a batch user alone, of a trace
// of batch, interactive and responsive users.
func TestSearchKnowsTheTracesClasses(t *testing.T) {
	plan := &replay.Plan{Scanned: true}
	for i, q := range []schema.QoS{3, 3, 3, 3, 1, 1, 2, 2} {
		plan.Users = append(plan.Users, replay.User{ID: uint64(i + 1), QoS: q})
	}
	once := func(cfg *replay.Config, _ func(replay.Progress)) (*schema.Result, error) {
		res := &schema.Result{Complete: true, WallS: 30, ClosedLoop: &schema.ClosedLoopStats{RequestsLeft: 10}}
		res.Replay.DurationS = 30
		res.Summary.StorageHealth.OverallStatus = schema.HealthPass
		for _, u := range replay.SelectUsers(plan.Users, cfg.Users) {
			res.ClosedLoop.PerUser = append(res.ClosedLoop.PerUser, schema.UserStats{User: u.ID, QoS: u.QoS.String(), Requests: 5})
		}
		for q, n := range replay.UsersByQoS(replay.SelectUsers(plan.Users, cfg.Users)) {
			met := cfg.Users <= 1
			res.Requests.ByQoS = append(res.Requests.ByQoS, schema.QoSStats{QoS: q, Count: int64(5 * n), TargetP95MS: 1000, Met: met, Compliance: 1})
		}
		return res, nil
	}
	cfg := replay.DefaultConfig()
	so := SearchOptions{Kind: "users", Probes: 12, Repeats: 2}
	if errs := so.Check(&cfg); len(errs) != 0 {
		t.Fatal(errs)
	}
	so.Config = cfg
	doc, err := Search(so, plan, len(plan.Users), once, &SearchProgress{W: io.Discard, Quiet: true, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Users != 1 || !strings.Contains(doc.Reason, "the probes of 1 user replayed no interactive or responsive user, classes the trace has") {
		t.Errorf("%d users: %s", doc.Users, doc.Reason)
	}
}
