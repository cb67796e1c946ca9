package examples

import (
	"flag"
	"os"
	"testing"
)

// TestMain lets every example block run at once, beyond the machine's
// cores (go test's -parallel defaults to GOMAXPROCS): most of their time
// is replays waiting on their traces' own pace or their --duration
// windows, not CPU, and a block left waiting for a free slot (8 of them
// once) ran last and longest. An explicit -test.parallel is kept.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "64")
	}
	os.Exit(m.Run())
}
