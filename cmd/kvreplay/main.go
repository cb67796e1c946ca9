// Command kvreplay executes KV-cache I/O traces against real tiers (RAM and
// NVMe, GPU memory where there is one) and measures latency and bandwidth
// per tier.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/launch"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/replay/setup"
	"github.com/kvbench/kvbench/report"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/sim"
	"github.com/spf13/pflag"
)

const usage = `kvreplay: replay KV-cache I/O traces against real RAM and NVMe and measure them.

Usage:
  kvreplay [options] TRACE...     TRACE is kvtrace's or kv-cache.py's, plain or zstd; "-" reads stdin

Every Write materialises its object with unique, incompressible bytes,
every Read reads it whole, an Evict Read+Write pair moves it between tiers
and a Delete frees it. Objects are split into --block-size I/Os issued in
parallel (O_DIRECT on NVMe). Rows of one key keep their order, rows of one
request run in sequence, everything else runs concurrently. Latency is
measured from submission and from each row's scheduled time (coordinated
omission safe).

The result document (JSON) goes to -o FILE, or to stdout when stdout is not
a terminal; on a terminal a summary is printed instead.

Tiers: Tier-0 is GPU memory, Tier-1 CPU RAM, Tier-2 NVMe, Tier-3 object
storage (kvtrace --object-tier). --tier-map says which backend holds each:
%s
Without a GPU, replay a trace with Tier-0 rows with --tier-map Tier-0=ram;
Tier-3 rows go to S3 with --tier-map Tier-3=s3 --s3-bucket NAME (--fit puts
them on the nvme tier's --dir when no tier map names them).
With --gds, objects moved between the gpu tier and the nvme tier go by
GPUDirect Storage (libcufile: cuFileWrite and cuFileRead between GPU memory
and the files), not through host memory; an error where libcufile is not.

Examples:
  # simulate (no GPU tier) and replay in one pipeline, on a temp directory and RAM,
  # at 1/1024 of the objects' sizes (in full, the trace moves 9.9 TB)
  kvtrace --num-users 20 --duration 30 --generation-mode none --gpu-mem-gb 0 --zstd | kvreplay --speed max --size-scale 1/1024 -

  # a real NVMe drive, at the trace's own pace (full size where it fits; with
  # --fit, scaled and bounded in time to fit this machine, as the result says)
  kvreplay --fit --dir /mnt/nvme0/kv run.csv.zst -o sysA.json

  # what a replay of the trace needs beside what this machine has, and the
  # options that make it fit; then replay it with them (the result says why)
  kvreplay --plan --dir /mnt/nvme0/kv run.csv.zst
  kvreplay --fit --dir /mnt/nvme0/kv run.csv.zst -o fitted.json

  # a kv-cache.py trace of terabytes, smoke-tested at 1/1024 of its size; --model
  # gives its bytes per token (it has no sidecar), so its KV tokens are measured
  kvreplay --tier-map Tier-0=ram,Tier-1=ram,Tier-2=nvme --size-scale 1/1024 --speed max --model llama3.1-8b kv_trace.csv.zst

  # everything on NVMe, to stress storage
  kvreplay --fit --tier-map Tier-0=nvme,Tier-1=nvme,Tier-2=nvme --dir /mnt/nvme0/kv run.csv.zst -o stress.json

  # users wait for their storage; then: how many users does this system serve?
  kvreplay --fit --closed-loop --duration 10s --dir /mnt/nvme0/kv run.csv.zst -o closed.json
  kvreplay --fit --search users --duration 5s --search-probes 4 --dir /mnt/nvme0/kv run.csv.zst -o users.json

  # one rank of many, under mpirun or srun (ranks from the launcher's environment)
  mpirun -np 4 kvreplay --shard key --size-scale 1/1024 --duration 2m --mkdir --dir /mnt/nvme0/rank{rank} -o out.{rank}.json run.csv.zst
`

// drainLimit bounds how long kvreplay reads what is left of a piped trace
// after its replay stopped early (cli.DrainStdin).
const drainLimit = 10 * time.Second

func main() {
	os.Exit(cli.MainQuietPipe("kvreplay", os.Args[1:], os.Stdout, os.Stderr, run))
}

// options are kvreplay's command line.
type options struct {
	cfg    replay.Config
	output string
	tiers  setup.Options // where and how the tiers live: --dir, --layout, --device, --ram-budget, --s3-*, ...
	label  string
	system string
	trial  int
	quiet  bool
	traces []string
	model  string // --model: the model of traces without a sidecar

	out         *cli.OutputFile // -o's file, created before the replay
	allowSystem bool            // --allow-system-path
	warnings    []string        // for the result: --start-at's, --fit's

	rank  launch.Rank
	start launch.Start // --start-at, --start-barrier

	listDevices bool
	gds         bool       // --gds
	env         *setup.Env // what the tier map's checks found here (a CUDA runtime, libcufile)

	fitting setup.Fitting // --plan, --fit, --fit-time, --format
	fit     *schema.Fit   // what --fit applied, for the result

	search setup.SearchOptions // --search, --search-probes, --search-repeats; SpeedGiven: a capacity search starts at --speed
}

// parse reads kvreplay's command line: its flags, then the Config, tiers
// and search they make, then every problem with them at once (exit 2).
func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{cfg: replay.DefaultConfig(), env: &setup.Env{}, tiers: setup.Options{Prewrite: true}}
	fs := cli.NewFlagSet("kvreplay", fmt.Sprintf(usage, setup.Usage()), stderr)
	cli.AddStandard(fs)
	v := &flagValues{blockSize: cli.ByteSize(o.cfg.BlockSize), speed: 1, barrierTimeout: cli.Seconds(launch.DefaultBarrierTimeout)}
	addStorageFlags(fs, o, v)
	addReplayFlags(fs, o, v)
	addRunFlags(fs, o, v)
	rest, err := cli.ParseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if o.listDevices {
		return o, nil
	}
	o.traces = rest
	errs := o.forRank(v)
	errs = append(errs, o.configure(fs, v)...)
	errs = append(errs, o.check(fs, v)...)
	if len(errs) > 0 {
		return nil, cli.Input(errors.Join(errs...))
	}
	o.tiers.LocalRank, o.tiers.Quiet, o.tiers.Stderr = o.rank.Local, o.quiet, stderr
	if w := o.start.Warning; w != "" {
		o.warnings = append(o.warnings, w)
		fmt.Fprintf(stderr, "kvreplay: warning: %s\n", w)
	}
	if n := launch.KillGrace(o.rank, os.Getenv); n != "" && !o.quiet {
		fmt.Fprintf(stderr, "kvreplay: %s\n", n)
	}
	return o, nil
}

// flagValues are the flags that parse turns into options after parsing,
// rather than storing them as they are typed.
type flagValues struct {
	tierMap                                          *cli.KeyValues
	ramBudget, blockSize, capacity, s3Part           cli.ByteSize
	speed                                            cli.Speed
	barrierTimeout                                   cli.Seconds
	scale, rank, ranks, sloMS, startAt, startBarrier *string
	noPrescan                                        *bool
}

// addStorageFlags defines the result's file and where the tiers live, the
// first of --help's options (the three add functions keep its order).
func addStorageFlags(fs *pflag.FlagSet, o *options, v *flagValues) {
	fs.StringVarP(&o.output, "output", "o", "", "write the result document to `FILE` (\"-\": stdout)")
	fs.StringVar(&o.tiers.Dir, "dir", "", "where the NVMe tier lives: kvreplay makes its own directory in `DIR` (kvreplay-PID-RANDOM) and removes only that; files already in DIR are never touched (default: the system temp dir)")
	fs.BoolVar(&o.tiers.Mkdir, "mkdir", false, "make --dir (and its missing parents) when it does not exist; without it a missing --dir is an error, so that a typo or an unmounted drive does not benchmark another disk")
	fs.BoolVar(&o.tiers.Keep, "keep", false, "keep the objects and directory kvreplay created")
	fs.StringVar(&o.tiers.Layout, "layout", "dir", "NVMe tier layout: dir (one file per object) or extent (all objects in one preallocated file or device)")
	fs.StringVar(&o.tiers.Device, "device", "", "extent layout: the file or raw block device to use (default: a new kvbench.extent in kvreplay's directory in --dir); never the trace or -o, an existing file with data only with --device-overwrite")
	fs.BoolVar(&o.tiers.AllowDevice, "allow-device", false, "extent layout: allow --device to be a raw block device (its data is overwritten)")
	fs.BoolVar(&o.allowSystem, cli.AllowSystemPathFlag, false, "let -o lie under a system directory (/etc, /usr, /dev, ...), which kvreplay refuses by default")
	fs.BoolVar(&o.tiers.DeviceOverwrite, "device-overwrite", false, "extent layout: allow --device to be an existing file with data in it (its data is overwritten)")
	fs.BoolVar(&o.tiers.Prewrite, "prewrite", true, "extent layout: write the file's new blocks once before the replay, so that first writes do not measure the file system allocating them (=false: the result says they were not)")
	v.tierMap = cli.NewKeyValues(cli.KeyValue{Key: "Tier-1", Value: "ram"}, cli.KeyValue{Key: "Tier-2", Value: "nvme"})
	fs.Var(v.tierMap, "tier-map", "backend of each trace tier: "+strings.Join(setup.Names(), ", ")+"; a tier given overrides its default and keeps the others'")
	fs.Var(&v.ramBudget, "ram-budget", "RAM arena size; below the trace's peak, kvreplay evicts LRU objects (default: the trace's peak; for a trace nothing sized, a pipe or --no-prescan without a sidecar: half the memory available, committed as objects use it)")
}

// addReplayFlags defines how the trace is replayed, by how many ranks,
// and --plan and --fit.
func addReplayFlags(fs *pflag.FlagSet, o *options, v *flagValues) {
	fs.Var(&v.blockSize, "block-size", "largest I/O an object is split into")
	fs.IntVar(&o.cfg.QueueDepth, "queue-depth", o.cfg.QueueDepth, "I/Os in flight at most")
	fs.IntVar(&o.cfg.Workers, "workers", o.cfg.Workers, "object operations in flight at most")
	fs.Var(&v.speed, "speed", "1: the trace's pace; N: N times faster; max: as fast as possible")
	v.scale = fs.String("size-scale", "1", "scale every object's size, e.g. 1/1024 (a smoke test, reported as such)")
	fs.Var(&v.capacity, "capacity", "bound Tier-2 bytes, evicting LRU objects (for traces without Delete rows)")
	fs.BoolVar(&o.cfg.ClosedLoop, "closed-loop", false, "each user waits for its storage: a user's next request is released when its previous one completed, plus the think time the trace recorded (needs a trace with a User column: kvtrace's)")
	fs.IntVar(&o.cfg.Users, "users", 0, "with --closed-loop: replay only N users (0: all), a sample that keeps the trace's QoS mix: every class from N = the number of classes on, then each in proportion to its share, within a class in the order of their IDs (a trace on a pipe: the first N to appear)")
	fs.StringVar(&o.search.Kind, "search", "", "users: the most users (samples of the trace's users that keep its QoS mix, as --users N) that, closed-loop for --duration each, keep every QoS class within its SLA and pass storage_health; capacity: double --speed from a quarter of the trace's pace (or from --speed) until the offered load it delivers (bytes over the elapsed time, in GB/s) stops improving. Writes a search document; a probe that does not complete (a full disk, an I/O error), or whose trace runs out before --duration, stops the search with exit status 1, its answer a lower bound")
	v.rank = fs.String("rank", "", "this process's rank in a multi-host run (when not given: the launcher's OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, jsrun's JSM_NAMESPACE_RANK or srun's SLURM_PROCID, or a Kubernetes Indexed Job's JOB_COMPLETION_INDEX; a Slurm batch script of several tasks is refused: start kvreplay with srun)")
	v.ranks = fs.String("ranks", "", "the run's number of ranks (with --rank, or with JOB_COMPLETION_INDEX: the Job's spec.completions; when not given: the launcher's, or KVBENCH_RANKS)")
	v.sloMS = fs.String("slo-ms", "", "add the requests' SLO attainment to the result: the share of requests whose storage latency is within MS, for all (500) and/or by QoS class (interactive=50,batch=2000); for --closed-loop, whose users wait for their storage")
	fs.StringVar(&o.cfg.Shard, "shard", "", "how ranks split the trace: key (every row of an object on the rank its key hashes to, so no rank reads what another wrote; a request whose objects lie on several ranks runs in part on each; the default under several ranks), user (whole users, with --closed-loop, whose default it is; an object's moves run on the rank that wrote it, its reads with their request) or tp (every rank every row: an N-way tensor-parallel group)")
	v.startAt = fs.String("start-at", "", "start the replay at this instant (RFC 3339 or Unix seconds), so that ranks start together: at most 24h ahead; one up to 1h past starts at once, with a warning")
	v.startBarrier = fs.String("start-barrier", "", "a directory the ranks share (a new one for each run): each marks itself ready there, and all start together when all are (no launcher needed; a Kubernetes Indexed Job); ranks that know their run's id (their launcher's job, or KVBENCH_RUN_ID) refuse another run's ready files")
	fs.Var(&v.barrierTimeout, "start-barrier-timeout", "how long a rank waits at --start-barrier for the others (seconds or a duration)")
	fs.IntVar(&o.search.Probes, "search-probes", 12, "with --search: the most probes (replays of --duration each)")
	fs.IntVar(&o.search.Repeats, "search-repeats", 2, "with --search users: how many times the answer is probed in all")
	fs.Var((*cli.Seconds)(&o.cfg.Duration), "duration", "the window in wall time, in seconds (30, as kvtrace --duration) or a duration (20s, 2m): nothing is released after it, what was released completes (operations on large objects may run well past it; the result's wall_s says how long), a request with rows left, or due and never started, is cut, not counted, unless it had already missed its class's target (0: the whole trace)")
	fs.Uint64Var(&o.cfg.Seed, "seed", o.cfg.Seed, "seed of the data bytes (a --search gives each later probe its own, from it, so no probe rewrites an earlier one's bytes)")
	fs.StringVar(&o.model, "model", "", "the model of traces without a .meta.json sidecar (kv-cache.py's --io-trace-log, a pipe): its KV bytes per token, from kvtrace's model table (kvtrace models), make the KV tokens the run moves measurable (kv_tokens_moved_per_s)")
	fs.IntVar(&o.cfg.TensorParallel, "tensor-parallel", 1, "with --model: the tensor parallelism the trace's object sizes were divided by (kv-cache.py --tensor-parallel)")
	fs.StringVar(&o.cfg.Engine, "engine", o.cfg.Engine, "I/O engine for files and devices: "+ioengine.Help())
	fs.BoolVar(&o.cfg.Verify, "verify", false, "check every byte read against what was written")
	fs.BoolVar(&o.cfg.Fsync, "fsync", false, "make each NVMe object write durable (fdatasync) before it completes, as kv-cache.py does")
	v.noPrescan = fs.Bool("no-prescan", false, "do not read trace files twice (cold reads are then prepared lazily; as for a pipe, Tier-2 on nvme is then bounded at half of --dir's free space unless --capacity is given)")
	fs.BoolVar(&o.fitting.Print, "plan", false, "read the traces and print what the replay needs (peak live bytes per backend, bytes written and read, the bandwidth the trace's pace asks for) beside what this machine has, and the options that make it fit (--size-scale, --capacity, --ram-budget, --duration, --closed-loop, --speed); replays nothing, makes nothing")
	fs.BoolVar(&o.fitting.Apply, "fit", false, "apply the plan (--plan): replay at the largest --size-scale 1/2^k (with a --capacity or --ram-budget where scaling alone leaves too little space) at which the replay fits this machine's memory and disk and the bandwidth the trace's pace asks is well within what they are assumed to serve, and a slower --speed where an object store's requests, which no scale lowers, ask more than it is assumed to serve; the result's fit says what was applied and why")
	fs.StringVar(&o.fitting.Format, "format", "text", "with --plan: text or json")
	o.fitting.Time = setup.DefaultFitTime
	fs.Var((*cli.Seconds)(&o.fitting.Time), "fit-time", "with --fit, in seconds (120, as --duration) or a duration (2m): the longest replay it keeps (at the trace's pace, or the slower one --fit applies); a trace that takes longer at --speed is replayed for its first part (--duration), planned for what that window reaches; at --speed max, one whose bytes (or an object store's requests) take longer at the rates assumed stops there (0: no bound)")
}

// addRunFlags defines the labels of the run in reports, the GPUs and the
// S3 service the tiers use, and --list-devices and --gds.
func addRunFlags(fs *pflag.FlagSet, o *options, v *flagValues) {
	fs.BoolVar(&o.tiers.Buffered, "buffered", false, "NVMe through the page cache instead of O_DIRECT")
	fs.StringVar(&o.label, "label", "", "label of the run in reports")
	fs.StringVar(&o.system, "system", "", "name of the system under test in reports")
	fs.IntVar(&o.trial, "trial", 0, "trial number in reports")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress line or summary on a terminal")
	fs.StringVar(&o.tiers.GPUs, "gpus", "", "GPUs the gpu tier may use, e.g. 0,1 (default: all); each rank takes the one at its local rank (the launcher's, or KVBENCH_LOCAL_RANK with --rank; a rank whose local rank is unknown needs one GPU given)")
	fs.StringVar(&o.tiers.S3.Endpoint, "s3-endpoint", "", "s3 tier: the S3 service's `URL` (http://127.0.0.1:7070); default: the AWS chain's (AWS_ENDPOINT_URL_S3) or AWS's for the region")
	fs.StringVar(&o.tiers.S3.Bucket, "s3-bucket", "", "s3 tier: the bucket (it must exist; kvreplay works under a prefix of its own in it, run-ID/, and removes only that)")
	fs.StringVar(&o.tiers.S3.Prefix, "s3-prefix", "", "s3 tier: where in the bucket the run's prefix goes (P/run-ID/); {rank} is this process's rank")
	fs.IntVar(&o.tiers.S3.Concurrency, "s3-concurrency", 0, "s3 tier: the most requests in flight (default 16)")
	fs.Var(&v.s3Part, "s3-part-size", "s3 tier: objects above it are multipart uploads of parts of this size (default 8MiB)")
	fs.BoolVar(&o.listDevices, "list-devices", false, "print the GPUs and GPUDirect Storage this machine offers, and exit")
	fs.BoolVar(&o.gds, "gds", false, "move objects between the gpu and nvme tiers with GPUDirect Storage (libcufile), not through host memory")
}

// forRank takes this process's rank from --rank and --ranks or its
// launcher, and what it decides: whether the run is quiet, its shard,
// its paths (setup.Options.ForRank).
func (o *options) forRank(v *flagValues) []error {
	var errs []error
	var err error
	if o.rank, err = launch.FromFlags(*v.rank, *v.ranks, os.Getenv); err != nil {
		errs = append(errs, err)
	}
	o.cfg.Rank, o.cfg.Ranks = o.rank.Rank, o.rank.Ranks
	if o.rank.Ranks > 1 && o.rank.Rank != 0 {
		// The ranks of a launcher share its terminal: rank 0 draws the
		// progress and prints the summary, the others write their
		// documents silently (warnings still go to stderr).
		o.quiet = true
	}
	o.cfg.DefaultShard()
	return append(errs, o.tiers.ForRank(o.rank, &o.output)...)
}

// configure turns the flags that are not stored as typed into the
// replay's Config, the tiers' Options and the search's.
func (o *options) configure(fs *pflag.FlagSet, v *flagValues) []error {
	var errs []error
	var err error
	if *v.sloMS != "" {
		if o.cfg.SLO, err = results.ParseSLO(*v.sloMS); err != nil {
			errs = append(errs, err)
		}
	}
	if o.start, err = launch.ParseStart(*v.startAt, *v.startBarrier, v.barrierTimeout.Duration(), time.Now()); err != nil {
		errs = append(errs, err)
	}
	o.cfg.BlockSize = int64(v.blockSize)
	o.cfg.Capacity = int64(v.capacity)
	o.cfg.Prescan = !*v.noPrescan
	o.tiers.RAMBudget, o.tiers.S3.PartSize = int64(v.ramBudget), int64(v.s3Part)
	o.cfg.S3PartSize = o.tiers.S3.PartSizeOrDefault() // the plan counts the s3 tier's requests with it
	o.cfg.Speed = float64(v.speed)
	o.search.SpeedGiven, o.search.ProbesGiven, o.search.RepeatsGiven = fs.Changed("speed"), fs.Changed("search-probes"), fs.Changed("search-repeats")
	o.search.DurationGiven, o.search.Rank, o.search.Keep = fs.Changed("duration"), o.rank, o.tiers.Keep
	if o.cfg.SizeScale, err = cli.Fraction("--size-scale", *v.scale); err != nil {
		errs, o.cfg.SizeScale = append(errs, err), 1 // said once: not again by Validate
	}
	errs = append(errs, o.env.MapTiers(&o.cfg, v.tierMap.Pairs())...)
	errs = append(errs, o.tiers.Unowned(&o.cfg, *v.startBarrier != "", func(f string) (string, bool) {
		return fs.Lookup(f).Value.String(), fs.Changed(f)
	})...)
	if o.gds {
		if err := o.env.OpenGDS(&o.cfg); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// check refuses what the options say together: no trace or an empty name,
// a trial kvreport refuses, and what the search, --plan and --fit, the
// model, the Config and the paths refuse.
func (o *options) check(fs *pflag.FlagSet, v *flagValues) []error {
	errs := o.tiers.CheckNames(o.traces, o.output, *v.startBarrier, fs.Changed)
	if err := setup.CheckTrial(o.trial); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.search.Check(&o.cfg)...)
	errs = append(errs, o.fitting.Check(o.output, o.search.Kind, fs.Changed("format"), fs.Changed("fit-time"))...)
	errs = append(errs, setup.ApplyModel(&o.cfg, o.model, sim.BuiltinBytesPerToken(), fs.Changed("tensor-parallel"))...)
	if err := o.cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	return append(errs, o.tiers.CheckPaths(o.traces, o.output, o.allowSystem)...)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	if o.listDevices {
		return setup.ListDevices(stdout)
	}
	defer o.env.Close()
	if o.fitting.Print {
		return runPlan(ctx, o, stdout)
	}
	toStdout := o.output == "-" || (o.output == "" && !cli.IsTerminal(stdout))
	interactive := cli.IsTerminal(stderr) && !o.quiet
	if err := openOutput(ctx, o); err != nil {
		return err
	}
	if o.out != nil {
		defer o.out.Abort()
	}

	srcs, plan, err := planFor(ctx, o)
	if err != nil {
		return err
	}
	defer setup.MemoryLimit(&o.cfg, plan, srcs)()
	if o.search.Kind != "" {
		return runSearch(ctx, o, plan, srcs, args, toStdout, stdout, stderr)
	}
	var progress func(replay.Progress)
	if interactive {
		view := setup.NewProgressView(&o.cfg, plan)
		progress = func(p replay.Progress) { fmt.Fprint(stderr, "\r\033[K"+setup.ProgressLine(p, view)) }
	}
	res, runErr := replayOnce(ctx, o, &o.cfg, plan, srcs, args, progress, stderr)
	defer cli.DrainStdin(ctx, o.traces, drainLimit)
	if res == nil {
		return setup.ExitError(runErr, "")
	}
	if err := writeJSON(o, res, toStdout, stdout); err != nil {
		return err
	}
	if cli.IsTerminal(stdout) && !o.quiet {
		report.WriteReplaySummary(stdout, res)
		fmt.Fprintln(stdout, resultNote(o, toStdout))
	} else if !toStdout && o.out == nil {
		fmt.Fprintln(stderr, "kvreplay: result: not written (give -o FILE)")
	}
	return setup.ExitError(runErr, "run incomplete: ")
}

// planFor prescans the traces of o and plans their replay here: a tier
// the trace uses and the map leaves out is refused (--fit maps it to
// RAM), --fit applies the plan's options, and a replay that cannot start
// on this machine stops before any I/O.
func planFor(ctx context.Context, o *options) ([]replay.Source, *replay.Plan, error) {
	srcs, plan, err := prescan(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	if err := setup.CheckMapped(&o.cfg, plan); err != nil && !o.fitting.Apply {
		return nil, nil, err
	}
	if o.fitting.Apply {
		var warn string
		if plan, o.fit, warn, err = o.fitter().Fit(ctx, &o.cfg, &o.tiers, srcs, plan); err != nil {
			return nil, nil, err
		}
		if warn != "" {
			o.warnings = append(o.warnings, warn)
		}
	}
	if o.search.Kind != "" {
		return srcs, plan, searchFits(o, plan)
	}
	return srcs, plan, setup.CheckFits(&o.cfg, plan, &o.tiers)
}

// prescan opens the traces of o, checks their sidecars and plans the
// replay (setup.Prescan): the part of a run --plan shares.
func prescan(ctx context.Context, o *options) ([]replay.Source, *replay.Plan, error) {
	srcs, plan, err := setup.Prescan(ctx, o.traces, o.model, &o.cfg, o.fitter())
	return srcs, plan, o.search.Refusal(err)
}

// replayOnce makes the backends, replays the traces with cfg, releases the
// backends and returns the result document, filled in. progress, when
// set, draws a live line on stderr (a terminal), which is cleared after.
func replayOnce(ctx context.Context, o *options, cfg *replay.Config, plan *replay.Plan, srcs []replay.Source, args []string, progress func(replay.Progress), stderr io.Writer) (*schema.Result, error) {
	var ready func() error
	if o.start.Waits() {
		ready = func() error { return o.start.Wait(ctx, o.rank) }
	}
	res, runErr := setup.Replay(ctx, o.env, cfg, plan, srcs, o.tiers, ready, progress)
	if progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if res == nil {
		return nil, runErr
	}
	res.Tool, res.ToolVersion = "kvreplay", cli.Version()
	res.CommandLine = append([]string{"kvreplay"}, args...)
	res.Label, res.System, res.Trial = o.label, o.system, o.trial
	res.LocalRank, res.RankSource = o.rank.Local, o.rank.Source
	if at := o.start.At.UTC(); !at.IsZero() {
		res.StartAt, res.StartSkewS = &at, res.Started.Sub(at).Seconds()
		if w := o.start.Late(); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	res.Config = setup.ConfigJSON(&o.cfg, &o.tiers)
	res.Warnings = append(res.Warnings, o.warnings...)
	res.Fit = o.fit
	return res, runErr
}

// resultNote says where the result document went, for a run whose
// summary a person reads: -o's file, stdout, or nowhere.
func resultNote(o *options, toStdout bool) string {
	switch {
	case toStdout:
		return "result: written to stdout"
	case o.out != nil:
		return "result: " + o.output
	}
	return "result: not written (the summary above is all there is; give -o FILE to keep the result document)"
}

// writeJSON writes a document to -o, or stdout.
func writeJSON(o *options, doc any, toStdout bool, stdout io.Writer) error {
	enc := func(w io.Writer) error {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(doc)
	}
	if toStdout {
		return enc(stdout)
	}
	if o.out == nil {
		return nil
	}
	err := enc(o.out)
	if err == nil {
		err = o.out.Close()
	}
	if err != nil {
		return fmt.Errorf("-o %s: %w", o.output, err)
	}
	return nil
}
