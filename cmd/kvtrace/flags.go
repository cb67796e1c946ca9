package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/trace"
	"github.com/spf13/pflag"
)

// simUsage is the help of a simulation (kvtrace [options]); NewFlagSet
// appends the Options section.
const simUsage = `kvtrace: simulate an LLM serving system's KV cache and write its I/O trace.

Usage:
  kvtrace [options] [-o TRACE]              simulate; the trace goes to TRACE or stdout
  kvtrace inspect [--json] TRACE...         summarise traces, kvbench's or kv-cache.py's
  kvtrace models [--json] [--config FILE]   list the models and their KV bytes per token
  kvtrace export --to fio|sai3 -o DIR TRACE   fio iolog v3 + job file, or a sai3-bench op-log
  kvtrace help [COMMAND]                    this help, or a command's (kvtrace COMMAND --help)

kvtrace takes every option of the reference, MLPerf Storage's kv-cache.py,
with the same name, meaning and default: a kv-cache.py command line runs with
only the program name replaced, unique prefixes of the options included
(--num-user 10, as kv-cache.py's argparse takes them). It simulates in
virtual time, so --duration 600 takes well under a second, and the same
options give the same trace, byte for byte. Where it differs:

  --seed            defaults to 0; kv-cache.py draws a random seed when none
                    is given and never repeats a trace.
  -o, --io-trace-log
                    is where the trace goes, always ("-" is stdout); a name
                    ending in .zst is compressed with zstd: by kvbench's row
                    encoder (the fastest; about 1.5x the size of kv-cache.py's
                    level 3), or at --zstd-level 1 to 22 by the zstd library;
                    --zstd compresses whatever the name, stdout too (a pipe
                    to kvreplay then tells a cut trace from its end).
  --output          writes the statistics JSON only when given. Given
                    without --io-trace-log while stdout is a terminal (a
                    kv-cache.py command line without trace mode), it is
                    the run's only output: the trace is not written, and
                    kvtrace says so on stderr.
  --format          kvbench (default) adds Delete rows and the Request, QoS,
                    User and Tokens columns; mlperf writes exactly kv-cache.py's dialect.
  --config          reads kv-cache.py's config.yaml (strict: unknown keys are
                    errors); options on the command line override it.
  real-I/O options  --cache-dir, --max-concurrent-allocs, --enable-latency-tracing
                    and --log-level are checked as kv-cache.py checks them
                    and have no effect on a trace; the run records which were
                    given. --performance-profile changes no trace either: it
                    picks the storage_health criteria of --output's
                    statistics, as in kv-cache.py's trace mode.
                    --validation-trace and --xlsx-output are accepted and not
                    applied: kv-cache.py's results carry a validation block
                    and it writes an Excel summary, in trace mode too;
                    kvtrace writes neither (kvreport --format xlsx renders
                    --output's statistics).
  --enable-autoscaling
                    runs kv-cache.py's autoscaler, which changes no load (its
                    users are made once) but fills the statistics' autoscaling
                    fields; with --autoscaler-mode capacity it ends the run
                    once the throughput stops rising, as kv-cache.py's does
                    (said on stderr).

Where kv-cache.py crashes, would make no sense in virtual time, or ignores
its configuration, and where kvtrace chose otherwise, kvtrace departs from
it; a run that meets a departure says so once, on stderr and in the sidecar
("departs from kv-cache.py: ..."):

  - a user whose conversation the 1000-state registry forgot (from about
    600 users) starts a new one; kv-cache.py's user thread dies there.
  - --dataset-path with --disable-multi-turn replays; kv-cache.py's workers
    die at their first request.
  - --use-burst-trace skips rows with missing fields (kv-cache.py's reader
    stops at the first) and rows with a nan or inf timestamp or a negative
    count (it keeps them; before an inf timestamp's row, under
    --trace-speedup above 0, it sleeps to the run's end), and drops a byte
    order mark (with it, kv-cache.py reads every timestamp as 0).
  - unpaced requests (--trace-speedup 0) wait while 2 x the workers are
    queued; kv-cache.py's queue has no bound.
  - RAG chunks are drawn from the Python random stream, not numpy's.
  - a BurstGPT or ShareGPT request generates no longer than --duration:
    its decode reads stop there (kv-cache.py makes them all first).
  - --config's qos_profiles set the queue priorities and SLA targets;
    kv-cache.py keeps its built-in ones there.
  - with --gpu-mem-gb 0, an object of 0 bytes goes to Tier-1 or below;
    kv-cache.py writes it to Tier-0.
  - a Mooncake request's last, partial block is written whole (3 % more
    bytes on Mooncake's conversation trace).

One more applies to nearly every run, so no run says it: requests still
generating when the run ends are counted in flight
(requests_in_flight_at_end), not completed; kv-cache.py finishes them while
it joins its threads and counts them (3-15 % more completions).

Under --storage-capacity-gb, --nvme-accounting reference (the default)
models kv-cache.py's NVMe accounting as its threads run it: demotions
that race (that come close after another request's) leak reservations, so
the tier evicts early and serves about half the Tier-2 reads its rule
alone (--nvme-accounting exact) would at 120 requests a second, nearly all
of them at a few a second (realistic mode).
Below a GPU tier the CPU tier leaks alike and evicts early too (a
decode-only run's pre-population, by one thread per CPU in kv-cache.py,
leaves it about a third full). --output counts the races
(raced_nvme_reservations, raced_cpu_reservations).

Prefix caching works as in kv-cache.py: its kv_system_* objects are never
written, so it adds no rows to the trace; it only shortens request contexts
and counts hits in the statistics.

Request traces (--request-trace, kvbench's own): a Mooncake-style JSONL's
hash ids may stand for blocks of any size (--request-trace-block-tokens, or
each record's input apportioned over its ids, as the sidecar notes); a trace
without arrival times (ShareGPT) arrives at --request-rate, by default 20
requests/s, said on stderr; no request generates for longer than --duration,
and an output beyond 131,072 tokens is capped and reported with its line.
A Mooncake or Azure trace's requests arrive at their own times (one stamped
earlier than the one before arrives with it; BurstGPT's are paced as
kv-cache.py sleeps them); a trace shorter than --duration is replayed again
(--replay-cycles 0); a Mooncake-style run gives its prefix blocks' hit rate:
the sidecar notes each. Requests the workers (min(--num-users, 500)) had not
taken when the run ended, 1 % of the trace's or more, are warned of.
--arrival fixed|poisson|gamma paces synthetic users, --dataset-path and
untimed traces as an open process (--arrival-cv, --arrival-seed). --slo-ms
adds SLO attainment to the statistics, --latency-dump a JSON line per
completed request; requests still generating at the end are not completed.

Examples:
  # The MLPerf Storage 8B workload: 150 users for 10 minutes, compressed.
  kvtrace --model llama3.1-8b --num-users 150 --duration 600 --generation-mode none --gpu-mem-gb 0 --cpu-mem-gb 4 -o run.csv.zst

  # A kv-cache.py command line with only the program name replaced.
  kvtrace --config config.yaml --model llama3.1-70b-instruct --num-users 70 --duration 300 --gpu-mem-gb 0 --cpu-mem-gb 0 --generation-mode none --seed 42 --io-trace-log llama70b.csv.zst --output results.json

  # kv-cache.py's own trace dialect, for tools that read it.
  kvtrace --format mlperf --model deepseek-v3 --num-users 50 --duration 30 -o ds.csv

  # Simulate, replay on NVMe and report in one pipeline.
  kvtrace --model llama3.1-8b --num-users 50 --duration 20 --generation-mode none --gpu-mem-gb 0 --zstd | kvreplay --size-scale 1/1024 --dir /mnt/nvme - | kvreport -
`

// simOptions is a parsed and validated simulation command line.
type simOptions struct {
	// Config is sim.DefaultConfig with --config's file and then the options
	// given applied; it has passed Validate. Config.NoEffect lists what was
	// given and has no effect on a trace.
	Config sim.Config
	// TracePath is where the trace goes (--io-trace-log, -o): "-" is stdout.
	TracePath string
	// TraceGiven says that --io-trace-log (-o) was given: kv-cache.py's
	// command lines without it ask for statistics only (--output).
	TraceGiven bool
	// OutputPath is where the statistics JSON goes (--output); "" for none.
	OutputPath string
	// Format is the trace dialect: kvbench or mlperf.
	Format string
	// LatencyDump is where --latency-dump writes a JSON line per
	// completed request; "" for none.
	LatencyDump string
	// Level is the zstd level (--zstd-level) of a compressed trace.
	Level int
	// Zstd compresses the trace whatever its name (--zstd): standard
	// output, or a file not named .zst.
	Zstd bool
	// LevelGiven says that --zstd-level was given.
	LevelGiven bool
	// ConfigPath is --config's file, "" when none was given.
	ConfigPath string
	// AllowSystem lets outputs lie under the system directories
	// (--allow-system-path); Force lets the sidecar replace a file that is
	// not a trace's sidecar (--force).
	AllowSystem, Force bool
	// Accepted for kv-cache.py compatibility, no effect on a trace.
	LogLevel        string
	ValidationTrace string
	XLSXOutput      string
	// Warnings are Config.Warnings(), for the caller to print on stderr.
	Warnings []string
	// MLPerfOpen is the warning, among Warnings, that options given beside
	// --mlperf-option change its workload: the trace's sidecar notes it too,
	// for kvreport's MLPerf aggregation to find (none for the CLOSED Option).
	MLPerfOpen []string
	// Args are the positional arguments, for the caller to reject.
	Args []string
	// Help says that --help was given: the usage has been printed and the
	// error is pflag.ErrHelp.
	Help bool
}

// Defaults of kvtrace's own options.
const (
	defaultFormat    = "kvbench"
	defaultZstdLevel = 0 // kvbench's row encoder
)

// realIOOnly returns the options that only shape kv-cache.py's real I/O,
// with why they have no effect on a trace; given ones are recorded in
// Config.NoEffect, in this order.
func realIOOnly() []struct{ flag, why string } {
	return []struct{ flag, why string }{
		{"log-level", "no effect on a trace (kvtrace prints no log)"},
		{"cache-dir", "no effect on a trace (real-I/O only in the reference)"},
		{"performance-profile", "no effect on a trace: it picks the storage_health criteria of --output's statistics (latency or throughput), as in kv-cache.py's trace mode"},
		{"validation-trace", "not applied: kv-cache.py adds a validation block to its results (its cache hit rate compared with the file's), in trace mode too; kvtrace's --output has none"},
		{"max-concurrent-allocs", "no effect on a trace: kv-cache.py's semaphore around its allocations holds a writer back only while others write, and a simulated write takes no time, as in kv-cache.py's trace mode (recorded in the sidecar's config.max_concurrent_allocs, which kvreplay applies to its writes)"},
		{"xlsx-output", "not written: kv-cache.py writes its results as an Excel (or CSV) summary, in trace mode too; kvtrace does not (kvreport --format xlsx renders --output's statistics)"},
		{"enable-latency-tracing", "no effect on a trace (real-I/O only in the reference)"},
	}
}

// parseSimFlags parses a simulation command line: every option of
// kv-cache.py (reference section 4) and kvtrace's own. It starts from
// sim.DefaultConfig, applies --config's file, then the options given on the
// command line (so they override the file), and validates the result. All
// problems are reported at once, one per line, in an error marked with
// cli.Input. Usage errors in the syntax (an unknown option, a malformed
// value) stop at the first, as pflag does.
func parseSimFlags(args []string, stderr io.Writer) (*simOptions, error) {
	def := sim.DefaultConfig()
	fs := cli.NewFlagSet("kvtrace", simUsage, stderr)
	cli.AddStandard(fs)

	var (
		o        simOptions
		fv       = def // the options' values; applied where given
		duration = cli.Seconds(def.Duration)
		keyStyle string
		epoch    int64
		mlperf   int
	)
	// kv-cache.py's options, in its order.
	fs.StringVar(&o.LogLevel, "log-level", "INFO", "kv-cache.py's log level: DEBUG, INFO, WARNING, ERROR or CRITICAL (no effect)")
	fs.StringVar(&fv.Model, "model", def.Model, "model key (see kvtrace models; --config can add models)")
	fs.IntVar(&fv.NumUsers, "num-users", def.NumUsers, "simulated users, 1 to 100000")
	fs.Var(&duration, "duration", "simulated time: seconds (600) or a duration (10m), 1 s to 24 h")
	fs.Float64Var(&fv.GPUMemGB, "gpu-mem-gb", def.GPUMemGB, "GPU tier GiB per GPU (the tier is --num-gpus times this); 0 disables it")
	fs.IntVar(&fv.NumGPUs, "num-gpus", def.NumGPUs, "GPUs in the tensor-parallel group; multiplies the GPU tier")
	fs.IntVar(&fv.TensorParallel, "tensor-parallel", def.TensorParallel, "tensor-parallel degree, 1 to --num-gpus: object sizes are divided by it")
	fs.Float64Var(&fv.CPUMemGB, "cpu-mem-gb", def.CPUMemGB, "CPU RAM tier GiB; 0 disables it")
	fs.StringVar(&fv.CacheDir, "cache-dir", "", "kv-cache.py's NVMe directory (checked, no effect)")
	fs.StringVar(&fv.GenerationMode, "generation-mode", def.GenerationMode, "time per generated token: none (0), fast (2 ms) or realistic (30 ms)")
	fs.StringVar(&fv.PerformanceProfile, "performance-profile", def.PerformanceProfile, "kv-cache.py's pass/fail criteria: latency or throughput (no effect on the trace; --output's storage_health criteria)")
	fs.BoolVar(&fv.DisableMultiTurn, "disable-multi-turn", false, "no multi-turn conversations (no reads of earlier turns)")
	fs.BoolVar(&fv.DisablePrefixCaching, "disable-prefix-caching", false, "no system-prompt prefix caching")
	fs.BoolVar(&fv.EnableRAG, "enable-rag", false, "add the RAG workload: document chunks written once and read by queries")
	fs.IntVar(&fv.RAGNumDocs, "rag-num-docs", def.RAGNumDocs, "RAG documents to ingest")
	fs.BoolVar(&fv.EnableAutoscaling, "enable-autoscaling", false, "kv-cache.py's autoscaler: changes no load, fills the statistics' autoscaling fields; in capacity mode it ends the run once the throughput stops rising")
	fs.StringVar(&fv.AutoscalerMode, "autoscaler-mode", def.AutoscalerMode, "autoscaler strategy: qos (scales the user count it reports) or capacity (ends the run at the throughput's peak)")
	fs.Float64Var(&fv.TargetSaturation, "target-saturation", def.TargetSaturation, "autoscaler's target storage saturation, 0 to 1 (qos mode; a trace's storage latencies are 0, so it only scales up)")
	fs.BoolVar(&fv.UseBurstTrace, "use-burst-trace", false, "replay BurstGPT request arrivals and token counts from --burst-trace-path")
	fs.StringVar(&fv.BurstTracePath, "burst-trace-path", def.BurstTracePath, "BurstGPT CSV: a file, a directory of *.csv or a glob")
	fs.StringVar(&o.ValidationTrace, "validation-trace", "", "kv-cache.py's real-trace validation JSON (not applied: no validation block in --output)")
	fs.StringVar(&fv.DatasetPath, "dataset-path", "", "ShareGPT JSON to replay (takes precedence over --use-burst-trace); - reads standard input")
	fs.IntVar(&fv.MaxConversations, "max-conversations", def.MaxConversations, "ShareGPT conversations to load")
	fs.StringVar(&o.OutputPath, "output", "", "write the statistics JSON to this file, - for stdout (kv-cache.py's default name has the time in it; kvtrace writes none unless given)")
	fs.Int64Var(&fv.Seed, "seed", def.Seed, "random seed; the same seed gives the same trace (kv-cache.py's default is a random seed)")
	fs.IntVar(&fv.MaxConcurrentAllocs, "max-concurrent-allocs", 0, "kv-cache.py's limit on concurrent writes, 0 unlimited (no effect)")
	fs.Float64Var(&fv.RequestRate, "request-rate", 0, "ShareGPT requests per second, 0 unlimited (ShareGPT replay only, as in kv-cache.py)")
	fs.IntVar(&fv.MaxRequests, "max-requests", 0, "stop after this many completed requests; 0 runs for --duration")
	fs.StringVar(&o.XLSXOutput, "xlsx-output", "", "kv-cache.py's Excel summary (not written; kvreport --format xlsx renders --output)")
	fs.StringVar(&o.ConfigPath, "config", "", "kv-cache.py config.yaml to apply before these options")
	fs.Float64Var(&fv.StorageCapacityGB, "storage-capacity-gb", def.StorageCapacityGB, "NVMe tier GiB; 0 unlimited (as in kv-cache.py's trace mode)")
	fs.BoolVar(&fv.ObjectTier, "object-tier", false, "kvbench's: add Tier-3, unbounded object storage (S3), below the NVMe tier --storage-capacity-gb bounds: what it evicts moves to Tier-3 and is read from there (kvreplay --tier-map Tier-3=s3); the trace then has four tiers")
	fs.BoolVar(&fv.Precondition, "precondition", false, "fill the NVMe tier with 2048-token objects before the run")
	fs.Float64Var(&fv.PreconditionSizeGB, "precondition-size-gb", def.PreconditionSizeGB, "GiB to precondition; 0 is twice --storage-capacity-gb")
	fs.IntVar(&fv.PreconditionThreads, "precondition-threads", 0, "kv-cache.py's preconditioning threads (only whether it is 1: see --nvme-accounting)")
	fs.Float64Var(&fv.TraceSpeedup, "trace-speedup", def.TraceSpeedup, "BurstGPT time scale: 2 replays twice as fast, 0 without gaps")
	fs.IntVar(&fv.ReplayCycles, "replay-cycles", def.ReplayCycles, "passes over a BurstGPT, ShareGPT or --request-trace trace; 0 loops until --duration (a pipe is read once, its requests kept in memory)")
	fs.BoolVar(&fv.PrefillOnly, "prefill-only", false, "a disaggregated prefill node: writes, no decode reads")
	fs.BoolVar(&fv.DecodeOnly, "decode-only", false, "a disaggregated decode node: reads of pre-populated objects")
	fs.StringVarP(&o.TracePath, "io-trace-log", "o", "-", "write the trace to this file, - for stdout; a .zst name (or --zstd) is compressed")
	fs.Bool("enable-latency-tracing", false, "kv-cache.py's bpftrace device latency tracing (no effect)")

	// kv-cache.py's argparse takes the prefixes unique among its options:
	// kvtrace's own do not make them ambiguous (--request is --request-rate).
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "version" && f.Name != "object-tier" {
			_ = fs.SetAnnotation(f.Name, cli.PrefixPreferred, nil)
		}
	})

	// kvtrace's own.
	fs.StringVar(&o.Format, "format", defaultFormat, "trace dialect: kvbench, or mlperf for exactly kv-cache.py's")
	fs.BoolVar(&o.Zstd, "zstd", false, "compress the trace with zstd whatever -o names: standard output too (a pipe to kvreplay: a kvtrace killed between rows is then a cut trace, an error, where plain CSV just ends)")
	fs.IntVar(&o.Level, "zstd-level", defaultZstdLevel, "zstd level of a compressed trace (.zst or --zstd): 0 is kvbench's row encoder (fastest), 1 to 22 the zstd library's (3 is kv-cache.py's: a smaller file, written more slowly)")
	fs.StringVar(&keyStyle, "key-style", "", "object keys: kvbench, or mlperf for kv-cache.py's conv_<user>_<epoch ms> (default: follows --format)")
	fs.Int64Var(&epoch, "epoch-base", def.EpochBase.Unix(), "Unix seconds at virtual time 0, for mlperf timestamps and keys")
	fs.StringVar(&fv.RequestTrace, "request-trace", "", "turn a public request trace into KV I/O (instead of synthetic users); - reads standard input")
	fs.StringVar(&fv.RequestTraceFormat, "request-trace-format", "", "--request-trace's format: mooncake, azure, burstgpt or sharegpt (default: detected)")
	fs.StringVar(&fv.NVMeAccounting, "nvme-accounting", def.NVMeAccounting, "the accounting of a bounded NVMe tier and of the CPU tier below a GPU tier: reference (kv-cache.py's, whose racing workers leak reservations and evict early) or exact (its rule alone)")
	fs.BoolVar(&o.AllowSystem, cli.AllowSystemPathFlag, false, "let outputs lie under a system directory (/etc, /usr, /dev, ...), which kvtrace refuses by default")
	fs.BoolVar(&o.Force, "force", false, "let the trace's sidecar (TRACE.meta.json) replace an existing file that is not a trace sidecar")
	fs.IntVar(&mlperf, "mlperf-option", 0, mlperfOptionHelp())
	fs.StringVar(&fv.RequestTraceTimeUnit, "request-trace-time-unit", "", "unit of a Mooncake-style --request-trace's timestamps: s, ms, us or ns (default: found from the first; noted in the sidecar)")
	sloMS := fs.String("slo-ms", "", "add SLO attainment to the statistics: the share of completed requests whose end-to-end latency is within MS, for all requests (500) and/or by QoS class (interactive=50,batch=2000)")
	fs.StringVar(&o.LatencyDump, "latency-dump", "", "write one JSON line per completed request to this file (- for stdout): id, user, qos, phase, arrival and completion times, e2e and storage latency, tokens, within_slo")
	fs.StringVar(&fv.Arrival, "arrival", "", "an open arrival process at --request-rate: fixed, poisson or gamma, for synthetic users (their rate is their think times' unless --request-rate), --dataset-path and untimed request traces; none is the reference's think times and even spacing")
	fs.Float64Var(&fv.ArrivalCV, "arrival-cv", def.ArrivalCV, "--arrival gamma's coefficient of variation of the gaps (1 is Poisson's; above is burstier)")
	fs.Int64Var(&fv.ArrivalSeed, "arrival-seed", 0, "varies the arrivals alone: their generator is seeded by --seed and this, apart from the workload's")
	fs.IntVar(&fv.RequestTraceBlockTokens, "request-trace-block-tokens", 0, "tokens a Mooncake-style --request-trace's hash id stands for (default Mooncake's 512); records whose ids do not fit it have their input apportioned over their ids, as the sidecar notes")

	// kv-cache.py's argparse takes unique prefixes of its options
	// (--num-user 10): so does kvtrace, so that its command lines run.
	args, err := cli.ExpandPrefixes(fs, args)
	if err != nil {
		return nil, err
	}
	rest, err := cli.ParseFlags(fs, args)
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return &simOptions{Help: true}, err
		}
		return nil, err
	}

	// The file first, then the options given, so that they override it.
	// Standard input is one file: the config, or the workload.
	for _, in := range []struct{ flag, path string }{{"--request-trace", fv.RequestTrace}, {"--dataset-path", fv.DatasetPath}} {
		if o.ConfigPath == "-" && in.path == "-" {
			return nil, cli.Usagef("--config - and %s -: both read standard input: give one of them a file", in.flag)
		}
	}
	cfg := sim.DefaultConfig()
	if o.ConfigPath != "" {
		if err := loadConfigFile(o.ConfigPath, &cfg); err != nil {
			return nil, err
		}
	}
	fv.Duration = duration.Duration()
	if fs.Changed("mlperf-option") {
		if err := applyMLPerfOption(mlperf, &cfg); err != nil {
			return nil, cli.Input(err)
		}
	}
	fromFile := cfg // the Option as --config's file left it
	applyChanged(fs, &cfg, &fv)
	switch {
	case fs.Changed("key-style"):
		cfg.KeyStyle = keyStyle
	case o.Format == "mlperf":
		cfg.KeyStyle = "mlperf"
	}
	if fs.Changed("epoch-base") {
		cfg.EpochBase = time.Unix(epoch, 0).UTC()
	}
	for _, f := range realIOOnly() {
		if fs.Changed(f.flag) {
			cfg.NoEffect = append(cfg.NoEffect, "--"+f.flag+": "+f.why)
		}
	}

	var sloErr error
	if *sloMS != "" {
		cfg.SLO, sloErr = sim.ParseSLO(*sloMS, cfg.QoS)
	}
	o.LevelGiven = fs.Changed("zstd-level")
	problems := []error{cfg.Validate(), sloErr}
	problems = append(problems, o.check(&cfg)...)
	if err := errors.Join(problems...); err != nil {
		return nil, cli.Input(err)
	}
	// The mlperf dialect drops the Delete rows: its sidecar's peaks are
	// those of the trace without them.
	cfg.NoDeletesPeak = o.Format == "mlperf"
	o.Config = cfg
	o.TraceGiven = fs.Changed("io-trace-log")
	o.Warnings = cfg.Warnings()
	if fs.Changed("mlperf-option") {
		o.MLPerfOpen = mlperfOverrides(fs, mlperf, &fv, &fromFile, o.ConfigPath)
		o.Warnings = append(o.Warnings, o.MLPerfOpen...)
	}
	o.Args = rest
	return &o, nil
}

// applyChanged copies into cfg the fields of v whose options were given.
func applyChanged(fs *pflag.FlagSet, cfg, v *sim.Config) {
	for _, f := range configFlags(cfg, v) {
		if fs.Changed(f.flag) {
			f.apply()
		}
	}
}

// configFlag is an option that sets a field of sim.Config.
type configFlag struct {
	flag  string
	apply func() // copies the option's field from v into cfg
}

// configFlags are the options that set fields of sim.Config, each copying
// its field from v into cfg.
func configFlags(cfg, v *sim.Config) []configFlag {
	return []configFlag{
		{"model", func() { cfg.Model = v.Model }},
		{"num-users", func() { cfg.NumUsers = v.NumUsers }},
		{"duration", func() { cfg.Duration = v.Duration }},
		{"gpu-mem-gb", func() { cfg.GPUMemGB = v.GPUMemGB }},
		{"num-gpus", func() { cfg.NumGPUs = v.NumGPUs }},
		{"tensor-parallel", func() { cfg.TensorParallel = v.TensorParallel }},
		{"cpu-mem-gb", func() { cfg.CPUMemGB = v.CPUMemGB }},
		{"cache-dir", func() { cfg.CacheDir = v.CacheDir }},
		{"generation-mode", func() { cfg.GenerationMode = v.GenerationMode }},
		{"performance-profile", func() { cfg.PerformanceProfile = v.PerformanceProfile }},
		{"disable-multi-turn", func() { cfg.DisableMultiTurn = v.DisableMultiTurn }},
		{"disable-prefix-caching", func() { cfg.DisablePrefixCaching = v.DisablePrefixCaching }},
		{"enable-rag", func() { cfg.EnableRAG = v.EnableRAG }},
		{"rag-num-docs", func() { cfg.RAGNumDocs = v.RAGNumDocs }},
		{"enable-autoscaling", func() { cfg.EnableAutoscaling = v.EnableAutoscaling }},
		{"autoscaler-mode", func() { cfg.AutoscalerMode = v.AutoscalerMode }},
		{"target-saturation", func() { cfg.TargetSaturation = v.TargetSaturation }},
		{"use-burst-trace", func() { cfg.UseBurstTrace = v.UseBurstTrace }},
		{"burst-trace-path", func() { cfg.BurstTracePath = v.BurstTracePath }},
		{"dataset-path", func() { cfg.DatasetPath = v.DatasetPath }},
		{"max-conversations", func() { cfg.MaxConversations = v.MaxConversations }},
		{"seed", func() { cfg.Seed = v.Seed }},
		{"max-concurrent-allocs", func() { cfg.MaxConcurrentAllocs = v.MaxConcurrentAllocs }},
		{"request-rate", func() { cfg.RequestRate = v.RequestRate }},
		{"max-requests", func() { cfg.MaxRequests = v.MaxRequests }},
		{"storage-capacity-gb", func() { cfg.StorageCapacityGB = v.StorageCapacityGB }},
		{"object-tier", func() { cfg.ObjectTier = v.ObjectTier }},
		{"precondition", func() { cfg.Precondition = v.Precondition }},
		{"precondition-size-gb", func() { cfg.PreconditionSizeGB = v.PreconditionSizeGB }},
		{"precondition-threads", func() { cfg.PreconditionThreads = v.PreconditionThreads }},
		{"trace-speedup", func() { cfg.TraceSpeedup = v.TraceSpeedup }},
		{"replay-cycles", func() { cfg.ReplayCycles = v.ReplayCycles }},
		{"prefill-only", func() { cfg.PrefillOnly = v.PrefillOnly }},
		{"decode-only", func() { cfg.DecodeOnly = v.DecodeOnly }},
		{"request-trace", func() { cfg.RequestTrace = v.RequestTrace }},
		{"request-trace-format", func() { cfg.RequestTraceFormat = v.RequestTraceFormat }},
		{"request-trace-time-unit", func() { cfg.RequestTraceTimeUnit = v.RequestTraceTimeUnit }},
		{"request-trace-block-tokens", func() { cfg.RequestTraceBlockTokens = v.RequestTraceBlockTokens }},
		{"arrival", func() { cfg.Arrival = v.Arrival }},
		{"arrival-cv", func() { cfg.ArrivalCV = v.ArrivalCV }},
		{"arrival-seed", func() { cfg.ArrivalSeed = v.ArrivalSeed }},
		{"nvme-accounting", func() { cfg.NVMeAccounting = v.NVMeAccounting }},
	}
}

// loadConfigFile applies the config file at path ("-" is stdin) to cfg.
func loadConfigFile(path string, cfg *sim.Config) error {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return cli.Usagef("--config %s: %w", quoteArg(path), cli.UnwrapPath(err))
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return cli.Usagef("--config %s: a directory (want kv-cache.py's config.yaml)", quoteArg(path))
		}
		r = f
	}
	return cli.Input(sim.LoadYAML(r, path, cfg))
}

// check reports the problems of kvtrace's own options and the rules of
// kv-cache.py that need the machine (cfg has the options applied).
func (o *simOptions) check(cfg *sim.Config) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch o.LogLevel {
	case "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL":
	default:
		bad("--log-level %s: must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL", quoteArg(o.LogLevel))
	}
	if o.Format != "kvbench" && o.Format != "mlperf" {
		bad("--format %s: must be one of kvbench, mlperf", quoteArg(o.Format))
	}
	if o.Format == "mlperf" && cfg.ObjectTier {
		bad("--format mlperf with --object-tier: kv-cache.py's dialect has three tiers, and --object-tier writes Tier-3 rows (use --format kvbench)")
	}
	if o.Level < 0 || o.Level > 22 {
		bad("--zstd-level %d: must be between 0 and 22", o.Level)
	} else if o.LevelGiven && !o.Zstd && o.TracePath != "" && trace.CompressionFor(o.TracePath) != trace.CompressZstd {
		bad("--zstd-level %d: the trace (%s) is written as plain CSV: add --zstd, or name a .zst file", o.Level, quoteArg(o.TracePath))
	}
	if o.TracePath == "" {
		bad(`--io-trace-log "": empty file name (want a file, or - for stdout)`)
	}
	if o.LatencyDump == "-" && (o.TracePath == "-" || o.OutputPath == "-") {
		bad("--latency-dump -: stdout already carries the trace or the statistics (give --latency-dump FILE)")
	}
	if o.OutputPath == "-" && o.TracePath == "-" {
		bad("--output -: stdout already carries the trace (give --io-trace-log FILE, or --output FILE)")
	}
	// kv-cache.py also refuses a cache directory whose existing parent it
	// cannot write to.
	if cfg.CacheDir != "" {
		if abs, err := filepath.Abs(cfg.CacheDir); err == nil {
			parent := filepath.Dir(abs)
			const wOK = 2 // W_OK of access(2)
			if fi, err := os.Stat(parent); err == nil && fi.IsDir() && syscall.Access(parent, wOK) != nil {
				bad("--cache-dir %s: its parent %s is not writable", quoteArg(cfg.CacheDir), parent)
			}
		}
	}
	return errs
}

// quoteArg returns s as typed, or quoted when it is empty or holds spaces,
// quotes or unprintable runes (parsemsg.Arg).
func quoteArg(s string) string { return parsemsg.Arg(s) }
