package replay

import (
	"testing"
	"time"
)

// TestClosedStatsPerUser: a user's figures in closed_loop.per_user are its
// own requests' mean, p95 and max: of 20 requests, 19 took 10 ms and one
// 500 ms, so the p95 is 10 ms (the 19th of 20) while the max (and the p99)
// is 500 ms. (A mutation-testing gap: a p95 taken from the p99 went
// unnoticed.)
func TestClosedStatsPerUser(t *testing.T) {
	u := &clUser{key: userKey{user: 7}, requests: 20, tokens: 400}
	for i := range 20 {
		d := 10 * time.Millisecond
		if i == 3 {
			d = 500 * time.Millisecond
		}
		u.lat.Add(d)
	}
	c := &closedLoop{order: []*clUser{u}}
	c.rr = &rowReader{}
	st := c.stats(10 * time.Second)
	if len(st.PerUser) != 1 {
		t.Fatalf("per_user %+v", st.PerUser)
	}
	p := st.PerUser[0]
	near := func(got, want float64) bool { return got >= want*0.99 && got <= want*1.01 }
	if p.User != 7 || p.Requests != 20 || p.Tokens != 400 || !near(p.P95MS, 10) || !near(p.MaxMS, 500) ||
		!near(p.MeanMS, (19*10+500)/20.0) || p.RequestsPerSecond != 2 {
		t.Errorf("per_user %+v: want 20 requests, p95 10 ms, max 500 ms, mean 34.5 ms, 2 requests/s", p)
	}
}

// TestClosedRequestsLeft: closed_loop.requests_left counts the replayed
// users' requests never released. With the plan's count of each user's
// requests, it is that count less those completed, cut by the window, and
// the one released and still running; without it, the requests read and
// not released, or -1 (unknown) once the window closed on a trace that
// may hold more. (A mutation-testing gap: counting the running request as
// left, or 0 for unknown, went unnoticed.)
func TestClosedRequestsLeft(t *testing.T) {
	key := userKey{src: 0, user: 1}
	user := func(active bool) *clUser {
		u := &clUser{key: key, requests: 3, cut: 1, queue: make([]*clRequest, 2)}
		if active {
			u.active = &clRequest{}
		}
		return u
	}
	counted := &Plan{Scanned: true, UserRequests: map[userKey]int64{key: 10}}
	for _, tt := range []struct {
		name   string
		plan   *Plan
		active bool
		closed bool
		want   int64
	}{
		{"counted, one running", counted, true, false, 10 - 3 - 1 - 1},
		{"counted, none running", counted, false, true, 10 - 3 - 1},
		{"counted, all done", &Plan{Scanned: true, UserRequests: map[userKey]int64{key: 4}}, true, false, 0},
		{"uncounted, window open", nil, true, false, 2},
		{"uncounted, window closed", nil, true, true, -1},
		{"sidecar plan, window closed", &Plan{FromMeta: true}, false, true, -1},
	} {
		c := &closedLoop{order: []*clUser{user(tt.active)}, stopped: tt.closed}
		c.plan = tt.plan
		if got := c.left(); got != tt.want {
			t.Errorf("%s: requests_left %d, want %d", tt.name, got, tt.want)
		}
	}
}
