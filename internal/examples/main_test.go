package examples

import (
	"flag"
	"os"
	"testing"
)

// TestMain lets the example blocks run side by side beyond the machine's
// cores (go test's -parallel defaults to GOMAXPROCS): most of their time
// is replays waiting on their traces' own pace, not CPU. An explicit
// -test.parallel is kept.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "8")
	}
	os.Exit(m.Run())
}
