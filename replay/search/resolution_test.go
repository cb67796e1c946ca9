package search_test

import (
	"testing"

	"github.com/kvbench/kvbench/replay/search"
)

// TestUsersAllPassNoResolution: when every count passes, no failing count
// was found, so there is no "gap to the smallest failing count found";
// Resolution 1 reads as exact ("8 of 8 users (resolution 1)" in kvreport)
// while the system may serve more.
func TestUsersAllPassNoResolution(t *testing.T) {
	d, err := search.Users(search.UsersOptions{Total: 8, MaxProbes: 12, Repeats: 2}, func(int, float64) (search.Probe, error) {
		return search.Probe{Pass: true}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Users != 8 || d.Resolution != 0 {
		t.Errorf("all pass: %d users, resolution %d (no failing count was probed): %s", d.Users, d.Resolution, d.Reason)
	}
}
