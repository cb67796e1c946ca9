package replay

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

var updatePlans = flag.Bool("update-plans", false, "rewrite the golden plans under testdata/plans")

// planCase is a prescan whose plan testdata/plans/NAME.json holds: traces
// (under the module's testdata/reference, or this package's testdata) and
// the replay's configuration, from DefaultConfig.
type planCase struct {
	name   string
	traces []string
	cfg    func(*Config)
}

// goldenPlanCases reach every path of the prescan's per-key state: three
// tiers on two backends and on one (a move keeps two copies), a window, a
// closed loop's --users N (keys its users own, keys left-out users wrote,
// cold objects left out and demoted), key and user shards, and two traces
// side by side (their keys namespaced).
var goldenPlanCases = []planCase{
	{"gpu2", []string{refTrace("llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst")}, func(c *Config) {
		c.TierMap = [schema.NumTiers]string{"ram", "ram", "nvme"}
		c.SizeScale = 1.0 / 1024
	}},
	{"gpu2-one-backend-window", []string{refTrace("llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst")}, func(c *Config) {
		c.TierMap = [schema.NumTiers]string{"nvme", "nvme", "nvme"}
		c.Duration, c.Speed = 5*time.Second, 2
	}},
	{"gpu2-shard-key", []string{refTrace("llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst")}, func(c *Config) {
		c.TierMap = [schema.NumTiers]string{"ram", "ram", "nvme"}
		c.Ranks, c.Rank, c.Shard = 3, 1, ShardKey
	}},
	{"two-traces", []string{refTrace("llama8b_u10_d30_gpu0_cpu4_s42.csv"), refTrace("llama8b_u50_d30_gpu0_cpu4_rag_s42.csv.zst")}, func(c *Config) {
		c.Capacity = 1 << 30
	}},
	{"loop", []string{"testdata/loop_u20_d60_cpu1.csv.zst"}, func(c *Config) {
		c.SizeScale = 1.0 / 1024
	}},
	{"loop-users3", []string{"testdata/loop_u20_d60_cpu1.csv.zst"}, func(c *Config) {
		c.ClosedLoop, c.Users, c.Speed = true, 3, 0
	}},
	{"loop-users8-window", []string{"testdata/loop_u20_d60_cpu1.csv.zst"}, func(c *Config) {
		c.ClosedLoop, c.Users, c.Duration = true, 8, 20*time.Second
	}},
	{"loop-shard-user", []string{"testdata/loop_u20_d60_cpu1.csv.zst"}, func(c *Config) {
		c.Ranks, c.Rank, c.Shard = 2, 0, ShardUser
	}},
	{"edges", []string{"testdata/prescan_edges.csv"}, func(c *Config) {
		c.TierMap = [schema.NumTiers]string{"", "ram", "nvme", "nvme"}
	}},
	{"edges-users1", []string{"testdata/prescan_edges.csv"}, func(c *Config) {
		c.TierMap = [schema.NumTiers]string{"", "ram", "nvme", "nvme"}
		c.ClosedLoop, c.Users = true, 1
	}},
	{"edges-and-loop-users4", []string{"testdata/prescan_edges.csv", "testdata/loop_u20_d60_cpu1.csv.zst"}, func(c *Config) {
		c.TierMap = [schema.NumTiers]string{"", "ram", "nvme", "nvme"}
		c.ClosedLoop, c.Users = true, 4
	}},
	{"loop-and-edges", []string{"testdata/loop_u20_d60_cpu1.csv.zst", "testdata/prescan_edges.csv"}, func(c *Config) {
		c.TierMap = [schema.NumTiers]string{"", "ram", "nvme", "nvme"}
	}},
}

// refTrace is the path of one of the module's reference traces.
func refTrace(name string) string {
	return filepath.Join("..", "testdata", "reference", name)
}

// goldenPlan is a plan as the golden files hold it: its exported fields
// (UserRequests as a list, which hides the plan's: JSON has no struct
// keys) and a digest of its profile (1024 points of each backend's
// figures).
type goldenPlan struct {
	*Plan
	UserRequests []goldenUser
	Profile      string
}

type goldenUser struct {
	Trace    int32
	User     uint64
	Requests int64
}

// planJSON is p as the golden files hold it.
func planJSON(t *testing.T, p *Plan) []byte {
	t.Helper()
	g := goldenPlan{Plan: p}
	for k, n := range p.UserRequests {
		g.UserRequests = append(g.UserRequests, goldenUser{k.src, k.user, n})
	}
	slices.SortFunc(g.UserRequests, func(a, b goldenUser) int {
		return cmp.Or(cmp.Compare(a.Trace, b.Trace), cmp.Compare(a.User, b.User))
	})
	if pr := p.profile; pr != nil {
		g.Profile = fmt.Sprintf("%x", sha256.Sum256(fmt.Appendf(nil, "%v %v %v %v %v", pr.step, pr.names, pr.peak, pr.bytes, pr.ops)))
	}
	b, err := json.MarshalIndent(g, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestPlansGolden plans each goldenPlanCases' traces and wants the plan
// byte for byte as testdata/plans holds it (go test -run PlansGolden
// -update-plans ./replay rewrites them, for a change meant to alter the
// plans): the prescan's memory per object was cut (scanKey), and no
// figure may change with it. The golden plans were written by the
// prescan before that change.
func TestPlansGolden(t *testing.T) {
	for _, tc := range goldenPlanCases {
		t.Run(tc.name, func(t *testing.T) {
			var srcs []Source
			for _, name := range tc.traces {
				srcs = append(srcs, Source{Name: filepath.Base(name), Rescan: true, Open: func() (*trace.Reader, error) { return trace.Open(name) }})
			}
			cfg := DefaultConfig()
			tc.cfg(&cfg)
			p, err := Prepare(context.Background(), &cfg, srcs)
			if err != nil {
				t.Fatal(err)
			}
			got := planJSON(t, p)
			path := filepath.Join("testdata", "plans", tc.name+".json")
			if *updatePlans {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("the plan is not %s's:\n%s", path, lineDiff(string(want), string(got)))
			}
		})
	}
}

// lineDiff names the first line where got differs from want, with both
// lines.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: want %q, got %q (%d lines, want %d)", i+1, a, b, len(g), len(w))
		}
	}
	return "no line differs"
}
