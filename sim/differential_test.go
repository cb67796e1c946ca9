package sim

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// The differential figures: kv-cache.py's trace-mode runs on configurations
// that the reference traces in testdata do not cover, kept as figures (a
// trace each would be megabytes). testdata/reference/differential/README.md
// says how they were made.
var (
	figuresPath = filepath.Join("..", "testdata", "reference", "differential", "figures.json")
	recordFrom  = flag.String("differential.record", "", "recompute "+figuresPath+
		" from the reference's traces and results in this directory (NAME.csv[.zst] and NAME.json for each run's name)")
)

// refRun is one kv-cache.py run of the figures file: its command line
// (without --io-trace-log and --output), the requests its results
// completed and the objects they counted on each tier at the end, and the
// trace's figures (tierFigures.metrics).
type refRun struct {
	Name     string             `json:"name"`
	Args     []string           `json:"args"`
	Requests int64              `json:"requests_completed"`
	Entries  refEntries         `json:"entries_at_end"`
	Figures  map[string]float64 `json:"figures"`
	// EntriesOnly marks a run whose figures are not held: a run of a few
	// seconds, made for its entries at the end, whose figures are noise.
	EntriesOnly bool `json:"entries_only,omitempty"`
}

// refEntries are the results' gpu_entries, cpu_entries and
// storage_entries.
type refEntries struct {
	GPU     int64 `json:"gpu"`
	CPU     int64 `json:"cpu"`
	Storage int64 `json:"storage"`
}

type refFigures struct {
	Source string   `json:"source"`
	Runs   []refRun `json:"runs"`
}

// tierFigures adds to shape's figures those of the tiers' contents, which a
// trace shows only by replaying its writes: the mean bytes on Tier-0 and
// Tier-1 over the rows after the first tenth (the tiers fill in it), and
// each tier's share of the decode reads.
type tierFigures struct {
	shape
	where      map[string]schema.Tier // each key's tier, by its last write
	held       [schema.NumTiers]int64 // bytes on each tier
	heldSum    [schema.NumTiers]float64
	heldRows   int64
	decodeRead [schema.NumTiers]int64
	allRows    int64 // rows of the whole run, for the first tenth
}

func newTierFigures(allRows int64) *tierFigures {
	return &tierFigures{shape: shape{keys: map[string]int64{}}, where: map[string]schema.Tier{}, allRows: allRows}
}

func (f *tierFigures) add(r *schema.Record) {
	if r.Op != schema.OpDelete {
		// kv-cache.py's traces have no Delete rows (the mlperf dialect's).
		f.shape.add(r)
	}
	k := string(r.Key)
	switch {
	case r.Op == schema.OpWrite:
		if t, ok := f.where[k]; ok {
			f.held[t] -= r.Size
		}
		f.where[k] = r.Tier
		f.held[r.Tier] += r.Size
	case r.Op == schema.OpDelete:
		if t, ok := f.where[k]; ok {
			f.held[t] -= r.Size
			delete(f.where, k)
		}
	case r.Op == schema.OpRead && r.Phase == schema.PhaseDecode:
		f.decodeRead[r.Tier]++
	}
	if f.rows > f.allRows/10 {
		for t := range f.held {
			f.heldSum[t] += float64(f.held[t])
		}
		f.heldRows++
	}
}

func (f *tierFigures) metrics() map[string]float64 {
	m := f.shape.metrics()
	var reads int64
	for _, n := range f.decodeRead {
		reads += n
	}
	for t := range schema.Tier(schema.TierNVMe + 1) {
		if t < schema.TierNVMe {
			m["mean GiB on "+t.String()] = f.heldSum[t] / float64(max(1, f.heldRows)) / GiB
		}
		m["share of decode reads on "+t.String()] = float64(f.decodeRead[t]) / float64(max(1, reads))
	}
	return m
}

// configFromArgs applies a kv-cache.py command line to DefaultConfig: the
// options the figures' runs use.
func configFromArgs(tb testing.TB, args []string) Config {
	tb.Helper()
	cfg := DefaultConfig()
	// kv-cache.py reads --config's file before it looks at the other
	// options, which config.yaml does not set: apply it first.
	for i, a := range args {
		if a == "--config" && i+1 < len(args) {
			path := filepath.Join(filepath.Dir(figuresPath), filepath.Base(args[i+1]))
			f, err := os.Open(path)
			if err != nil {
				tb.Fatal(err)
			}
			err = LoadYAML(f, path, &cfg)
			f.Close()
			if err != nil {
				tb.Fatal(err)
			}
		}
	}
	for i := 0; i < len(args); i++ {
		name := strings.TrimPrefix(args[i], "--")
		val := func() string {
			i++
			if i >= len(args) {
				tb.Fatalf("%s: no value", args[i-1])
			}
			return args[i]
		}
		num := func() float64 {
			v, err := strconv.ParseFloat(val(), 64)
			if err != nil {
				tb.Fatalf("--%s: %v", name, err)
			}
			return v
		}
		switch name {
		case "config":
			val() // applied above
		case "model":
			cfg.Model = val()
		case "num-users":
			cfg.NumUsers = int(num())
		case "duration":
			cfg.Duration = time.Duration(num()) * time.Second
		case "gpu-mem-gb":
			cfg.GPUMemGB = num()
		case "num-gpus":
			cfg.NumGPUs = int(num())
		case "tensor-parallel":
			cfg.TensorParallel = int(num())
		case "cpu-mem-gb":
			cfg.CPUMemGB = num()
		case "storage-capacity-gb":
			cfg.StorageCapacityGB = num()
		case "generation-mode":
			cfg.GenerationMode = val()
		case "seed":
			cfg.Seed = int64(num())
		case "disable-prefix-caching":
			cfg.DisablePrefixCaching = true
		case "disable-multi-turn":
			cfg.DisableMultiTurn = true
		case "enable-rag":
			cfg.EnableRAG = true
		case "rag-num-docs":
			cfg.RAGNumDocs = int(num())
		case "prefill-only":
			cfg.PrefillOnly = true
		case "decode-only":
			cfg.DecodeOnly = true
		case "precondition":
			cfg.Precondition = true
		case "precondition-size-gb":
			cfg.PreconditionSizeGB = num()
		case "precondition-threads":
			cfg.PreconditionThreads = int(num())
		case "enable-autoscaling":
			cfg.EnableAutoscaling = true
		case "autoscaler-mode":
			cfg.AutoscalerMode = val()
		case "performance-profile":
			cfg.PerformanceProfile = val()
		case "max-requests":
			cfg.MaxRequests = int(num())
		case "use-burst-trace":
			cfg.UseBurstTrace = true
		case "burst-trace-path":
			cfg.BurstTracePath = filepath.Join("reqtrace", "testdata", filepath.Base(val()))
		case "trace-speedup":
			cfg.TraceSpeedup = num()
		case "replay-cycles":
			cfg.ReplayCycles = int(num())
		case "dataset-path":
			cfg.DatasetPath = filepath.Join("reqtrace", "testdata", filepath.Base(val()))
		case "request-rate":
			cfg.RequestRate = num()
		case "max-conversations":
			cfg.MaxConversations = int(num())
		default:
			tb.Fatalf("figures: option %s is not mapped", args[i])
		}
	}
	if err := cfg.Validate(); err != nil {
		tb.Fatalf("%v: %v", args, err)
	}
	return cfg
}

// residual says why a figure of a run is known to stay apart from
// kv-cache.py's, or "" where none is: the test logs such a figure instead
// of failing on it.
func residual(run, figure string) string {
	// kv-cache.py pre-populates a decode-only run with one thread per CPU,
	// and the last thread to finish walks a GPU snapshot that the others
	// made stale, leaking a CPU reservation for each object they demoted
	// meanwhile: the CPU tier ends nearly empty (1 object in 4 of its 5
	// runs of this configuration, 9 in one, of the 23 it holds without
	// the race). kvtrace leaks one reservation in each demotion while
	// pre-populating and ends with about 8
	// (TestDifferentialPrepopulation); nothing moves afterwards.
	if strings.HasPrefix(run, "dsv3_u20_") && strings.HasSuffix(figure, " on Tier-1") {
		return "pre-population's CPU reservation leak, modelled on average (TestDifferentialPrepopulation)"
	}
	return ""
}

// figureOff returns how far kvtrace's figure (the mean over the samples)
// is from kv-cache.py's (one run), relatively, and whether that is too
// far: over 15 % (as TestShapeMatchesReference), except that a share of
// rows or reads may also be 0.015 off (a small share is noisy).
func figureOff(name string, got, want float64) (float64, bool) {
	dev := math.Abs(got-want) / math.Max(math.Abs(want), 1e-9)
	if strings.HasPrefix(name, "share of ") && math.Abs(got-want) <= 0.015 {
		return dev, false
	}
	return dev, dev > 0.15
}

// TestDifferentialFigures runs kvtrace on the configurations of
// kv-cache.py's differential runs (other models, seeds and user counts,
// tensor parallelism, a GPU tier above a small CPU tier, a bounded NVMe
// tier at up to 100 users, RAG, prefill-only, decode-only,
// preconditioning, a BurstGPT and a ShareGPT replay, --max-requests,
// realistic and fast generation, config.yaml's keys) and holds the mean of
// shapeSamples samples of each run's dynamics to kv-cache.py's figures.
func TestDifferentialFigures(t *testing.T) {
	if *recordFrom != "" {
		recordFigures(t, *recordFrom)
	}
	raw, err := os.ReadFile(figuresPath)
	if err != nil {
		t.Fatal(err)
	}
	var ref refFigures
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Runs) == 0 {
		t.Fatal("no runs in " + figuresPath)
	}
	for _, run := range ref.Runs {
		t.Run(run.Name, func(t *testing.T) {
			if run.EntriesOnly {
				t.Skip("only its entries at the end are held (TestDifferentialPrepopulation)")
			}
			got := map[string]float64{}
			var requests float64
			for i := range shapeSamples {
				cfg := configFromArgs(t, run.Args)
				cfg.dynamicsSalt = uint64(i)
				f, n := simFigures(t, &cfg)
				requests += float64(n) / shapeSamples
				for name, v := range f {
					got[name] += v / shapeSamples
				}
			}
			if dev := math.Abs(requests-float64(run.Requests)) / float64(run.Requests); dev > 0.1 {
				t.Errorf("requests: kvtrace %.0f (completed and in flight), kv-cache.py %d: off by %.0f%% (> 10%%)", requests, run.Requests, 100*dev)
			}
			for _, name := range slices.Sorted(maps.Keys(run.Figures)) {
				w, g := run.Figures[name], got[name]
				dev, bad := figureOff(name, g, w)
				t.Logf("%-36s ref %12.4f  kvtrace %12.4f  (%+.1f%%)", name, w, g, 100*(g-w)/math.Max(math.Abs(w), 1e-9))
				if why := residual(run.Name, name); why != "" {
					if bad {
						t.Logf("  known residual: %s", why)
					}
					continue
				}
				if bad {
					t.Errorf("%s: kvtrace %.4f, kv-cache.py %.4f: off by %.0f%% (> 15%%)", name, g, w, 100*dev)
				}
			}
		})
	}
}

// TestDifferentialPrepopulation: a decode-only run with a GPU tier moves
// no object after its pre-population (decode reads never promote, and it
// writes nothing), so the objects kv-cache.py's results count on the CPU
// tier at the end are those its pre-population left there. Its threads
// leak CPU reservations while they fill the tiers, and the CPU tier ends
// holding at most 9 of the 23 objects its watermark allows (1 in 4 of
// the figures' 5 runs). kvtrace's reference accounting leaks too, on
// average; exact accounting keeps the 23. Without the leak in the CPU
// tier (only a bounded NVMe tier's was modelled), both kept 23.
func TestDifferentialPrepopulation(t *testing.T) {
	raw, err := os.ReadFile(figuresPath)
	if err != nil {
		t.Fatal(err)
	}
	var ref refFigures
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	var most int64 = -1
	var args []string
	for _, run := range ref.Runs {
		if strings.HasPrefix(run.Name, "dsv3_u20_") {
			most, args = max(most, run.Entries.CPU), run.Args
		}
	}
	if most < 0 {
		t.Fatal("no decode-only runs with a GPU tier in " + figuresPath)
	}
	for _, mode := range []string{AccountingReference, AccountingExact} {
		var sum float64
		for i := range shapeSamples {
			cfg := configFromArgs(t, args)
			cfg.NVMeAccounting, cfg.dynamicsSalt = mode, uint64(i)
			res, err := Run(context.Background(), &cfg, func(*schema.Record) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			sum += float64(res.Summary.CacheStats.CPUEntries)
		}
		mean := sum / shapeSamples
		t.Logf("%s accounting: %.1f objects on the CPU tier at the end; kv-cache.py at most %d", mode, mean, most)
		switch {
		case mode == AccountingReference && mean > float64(most):
			t.Errorf("reference accounting: %.1f objects on the CPU tier at the end, kv-cache.py's runs at most %d", mean, most)
		case mode == AccountingExact && mean != 23:
			t.Errorf("exact accounting: %.1f objects on the CPU tier at the end, want the 23 its watermark holds", mean)
		}
	}
}

// simFigures runs cfg and returns its figures and the requests the
// reference would count completed (the completed and those in flight at
// the end, which it finishes and counts).
func simFigures(tb testing.TB, cfg *Config) (map[string]float64, int64) {
	tb.Helper()
	// A first run counts the rows (those of the mlperf dialect, without
	// Delete rows), for the figures' first tenth.
	var rows int64
	count := func(r *schema.Record) error {
		if r.Op != schema.OpDelete {
			rows++
		}
		return nil
	}
	if _, err := Run(context.Background(), cfg, count); err != nil {
		tb.Fatal(err)
	}
	f := newTierFigures(rows)
	res, err := Run(context.Background(), cfg, func(r *schema.Record) error { f.add(r); return nil })
	if err != nil {
		tb.Fatal(err)
	}
	n := res.RequestsCompleted + res.Kvbench.RequestsInFlight
	f.requests = n
	return f.metrics(), n
}

// recordFigures recomputes the figures file from the reference's traces
// and results in dir, for the runs the file names.
func recordFigures(t *testing.T, dir string) {
	raw, err := os.ReadFile(figuresPath)
	if err != nil {
		t.Fatal(err)
	}
	var ref refFigures
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	for i := range ref.Runs {
		run := &ref.Runs[i]
		var results struct {
			Requests int64 `json:"requests_completed"`
			Summary  struct {
				CacheStats struct {
					GPU     int64 `json:"gpu_entries"`
					CPU     int64 `json:"cpu_entries"`
					Storage int64 `json:"storage_entries"`
				} `json:"cache_stats"`
			} `json:"summary"`
		}
		raw, err := os.ReadFile(filepath.Join(dir, run.Name+".json"))
		if err == nil {
			err = json.Unmarshal(raw, &results)
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, run.Name+".csv")
		if _, err := os.Stat(path); err != nil {
			path += ".zst"
		}
		var all int64
		readTrace(t, path, func(*schema.Record) { all++ })
		f := newTierFigures(all)
		f.requests = results.Requests
		readTrace(t, path, f.add)
		run.Requests = results.Requests
		cs := results.Summary.CacheStats
		run.Entries = refEntries{GPU: cs.GPU, CPU: cs.CPU, Storage: cs.Storage}
		run.Figures = map[string]float64{}
		for name, v := range f.metrics() {
			run.Figures[name] = math.Round(v*1e6) / 1e6
		}
	}
	out, err := json.MarshalIndent(ref, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(figuresPath, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d runs in %s", len(ref.Runs), figuresPath)
}

// readTrace calls add with each row of the trace at path.
func readTrace(tb testing.TB, path string, add func(*schema.Record)) {
	tb.Helper()
	r, err := trace.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	var rec schema.Record
	for {
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			tb.Fatal(err)
		}
		add(&rec)
	}
}
