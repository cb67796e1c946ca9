package setup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/null"
	"github.com/kvbench/kvbench/schema"
)

// notTiers are the packages under replay/ that are no row of the table,
// and why.
var notTiers = map[string]string{
	"arena":      "the memory arena the ram and gpu rows share",
	"backend":    "the contract",
	"extent":     "the nvme row's --layout extent",
	"fault":      "a decorator that injects faults in tests",
	"ioengine":   "the I/O engines",
	"replaytest": "the conformance suite",
	"search":     "the search over replays",
	"setup":      "this package",
}

// TestRowPerTierPackage: every package under replay/ is a tier the table
// builds (this package imports it) or one of notTiers, and every name in
// the table is unique and has its help: a tier package without a row is
// caught here, not by a user.
func TestRowPerTierPackage(t *testing.T) {
	imported := map[string]bool{}
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(p, "github.com/kvbench/kvbench/replay/"); ok && !strings.Contains(rest, "/") {
				imported[rest] = true
			}
		}
	}
	dirs, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || notTiers[d.Name()] != "" {
			continue
		}
		if gos, _ := filepath.Glob(filepath.Join("..", d.Name(), "*.go")); len(gos) == 0 {
			continue
		}
		if !imported[d.Name()] {
			t.Errorf("replay/%s is no row of the factory table: add its row to replay/setup/factories.go (or, if it is not a tier, to notTiers here, with why)", d.Name())
		}
	}
	seen := map[string]bool{}
	for _, f := range factories {
		if f.Name == "" || f.Usage == "" || f.New == nil || seen[f.Name] || strings.ContainsAny(f.Name, ",= ") {
			t.Errorf("row %+v: want a unique name that --tier-map can spell, help and New", f)
		}
		seen[f.Name] = true
		if !strings.Contains(Usage(), f.Name+" ") {
			t.Errorf("Usage() does not list %s:\n%s", f.Name, Usage())
		}
	}
}

// TestMapTierThroughTable: --tier-map accepts a backend name only through
// the table: every row's name (where its check passes), no other, and a
// row added to the table is accepted and built with nothing else changed.
func TestMapTierThroughTable(t *testing.T) {
	env := &Env{}
	cfg := replay.DefaultConfig()
	for _, name := range []string{"ram", "nvme", "null"} {
		if err := env.MapTier(&cfg, schema.TierGPU, "Tier-0", name); err != nil || cfg.TierMap[schema.TierGPU] != name {
			t.Errorf("MapTier(Tier-0=%s): %v, tier map %v", name, err, cfg.TierMap)
		}
	}
	err := env.MapTier(&cfg, schema.TierGPU, "Tier-0", "s4")
	if err == nil || err.Error() != "--tier-map Tier-0=s4: want "+nameList() || !strings.Contains(nameList(), "ram, nvme, gpu, s3 or null") {
		t.Errorf("MapTier(Tier-0=s4) = %v", err)
	}

	saved := factories
	defer func() { factories = saved }()
	factories = append(slices.Clip(factories), row{Name: "void", Usage: "a copy of null under a new name",
		New: func(*builder) (backend.Backend, error) { return null.New(), nil }})
	if err := env.MapTier(&cfg, schema.TierGPU, "Tier-0", "void"); err != nil {
		t.Fatalf("a new row's name: %v", err)
	}
	if !strings.Contains(Usage(), "void  a copy of null") || !strings.HasSuffix(nameList(), " or void") {
		t.Errorf("the new row is not in the help: %q, %q", Usage(), nameList())
	}
	tiers, err := Build(context.Background(), env, &cfg, &replay.Plan{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tiers.Close()
	if b := tiers.Backends["void"]; b == nil || b.Caps().Name != "null" {
		t.Errorf("Build made %v", tiers.Backends)
	}
}

// TestMapTiers: the tier map is the pairs given, each through the table;
// a tier that is not one (naming all four tiers: Tier-3 is kvtrace
// --object-tier's), or a backend that is none, is named.
func TestMapTiers(t *testing.T) {
	cfg := replay.DefaultConfig()
	errs := (&Env{}).MapTiers(&cfg, []cli.KeyValue{{Key: "Tier-1", Value: "null"}, {Key: "Tier-9", Value: "ram"}, {Key: "Tier-2", Value: "tape"}})
	if cfg.TierMap != [schema.NumTiers]string{"", "null", ""} || len(errs) != 2 ||
		!strings.Contains(errs[0].Error(), "Tier-9 is not a tier (want Tier-0, Tier-1, Tier-2 or Tier-3)") || !strings.Contains(errs[1].Error(), "--tier-map Tier-2=tape: want ram, nvme") {
		t.Errorf("tier map %q, errors %v", cfg.TierMap, errs)
	}
	plan := &replay.Plan{UsedRows: [schema.NumTiers]int64{0, 3, 5}}
	plan.Used[schema.TierCPU], plan.Used[schema.TierNVMe] = true, true
	if err := CheckMapped(&cfg, plan); cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "the trace has 5 Tier-2 rows and --tier-map maps Tier-2 to nothing") {
		t.Errorf("CheckMapped: %v", err)
	}
	cfg.TierMap[schema.TierNVMe] = "nvme"
	if err := CheckMapped(&cfg, plan); err != nil {
		t.Errorf("CheckMapped of a mapped trace: %v", err)
	}
}

// nvmePlan is a scanned plan of peak bytes live on the nvme backend.
func nvmePlan(peak int64) *replay.Plan {
	p := &replay.Plan{Scanned: true, Peak: map[string]int64{"nvme": peak}, MaxObjectOf: map[string]int64{"nvme": 4096}}
	p.Used[schema.TierNVMe] = true
	return p
}

// TestBuildNVMe: the directory and extent layouts are made in a run
// directory of their own inside Dir, the result's tier path names it, and
// Close removes it (Keep keeps it, and says where); leftovers of earlier
// runs are warned about and left alone.
func TestBuildNVMe(t *testing.T) {
	for _, layout := range []string{"dir", "extent"} {
		for _, keep := range []bool{false, true} {
			t.Run(layout+"/keep="+strconv.FormatBool(keep), func(t *testing.T) {
				dir := t.TempDir()
				left := filepath.Join(dir, RunDirTool+"-4242-123456")
				os.Mkdir(left, 0o755)
				cfg := replay.DefaultConfig()
				var stderr bytes.Buffer
				tiers, err := Build(context.Background(), &Env{}, &cfg, nvmePlan(1<<20),
					Options{Dir: dir, Layout: layout, Keep: keep, Buffered: true, Prewrite: true, Stderr: &stderr})
				if err != nil {
					t.Fatal(err)
				}
				if len(tiers.Backends) != 1 || tiers.Backends["nvme"] == nil {
					t.Fatalf("backends %v: want nvme alone (the plan uses Tier-2 alone)", tiers.Backends)
				}
				var res schema.Result
				tiers.Describe(&res)
				paths := res.Host.TierPaths
				if len(paths) != 1 || !strings.HasPrefix(paths[0].Path, filepath.Join(dir, RunDirTool+"-")) || paths[0].Backend != "nvme" {
					t.Fatalf("tier paths %+v", paths)
				}
				if !strings.Contains(strings.Join(tiers.Warnings, "\n"), left) || !strings.Contains(stderr.String(), left) {
					t.Errorf("the leftover %s is not warned about: %q, %q", left, tiers.Warnings, stderr.String())
				}
				tiers.Close()
				_, err = os.Stat(paths[0].Path)
				if keep != (err == nil) {
					t.Errorf("keep %v: the run directory after Close: %v", keep, err)
				}
				if keep && !strings.Contains(stderr.String(), "--keep: the NVMe tier's objects are in "+paths[0].Path) {
					t.Errorf("--keep does not say where: %q", stderr.String())
				}
				if _, err := os.Stat(left); err != nil {
					t.Errorf("the leftover was touched: %v", err)
				}
			})
		}
	}
}

// TestBuildNotFit: an NVMe peak beyond the free space of Dir's file
// system stops Build before anything is made, with the input's exit
// status and the plan's options that make it fit.
func TestBuildNotFit(t *testing.T) {
	dir := t.TempDir()
	free := cli.FreeBytes(dir)
	if free <= 0 {
		t.Skip("the free space of the temp dir is unknown")
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "null", "nvme"}
	plan := nvmePlan(2 * free)
	plan.Used[schema.TierCPU] = true
	_, err := Build(context.Background(), &Env{}, &cfg, plan, Options{Dir: dir})
	if err == nil || cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "does not fit this machine") || !strings.Contains(err.Error(), "--size-scale") {
		t.Errorf("Build: %v; want an input error with the plan's advice (--size-scale)", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a refused Build left %d entries in Dir", len(ents))
	}
}

// TestBuildRAM: the RAM arena is the plan's peak (at least 1 MiB), the
// result names it, and an arena beyond the machine's memory is refused.
func TestBuildRAM(t *testing.T) {
	cfg := replay.DefaultConfig()
	plan := &replay.Plan{Scanned: true, Peak: map[string]int64{"ram": 8 << 20}}
	plan.Used[schema.TierCPU] = true
	tiers, err := Build(context.Background(), &Env{}, &cfg, plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tiers.Close()
	var res schema.Result
	tiers.Describe(&res)
	if c := tiers.Backends["ram"].Caps(); c.Capacity != 8<<20 || len(res.Host.TierPaths) != 1 || res.Host.TierPaths[0].Path != "anonymous mmap 8.00 MiB" {
		t.Errorf("capacity %d, paths %+v", c.Capacity, res.Host.TierPaths)
	}
	plan.Peak["ram"] = 1 << 50
	if _, err := Build(context.Background(), &Env{}, &cfg, plan, Options{}); err == nil || cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "--size-scale 1/") {
		t.Errorf("an arena of 1 PiB: %v", err)
	}
}

func TestParseGPUs(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want []int
		err  string
	}{
		{"", 2, []int{0, 1}, ""},
		{"1, 0", 2, []int{1, 0}, ""},
		{"", 0, nil, "reports no GPU"},
		{"2", 2, nil, `--gpus 2: "2" is not one of the 2 GPUs here (0 to 1)`},
		{"a", 2, nil, `"a" is not one of`},
	} {
		got, err := parseGPUs(tc.s, tc.n)
		if !slices.Equal(got, tc.want) || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("parseGPUs(%q, %d) = %v, %v; want %v, %q", tc.s, tc.n, got, err, tc.want, tc.err)
		}
	}
}

// TestGDSNeedsTiers: --gds without a gpu and an nvme tier is refused
// before anything loads; after a tier's check refused, it adds nothing.
func TestGDSNeedsTiers(t *testing.T) {
	cfg := replay.DefaultConfig()
	if err := (&Env{}).OpenGDS(&cfg); err == nil || !strings.Contains(err.Error(), "map one tier to gpu and one to nvme") {
		t.Errorf("--gds without a gpu tier: %v", err)
	}
	if err := (&Env{refused: true}).OpenGDS(&cfg); err != nil {
		t.Errorf("--gds after a refused tier: %v", err)
	}
}

// TestCheckMappedObjectTier: a trace with Tier-3 rows (kvtrace
// --object-tier) and no mapping for it is refused, naming the stand-in
// --fit would use (the nvme tier) and the object store.
func TestCheckMappedObjectTier(t *testing.T) {
	cfg := replay.DefaultConfig()
	plan := &replay.Plan{}
	plan.Used[schema.TierObject], plan.UsedRows[schema.TierObject] = true, 5
	err := CheckMapped(&cfg, plan)
	if err == nil || !strings.Contains(err.Error(), "5 Tier-3 rows") || !strings.Contains(err.Error(), "--tier-map Tier-3=nvme (or s3 with --s3-bucket, for an object store)") {
		t.Errorf("CheckMapped: %v", err)
	}
	cfg.TierMap[schema.TierObject] = "s3"
	if err := CheckMapped(&cfg, plan); err != nil {
		t.Errorf("Tier-3 mapped to s3: %v", err)
	}
}

func TestUnowned(t *testing.T) {
	given := func(flags ...string) func(string) (string, bool) {
		return func(f string) (string, bool) { return "v", slices.Contains(flags, f) }
	}
	var cfg replay.Config
	cfg.TierMap = [schema.NumTiers]string{"", "ram", "nvme"}
	o := Options{Layout: "dir"}
	errs := o.Unowned(&cfg, false, given("prewrite", "s3-bucket", "gpus", "start-barrier-timeout", "dir"))
	want := []string{"--prewrite v: only with --layout extent", "--s3-bucket v: only with an s3 tier", "--gpus v: only with a gpu tier", "--start-barrier-timeout v: only with --start-barrier"}
	if len(errs) != len(want) {
		t.Fatalf("%d errors, want %d: %v", len(errs), len(want), errs)
	}
	for i, w := range want {
		if !strings.HasPrefix(errs[i].Error(), w) {
			t.Errorf("error %d: %q, want %q", i, errs[i], w)
		}
	}
	o.Layout, cfg.TierMap[0], cfg.TierMap[2] = "extent", "gpu", "s3"
	if errs := o.Unowned(&cfg, true, given("prewrite", "s3-bucket", "gpus", "start-barrier-timeout")); len(errs) != 0 {
		t.Errorf("with their owners: %v", errs)
	}
	// A bucket S3 cannot name stops the run here, before its plan: it
	// had been refused by the s3 tier's setup, after --fit said what it
	// replayed with.
	o.S3 = S3Config{Bucket: "kv", Endpoint: "http://127.0.0.1:7070"}
	errs = o.Unowned(&cfg, true, given("s3-bucket"))
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `--s3-bucket "kv": not a bucket name`) {
		t.Errorf("--s3-bucket kv: %v", errs)
	}
	o.S3.Bucket = "kvbench"
	if errs := o.Unowned(&cfg, true, given("s3-bucket")); len(errs) != 0 {
		t.Errorf("--s3-bucket kvbench: %v", errs)
	}
	// No bucket yet (refused when the tier is made, if the trace uses
	// it): the other s3 flags are checked all the same.
	o.S3 = S3Config{Endpoint: "127.0.0.1:7070"}
	errs = o.Unowned(&cfg, true, given("s3-endpoint"))
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), `--s3-endpoint "127.0.0.1:7070": want a URL`) {
		t.Errorf("--s3-endpoint 127.0.0.1:7070 without --s3-bucket: %v", errs)
	}
}

func TestExitError(t *testing.T) {
	if ExitError(nil, "x: ") != nil {
		t.Error("nil: not nil")
	}
	in := ExitError(fmt.Errorf("row: %w", replay.ErrNoUsers), "run incomplete: ")
	if !errors.Is(in, replay.ErrNoUsers) || cli.ExitCode(in) != 2 || !strings.HasPrefix(in.Error(), "run incomplete: row: ") {
		t.Errorf("input: %v (exit %d)", in, cli.ExitCode(in))
	}
	if fail := ExitError(errors.New("disk"), ""); cli.ExitCode(fail) != 1 || fail.Error() != "disk" {
		t.Errorf("failure: %v (exit %d)", fail, cli.ExitCode(fail))
	}
}
