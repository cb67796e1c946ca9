package setup

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay"
)

// TestConfigJSON: the result's configuration is the replay's Config in
// snake case beside where the tiers lived; --prewrite counts only for the
// extent layout.
func TestConfigJSON(t *testing.T) {
	cfg := replay.DefaultConfig()
	var got map[string]any
	for _, tc := range []struct {
		opts     Options
		prewrite bool
	}{{Options{Dir: "/mnt/x", Layout: "dir", Prewrite: true}, false}, {Options{Layout: "extent", Prewrite: true, RAMBudget: 4096}, true}} {
		if err := json.Unmarshal(ConfigJSON(&cfg, &tc.opts), &got); err != nil {
			t.Fatal(err)
		}
		if got["layout"] != tc.opts.Layout || got["prewrite"] != tc.prewrite || got["dir"] != tc.opts.Dir ||
			got["ram_budget"] != float64(tc.opts.RAMBudget) || got["block_size"] != float64(cfg.BlockSize) || got["BlockSize"] != nil {
			t.Errorf("%+v: %v", tc.opts, got)
		}
	}
}

// TestPrescan: the traces are opened and planned; a missing trace, stdin
// given twice, and a malformed trace are the input's errors (exit 2).
func TestPrescan(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(good, []byte("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n0.0,Write,4096,Tier-2,a,Prefill\n0.1,Read,4096,Tier-2,a,Decode\n"), 0o644)
	os.WriteFile(bad, []byte("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n0.0,Fly,4096,Tier-2,a,Prefill\n"), 0o644)
	cfg := replay.DefaultConfig()
	srcs, plan, err := Prescan(context.Background(), []string{good}, "", &cfg, Fitting{})
	if err != nil || len(srcs) != 1 || !plan.Scanned || plan.Rows != 2 || plan.Peak["nvme"] != 4096 {
		t.Fatalf("Prescan: %v, %d sources, plan %+v", err, len(srcs), plan)
	}
	for _, tc := range []struct {
		traces []string
		want   string
	}{{[]string{filepath.Join(dir, "none.csv")}, "no such file"}, {[]string{"-", "-"}, "stdin (-) given twice"}, {[]string{bad}, "Fly"}} {
		_, _, err := Prescan(context.Background(), tc.traces, "", &cfg, Fitting{})
		if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Prescan(%v): %v; want an input error with %q", tc.traces, err, tc.want)
		}
	}
}

// TestApplyModel: --model gives a trace its bytes per token from kvtrace's
// model table; an unknown model names the known ones; --tensor-parallel
// needs --model.
func TestApplyModel(t *testing.T) {
	models := map[string]int64{"llama3.1-8b": 131072, "llama2-7b": 524288}
	cfg := replay.DefaultConfig()
	cfg.TensorParallel = 1 // kvreplay's default
	if errs := ApplyModel(&cfg, "llama3.1-8b", models, false); len(errs) != 0 || cfg.BytesPerToken != 131072 {
		t.Errorf("llama3.1-8b: %v, %d bytes per token; want the table's 131072", errs, cfg.BytesPerToken)
	}
	cfg = replay.DefaultConfig()
	cfg.TensorParallel = 1
	if errs := ApplyModel(&cfg, "gpt-5", models, false); len(errs) != 1 || errs[0].Error() != "--model gpt-5: unknown model (want one of llama2-7b, llama3.1-8b)" || cfg.BytesPerToken != 0 {
		t.Errorf("an unknown model: %v, %d bytes per token", errs, cfg.BytesPerToken)
	}
	cfg = replay.DefaultConfig()
	cfg.TensorParallel = 2
	if errs := ApplyModel(&cfg, "", models, true); len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "--tensor-parallel 2: only with --model") {
		t.Errorf("--tensor-parallel without --model: %v", errs)
	}
}
