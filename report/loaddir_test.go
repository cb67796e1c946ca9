package report

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLoadDirectory: a directory given as a RESULT (an MLPerf run's,
// without --aggregate mlperf) is refused, saying what to give instead;
// it failed reading it, "read run: is a directory".
func TestLoadDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	want := "report: " + dir + ": a directory, not a result document: give the results in it (" + filepath.Join(dir, "*.json") +
		"), or aggregate a run's .../trial_<T>/rank_<N>/ directories with kvreport --aggregate mlperf"
	if _, err := Load([]string{trials3[0], dir}, nil, LoadOptions{}); err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
}
