//go:build race

package main

// raceEnabled reports that the race detector is on: tests that move
// hundreds of gigabytes skip their heaviest cases.
const raceEnabled = true
