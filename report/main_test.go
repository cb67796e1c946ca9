package report

import (
	"flag"
	"os"
	"testing"
)

// fuzzMinimizeTime bounds how long go test -fuzz minimizes each input of
// this package's targets that found new coverage (and each crasher),
// unless -fuzzminimizetime says otherwise. An execution of
// FuzzAggregateDocument on a kvreplay document decodes, merges, pools
// and re-encodes its HdrHistograms: about 30 ms, and minimizing one
// input tries it thousands of times. Under the default of 60 s, each
// worker spent the rest of a 15 s run minimizing the first input that
// found new coverage, and made no other execution: go test -fuzz
// FuzzAggregateDocument -fuzztime 15s ./report made 272 executions, 3 of
// them new coverage; bounded at 2 s, 4,600 to 9,200, 27 to 57 of them
// new coverage (a 2-core machine shared with other builds). Minimizing
// only makes the cached corpus smaller; it checks nothing.
const fuzzMinimizeTime = "2s"

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.fuzzminimizetime" })
	if !given {
		if err := flag.Set("test.fuzzminimizetime", fuzzMinimizeTime); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
