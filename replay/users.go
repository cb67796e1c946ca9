package replay

import (
	"cmp"
	"math"
	"slices"

	"github.com/kvbench/kvbench/schema"
)

// User is one user of the traces: its trace (the index of its Source),
// its User value there, and the QoS class of its first request.
type User struct {
	Trace int
	ID    uint64
	QoS   schema.QoS
}

// SelectUsers returns the n users (all of them when n is 0 or at least
// len(users)) that a closed loop's --users n replays: a sample of users
// stratified by QoS class, so that a replay of part of the users keeps the
// trace's QoS mix and measures the storage, not which classes the first
// users to appear happen to be. users are in the order they first appear
// (Plan.Users); within a class they are taken in the order of their IDs
// (ties, across traces: by trace), not of their first appearance: a
// user's ID is its label, drawn before its profile, where a trace's first
// users to appear are those of the shortest first think times (kvtrace's
// users think before their first request too), who issue the most
// requests. Taken first, they made a sample of n users a heavier load
// than n of the trace's users (20 of kvtrace's 100: 2.1 times the
// requests a user), and a users search's answer a count of its fastest
// users. Traces side by side interleave, where the order of Plan.Users
// (trace by trace) took one trace's users before another's.
//
// The classes' shares are apportioned by the Huntington-Hill method (the
// one that apportions the seats of the US House of Representatives;
// Balinski and Young, "Fair Representation", 1982): every class present
// gets a user before any gets a second, once n reaches the number of
// classes, so that every class's SLA is judged, and each further user goes
// to the class of the highest count/sqrt(s(s+1)), s its users so far (ties:
// the larger class, then the class order). The method is house-monotone:
// the users of n are among those of n+1, so more users is more load, never
// another sample. The result is in the order of users.
func SelectUsers(users []User, n int) []User {
	if n <= 0 || n >= len(users) {
		return users
	}
	var byClass [schema.NumQoS][]int // indexes into users, by class
	for i, u := range users {
		q := u.QoS
		if !q.Valid() {
			q = schema.QoSNone
		}
		byClass[q] = append(byClass[q], i)
	}
	for _, c := range byClass {
		slices.SortStableFunc(c, func(a, b int) int {
			return cmp.Or(cmp.Compare(users[a].ID, users[b].ID), cmp.Compare(users[a].Trace, users[b].Trace))
		})
	}
	var taken [schema.NumQoS]int
	chosen := make([]bool, len(users))
	for range n {
		best, bestPri := -1, -1.0
		for q := range byClass {
			c, s := len(byClass[q]), taken[q]
			if s == c {
				continue
			}
			pri := math.Inf(1)
			if s > 0 {
				pri = float64(c) / math.Sqrt(float64(s)*float64(s+1))
			}
			if best < 0 || pri > bestPri || (pri == bestPri && c > len(byClass[best])) {
				best, bestPri = q, pri
			}
		}
		chosen[byClass[best][taken[best]]] = true
		taken[best]++
	}
	out := make([]User, 0, n)
	for i, u := range users {
		if chosen[i] {
			out = append(out, u)
		}
	}
	return out
}

// UsersByQoS counts users by QoS class ("" for users of no class).
func UsersByQoS(users []User) map[string]int {
	m := map[string]int{}
	for _, u := range users {
		m[u.QoS.String()]++
	}
	return m
}
