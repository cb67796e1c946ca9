package replay_test

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/sim"
)

// TestSelectUsersNotFastestFirst samples --users 20 of kvtrace's 100
// users (--generation-mode none, 30 s): the sample's users issue about
// as many requests each as the trace's users do. kvtrace's users think
// before their first request, so the first of a class to appear are
// those of the shortest think times; before, SelectUsers took them first,
// and the 20 issued 2.1 times the requests of an average user: a sample
// of n users was a heavier load than n of the trace's, and a users
// search's answer a count of its fastest users.
func TestSelectUsersNotFastestFirst(t *testing.T) {
	scfg := sim.DefaultConfig()
	scfg.NumUsers, scfg.Duration, scfg.GPUMemGB, scfg.CPUMemGB, scfg.GenerationMode = 100, 30*time.Second, 0, 4, "none"
	src, _ := simTrace(t, scfg)
	cfg := loopConfig(20)
	plan := prepare(t, &cfg, src)
	r, err := src.Open()
	if err != nil {
		t.Fatal(err)
	}
	reqs := map[uint64]int{}
	var rec schema.Record
	last := uint64(0)
	for {
		if err := r.Read(&rec); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if rec.User != 0 && rec.Request != last {
			reqs[rec.User]++
		}
		last = rec.Request
	}
	mean := func(us []replay.User) float64 {
		n := 0
		for _, u := range us {
			n += reqs[u.ID]
		}
		return float64(n) / float64(len(us))
	}
	all, sample := mean(plan.Users), mean(replay.SelectUsers(plan.Users, 20))
	if len(plan.Users) != 100 || sample > 1.5*all || sample < all/1.5 {
		t.Errorf("%d users, %.1f requests a user; the 20 sampled: %.1f requests a user", len(plan.Users), all, sample)
	}
}

// TestSelectUsersAcrossTraces samples users of two traces side by side,
// whose plan lists them trace by trace: each trace gives its share, where
// before the first trace's users of a class were all taken before the
// second's.
func TestSelectUsersAcrossTraces(t *testing.T) {
	var users []replay.User
	for tr := range 2 {
		for id := uint64(1); id <= 10; id++ {
			users = append(users, replay.User{Trace: tr, ID: id, QoS: schema.QoSBatch})
		}
	}
	got := [2]int{}
	for _, u := range replay.SelectUsers(users, 6) {
		got[u.Trace]++
	}
	if got != [2]int{3, 3} {
		t.Errorf("6 of 2 traces' 10 users each: %v users of each trace, want 3 and 3", got)
	}
}
