package setup

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay"
)

// TestPlanNamesLeftoverRunDirs: a run directory that a killed run left in
// --dir holds space the plan counts as taken; --plan names it, as the run
// warns of it (the plan said only "N GiB free", so a user sizing a replay
// did not learn that an earlier run's gigabytes were still there).
func TestPlanNamesLeftoverRunDirs(t *testing.T) {
	dir := t.TempDir()
	left := filepath.Join(dir, RunDirTool+"-4242-12345")
	if err := os.Mkdir(left, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := replay.DefaultConfig()
	plan := nvmePlan(1 << 20)
	var text strings.Builder
	if err := (Fitting{}).WritePlan(context.Background(), &text, "text", []string{"t.csv"}, nil, &cfg, plan, &Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), left) {
		t.Errorf("the plan does not name the run directory left in --dir, %s:\n%s", left, text.String())
	}
	var js strings.Builder
	if err := (Fitting{}).WritePlan(context.Background(), &js, "json", []string{"t.csv"}, nil, &cfg, plan, &Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Leftovers []string `json:"leftover_run_dirs"`
	}
	if err := json.Unmarshal([]byte(js.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Leftovers) != 1 || doc.Leftovers[0] != left {
		t.Errorf("leftover_run_dirs %q, want [%s]", doc.Leftovers, left)
	}
	// A --dir with none says nothing of them.
	text.Reset()
	if err := (Fitting{}).WritePlan(context.Background(), &text, "text", []string{"t.csv"}, nil, &cfg, plan, &Options{Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "earlier run") {
		t.Errorf("a --dir with no run directory left:\n%s", text.String())
	}
}
