package report

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
	if !strings.Contains(b.String(), `"name": "tier1_read_offered"`) {
		t.Errorf("no metric named in the JSON report:\n%.400s", b.String())
	}
}

// benchConfigKey is a configuration key of the Go benchmark format: a
// lower-case letter, then no spaces and no upper-case letters.
var benchConfigKey = regexp.MustCompile(`^[a-z][^\sA-Z]*$`)

// TestBenchFormat: --format bench is the Go benchmark format, the group is
// a configuration line and not part of the names, so two groups have the
// same benchmark names and benchstat compares them (run when benchstat is
// on PATH: go install golang.org/x/perf/cmd/benchstat@latest).
func TestBenchFormat(t *testing.T) {
	rep := build(t, goldenInputs, LoadOptions{}, BuildOptions{})
	var b bytes.Buffer
	if err := Render(&b, rep, "bench"); err != nil {
		t.Fatal(err)
	}
	names := map[string]map[string]int{} // group -> benchmark name -> samples
	group := ""
	for i, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if line == "" || strings.HasPrefix(line, "# ") {
			continue // a blank line, or a note for people (warnings), which benchstat ignores
		}
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "Benchmark") {
			if !benchConfigKey.MatchString(k) || strings.TrimSpace(v) == "" {
				t.Fatalf("line %d: a malformed configuration line %q", i+1, line)
			}
			if k == "group" {
				group = strings.TrimSpace(v)
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || len(f)%2 != 0 || !strings.HasPrefix(f[0], "Benchmark") || f[1] != "1" {
			t.Fatalf("line %d: not a benchmark line %q", i+1, line)
		}
		for j := 2; j < len(f); j += 2 {
			if _, err := strconv.ParseFloat(f[j], 64); err != nil {
				t.Fatalf("line %d: value %q: %v", i+1, f[j], err)
			}
		}
		if group == "" {
			t.Fatalf("line %d: a benchmark before any group line", i+1)
		}
		if strings.Contains(f[0], group) {
			t.Errorf("line %d: the group %s is in the name %s", i+1, group, f[0])
		}
		if names[group] == nil {
			names[group] = map[string]int{}
		}
		names[group][f[0]]++
	}
	if len(names) != 2 {
		t.Fatalf("groups %v, want 2", names)
	}
	var a, c map[string]int
	for _, g := range rep.Groups {
		if a == nil {
			a = names[g.Label]
		} else {
			c = names[g.Label]
		}
	}
	for n, k := range a {
		if c[n] == 0 || k != 2 {
			t.Errorf("%s: %d samples in one group, %d in the other (want 2 and 2: one per trial)", n, k, c[n])
		}
	}

	benchstat, err := exec.LookPath("benchstat")
	if err != nil {
		t.Skip("benchstat not on PATH (go install golang.org/x/perf/cmd/benchstat@latest): the format was checked by the parser above")
	}
	p := filepath.Join(t.TempDir(), "all.txt")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(benchstat, "-col", "group", p).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	for _, g := range rep.Groups {
		if !bytes.Contains(out, []byte(g.Label)) {
			t.Errorf("benchstat's output lacks the column of %s:\n%s", g.Label, out)
		}
	}
	if !bytes.Contains(out, []byte("vs base")) || !bytes.Contains(out, []byte("KV/tier1_read_offered")) {
		t.Errorf("benchstat compared nothing:\n%s", out)
	}
}

// TestBaselineByDerivedName: --baseline takes the label of a group, and
// also any name kvreport derives for its documents by default: the system,
// the file's name.
func TestBaselineByDerivedName(t *testing.T) {
	for _, tt := range []struct {
		lo       LoadOptions
		baseline string
		want     string
	}{
		{LoadOptions{}, "llama8b_u50_d20_gpu2_cpu4_gennone_s42", "llama8b_u50_d20_gpu2_cpu4_gennone_s42"},
		{LoadOptions{}, "u50_t1", "llama8b_u50_d20_gpu2_cpu4_gennone_s42"},
		{LoadOptions{}, "u50_t2.json", "llama8b_u50_d20_gpu2_cpu4_gennone_s42"},
		{LoadOptions{GroupBy: []string{"label", "file"}}, "u10_t2", "llama8b_u10_d30_gpu0_cpu4_s42/u10_t2"},
	} {
		docs, err := Load(goldenInputs, nil, tt.lo)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Build(docs, BuildOptions{Baseline: tt.baseline})
		if err != nil {
			t.Errorf("--baseline %s: %v", tt.baseline, err)
			continue
		}
		if rep.Comparison.Baseline != tt.want {
			t.Errorf("--baseline %s: compared with %s, want %s", tt.baseline, rep.Comparison.Baseline, tt.want)
		}
	}
	docs, _ := Load(goldenInputs, nil, LoadOptions{})
	if _, err := Build(docs, BuildOptions{Baseline: "nobody"}); err == nil || !strings.Contains(err.Error(), "no such group") {
		t.Errorf("--baseline nobody: %v", err)
	}
}
