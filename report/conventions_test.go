package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli/clitest"
	"github.com/kvbench/kvbench/schema"
)

// v1Result is a result document of format version 1, as kvreplay wrote it
// before keys were all lower_snake_case (config's TierMap, BlockSize). It
// is frozen: kvreport reads version 1 forever.
const v1Result = "testdata/v1/result.json"

// TestReadsVersion1: a version 1 document loads, its config keys are
// renamed as version 2 names them, and merging or re-rendering it writes
// only lower_snake_case keys under the current version.
func TestReadsVersion1(t *testing.T) {
	raw, err := os.ReadFile(v1Result)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"format_version": 1`)) || !bytes.Contains(raw, []byte(`"TierMap"`)) {
		t.Fatalf("%s is no longer a version 1 document with Go field names", v1Result)
	}
	docs, err := Load([]string{v1Result}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := docs[0].Result
	if r.FormatVersion != 1 || r.Summary.StorageHealth.OverallStatus == "" || len(r.Cells) == 0 {
		t.Fatalf("version 1 read: version %d, health %q, %d cells", r.FormatVersion, r.Summary.StorageHealth.OverallStatus, len(r.Cells))
	}
	var conf map[string]any
	if err := json.Unmarshal(r.Config, &conf); err != nil {
		t.Fatal(err)
	}
	if _, ok := conf["tier_map"]; !ok || conf["block_size"] != float64(1<<20) || conf["TierMap"] != nil {
		t.Errorf("version 1 config not renamed: %s", r.Config)
	}
	merged, err := MergeRanks([]*schema.Result{r})
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	if merged.FormatVersion != schema.ResultFormatVersion {
		t.Errorf("merged document: version %d, want %d", merged.FormatVersion, schema.ResultFormatVersion)
	}
	if bad := clitest.NonSnakeKeys(t, out); len(bad) > 0 {
		t.Errorf("merged document keys not in lower_snake_case: %v", bad)
	}
}

// TestJSONReportKeys: kvreport --format json names its keys in
// lower_snake_case (it had Name, Unit, Better).
func TestJSONReportKeys(t *testing.T) {
	docs, err := Load([]string{v1Result, filepath.Join("testdata", "u10_t2.json")}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(docs, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, rep, "json"); err != nil {
		t.Fatal(err)
	}
	if bad := clitest.NonSnakeKeys(t, b.Bytes()); len(bad) > 0 {
		t.Errorf("keys not in lower_snake_case: %v", bad)
	}
	if !strings.Contains(b.String(), `"name": "tier1_read_bw"`) {
		t.Errorf("no metric named in the JSON report:\n%.400s", b.String())
	}
}
