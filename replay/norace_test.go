//go:build !race

package replay_test

// raceEnabled reports that the race detector is on.
const raceEnabled = false
