//go:build race

package replay_test

// raceEnabled reports that the race detector is on: its instrumentation
// allocates, so allocation bounds are not checked.
const raceEnabled = true
