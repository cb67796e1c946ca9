// Package setup is kvreplay's composition root as a library: from a
// replay.Config, the replay's Plan and Options, Build makes the backends
// the tier map names, the engines that move objects between tiers
// themselves (movers: direct GPU copies, GPUDirect Storage), the result's
// tier paths and a close function. It also sizes them (the RAM arena, the
// extent file, the free space the NVMe tier needs, the soft memory limit
// of the replay) and checks, before any I/O, that they can be made here
// (a GPU for a gpu tier, libcufile for --gds, a --device kvreplay may
// overwrite).
//
// Every backend is one row of the factory table (factories.go): its name
// in --tier-map, a line of help, an optional check of this machine, and
// how it is made. A new tier is its package under replay/ and one row
// there: flag validation, help and Build know backends only through the
// table. A backend that has more to say in the result than where it lives
// (a GPU's device and copies) implements Describer.
//
// Around Build, setup holds the rest of a replay that is not flags or
// terminal output, so that kvreplay's main is its command line, its
// launcher plumbing and its summary: Prescan (the traces, their sidecars,
// the plan), Fitting (--plan and --fit: what the replay needs beside what
// this machine has, replay.Advise's options applied), Replay (Build, wait
// for the start, replay.Run, Describe, Close), Search (the users and
// capacity searches over replays), the path checks before anything runs
// (Options.CheckPaths, CheckDevice) and the live progress line. Files:
// setup.go (Options, Env, Build, Tiers), factories.go (the table), a file
// per row's making (ram.go, nvme.go, gpu.go, s3.go), device.go (what
// kvreplay may overwrite), fit.go, search.go, sources.go, replay.go,
// memlimit.go, progress.go, rank.go (what a rank and a trial make of
// the command line: ForRank, CheckNames, CheckTrial).
//
// package replay never imports setup, nor any backend: a main does (the
// import rules in internal/lint keep it so).
package setup

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/replay/ioengine/devcopy"
	"github.com/kvbench/kvbench/replay/ioengine/gds"
	"github.com/kvbench/kvbench/schema"
)

// Options are what Build needs beyond the replay's Config: where and how
// the tiers live. kvreplay fills them from its flags.
type Options struct {
	// Dir is where the NVMe tier makes its run directory (--dir); "" is
	// the system temp dir. Mkdir (--mkdir) lets it not exist yet.
	Dir   string
	Mkdir bool
	// Layout is the NVMe tier's: "dir" (a file per object) or "extent"
	// (one preallocated file or device).
	Layout string
	// Device is the extent layout's file or block device (--device); ""
	// is a new file in the run directory.
	Device          string
	AllowDevice     bool // --allow-device: Device may be a block device
	DeviceOverwrite bool // --device-overwrite: Device may be a file with data
	Prewrite        bool // --prewrite: write the extent file's new blocks before the replay
	Keep            bool // --keep: leave what the run made
	Buffered        bool // --buffered: the page cache, not O_DIRECT
	// Probe says that the replays are a search's probes (SearchFits sets
	// it): each is checked with its own plan (its window, its users)
	// before any I/O, and one that does not fit is not run and stops the
	// search (ErrProbeNotRun), whether the search's plan fits or not: a
	// users probe's sample can need more than every user's plan (the
	// objects users left out wrote, written before its clock). MayFill
	// says that the search's plan, of its largest probes (the whole
	// trace, all its users), does not fit the free space: the search
	// starts with a warning.
	Probe, MayFill bool
	// RAMBudget is the RAM arena's size (--ram-budget); 0 sizes it from
	// the plan.
	RAMBudget int64
	// GPUs are the devices the gpu tier may use (--gpus: "0,1"; "" all);
	// a rank takes the one at LocalRank (launch.LocalUnknown: the one
	// given, or an error).
	GPUs      string
	LocalRank int
	// S3 is the s3 tier's bucket, prefix and endpoint (--s3-*).
	S3 S3Config
	// Quiet drops notes (a long prewrite) from Stderr; warnings stay.
	Quiet bool
	// Stderr takes warnings and notes as they happen; nil drops them.
	Stderr io.Writer
}

// Describer is the optional capability of a backend that has more to say
// in the result than where it lives: Describe fills its tier path (its
// device, what it measured, such as a GPU's copies) after the run.
type Describer interface {
	Describe(pi *schema.PathInfo)
}

// Env is what the checks before a run found on this machine and Build
// uses: a CUDA runtime for a gpu tier, libcufile for --gds. Close
// releases it.
type Env struct {
	cuda    *cuda.Runtime
	cufile  *cuda.CuFile
	refused bool // a row's check refused a tier, and said why
}

// MapTier maps tier (its index t, as the flag names it: Tier-0) to the
// backend name in cfg's tier map, when the factory table has a row of
// that name and the row's check passes on this machine (a gpu tier needs
// a CUDA runtime and a device; nothing falls back quietly).
func (e *Env) MapTier(cfg *replay.Config, t schema.Tier, tier, name string) error {
	f := factory(name)
	if f == nil {
		return fmt.Errorf("--tier-map %s: want %s", parsemsg.Arg(tier+"="+name), nameList())
	}
	if f.Check != nil {
		if err := f.Check(e, tier); err != nil {
			e.refused = true
			return err
		}
	}
	cfg.TierMap[t] = name
	return nil
}

// MapTiers maps every --tier-map pair (Tier-N=name) through MapTier, the
// tiers not given to nothing, and returns every problem.
func (e *Env) MapTiers(cfg *replay.Config, pairs []cli.KeyValue) []error {
	var errs []error
	cfg.TierMap = [schema.NumTiers]string{}
	for _, kv := range pairs {
		t, err := schema.ParseTier(kv.Key)
		if err != nil {
			errs = append(errs, fmt.Errorf("--tier-map %s: %s is not a tier (want %s)", parsemsg.Arg(kv.Key+"="+kv.Value), parsemsg.Arg(kv.Key), schema.TierChoices))
		} else if err := e.MapTier(cfg, t, kv.Key, kv.Value); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Unowned refuses the options given (given(flag) says whether a flag was,
// and its value) that do nothing without another one: the extent layout's
// without --layout extent, the s3 tier's and the gpu tier's without such
// a tier in cfg.TierMap, --start-barrier-timeout without a barrier. They
// are refused, as --device without --layout extent is, not ignored. The
// s3 tier's given with one are checked here too (s3.Config.CheckFlags,
// the rules s3.New applies), so that a bucket S3 cannot name stops the
// run before its plan, not after; a bucket not named is refused when the
// tier is made (a trace may not use it).
func (o *Options) Unowned(cfg *replay.Config, barrier bool, given func(flag string) (string, bool)) []error {
	mapped := func(name string) bool { return slices.Contains(cfg.TierMap[:], name) }
	var errs []error
	if mapped("s3") {
		if err := o.S3.CheckFlags(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, g := range []struct {
		unused bool
		flags  []string
		why    string
	}{
		{o.Layout != "extent", []string{"allow-device", "device-overwrite", "prewrite"}, "only with --layout extent"},
		{!mapped("s3"), []string{"s3-endpoint", "s3-bucket", "s3-prefix", "s3-concurrency", "s3-part-size"}, "only with an s3 tier (--tier-map Tier-2=s3 or Tier-3=s3)"},
		{!mapped("gpu"), []string{"gpus"}, "only with a gpu tier (--tier-map Tier-0=gpu)"},
		{!barrier, []string{"start-barrier-timeout"}, "only with --start-barrier"},
	} {
		for _, f := range g.flags {
			if v, ok := given(f); g.unused && ok {
				errs = append(errs, fmt.Errorf("--%s %s: %s", f, parsemsg.Arg(v), g.why))
			}
		}
	}
	return errs
}

// CheckMapped refuses, before any I/O, a trace with rows on a tier cfg
// maps to no backend (exit 2).
func CheckMapped(cfg *replay.Config, plan *replay.Plan) error {
	for t := range schema.Tier(schema.NumTiers) {
		if plan.Used[t] && cfg.TierMap[t] == "" {
			return cli.Input(fmt.Errorf("the trace has %d %s rows and --tier-map maps %s to nothing: add --tier-map %s=%s%s, or --fit",
				plan.UsedRows[t], t, t, t, replay.StandIn(t), replay.TierHint(t)))
		}
	}
	return nil
}

// Close releases what the checks loaded (libcufile's driver).
func (e *Env) Close() {
	if e.cufile != nil {
		e.cufile.Close()
		e.cufile = nil
	}
}

// Tiers are what Build made for one replay: the backends by name, the
// movers for replay.Hooks, and the warnings a result must carry. Describe
// fills a result's tier paths after the run; Close releases everything.
type Tiers struct {
	Backends map[string]backend.Backend
	Movers   []ioengine.Factory
	// Warnings are for the result (Stderr had those meant for it).
	Warnings []string

	paths  []tierPath
	closes []func()

	mu       sync.Mutex // guards what the movers report
	ramArena string
	gdsStats gds.Stats
	cufile   *cuda.CuFile
}

// tierPath is a backend's entry in the result's tier paths.
type tierPath struct {
	b  backend.Backend
	pi schema.PathInfo
}

// Build makes the backends of the tiers cfg maps and plan uses (every
// mapped one when the plan did not scan the trace), in the factory
// table's order, and the movers between them. On error nothing it made is
// left.
func Build(ctx context.Context, env *Env, cfg *replay.Config, plan *replay.Plan, opts Options) (*Tiers, error) {
	t := &Tiers{Backends: map[string]backend.Backend{}}
	need := map[string]bool{}
	for i, name := range cfg.TierMap {
		if name != "" && (!plan.Scanned || plan.Used[i]) {
			need[name] = true
		}
	}
	bld := &builder{ctx: ctx, env: env, cfg: cfg, plan: plan, opts: &opts, tiers: t}
	for _, f := range factories {
		if !need[f.Name] {
			continue
		}
		b, err := f.New(bld)
		if err != nil {
			t.Close()
			return nil, err
		}
		t.Backends[f.Name] = b
		if b.Caps().NoData {
			bld.noStorage(f.Name)
		}
		done := bld.done
		t.closes = append(t.closes, func() {
			b.Close()
			if done != nil {
				done()
			}
		})
		if bld.path != nil {
			t.paths = append(t.paths, tierPath{b: b, pi: *bld.path})
		}
		bld.path, bld.done = nil, nil
	}
	t.movers(env, cfg)
	return t, nil
}

// movers are the engines that move objects between two tiers' memories
// themselves: with a gpu tier, devcopy, which serves the gpu tier's
// objects from pinned buffers of its own and copies directly between
// device memory and the RAM arena; with --gds, GPUDirect Storage between
// the gpu tier and files.
func (t *Tiers) movers(env *Env, cfg *replay.Config) {
	if env.cuda != nil {
		t.Movers = append(t.Movers, devcopy.New(func(s string) {
			t.mu.Lock()
			t.ramArena = s
			t.mu.Unlock()
		}))
	}
	if env.cufile != nil {
		t.cufile = env.cufile
		t.Movers = append(t.Movers, gds.New(env.cufile, func(st gds.Stats) {
			t.mu.Lock()
			t.gdsStats = st
			t.mu.Unlock()
		}))
	}
}

// Describe sets res's tier paths: where each backend lives, what a
// Describer says of itself, and what the movers did on a GPU's path.
func (t *Tiers) Describe(res *schema.Result) {
	res.Host.TierPaths = nil
	for _, p := range t.paths {
		pi := p.pi
		if d, ok := p.b.(Describer); ok {
			d.Describe(&pi)
		}
		if pi.GPU != nil {
			t.mu.Lock()
			pi.GPU.RAMArena, pi.GPU.GDS = t.ramArena, gdsPath(t.cufile, t.gdsStats)
			t.mu.Unlock()
		}
		res.Host.TierPaths = append(res.Host.TierPaths, pi)
	}
}

// Close closes the backends and removes what the run made (unless
// Options.Keep), in the reverse order of their making.
func (t *Tiers) Close() {
	for i := len(t.closes) - 1; i >= 0; i-- {
		t.closes[i]()
	}
	t.closes = nil
}

// builder is what a factory row sees while it makes its backend.
type builder struct {
	ctx   context.Context
	env   *Env
	cfg   *replay.Config
	plan  *replay.Plan
	opts  *Options
	tiers *Tiers

	path *schema.PathInfo // where the backend lives, for the result
	done func()           // what to do after the backend closes
}

// noStorage says in the result which tiers the backend named name
// serves when it keeps no data (Caps().NoData, the null backend): their
// figures (bandwidths of terabytes a second, latencies, storage_health)
// measure kvreplay's engine, not storage, and a result that does not say
// so reads as a measurement of a tier.
func (b *builder) noStorage(name string) {
	var tiers []string
	for t, n := range b.cfg.TierMap {
		if n == name && (!b.plan.Scanned || b.plan.Used[t]) {
			tiers = append(tiers, schema.Tier(t).String())
		}
	}
	b.note(fmt.Sprintf("NO STORAGE: %s on the %s backend, which moves no data: their figures (bandwidth, latency, storage_health) measure kvreplay's engine, not a tier",
		strings.Join(tiers, ", "), name))
}

// where records the backend's tier path for the result.
func (b *builder) where(pi schema.PathInfo) { b.path = &pi }

// after runs fn once the backend is closed (removing a run directory).
func (b *builder) after(fn func()) { b.done = fn }

// note records w for the result.
func (b *builder) note(w string) { b.tiers.Warnings = append(b.tiers.Warnings, w) }

// warn records w for the result and prints it now.
func (b *builder) warn(w string) {
	b.note(w)
	b.print("warning: " + w)
}

// print writes a line to Stderr, as kvreplay's.
func (b *builder) print(line string) {
	if b.opts.Stderr != nil {
		fmt.Fprintf(b.opts.Stderr, "kvreplay: %s\n", line)
	}
}

// notFit is the error for tiers that do not fit: the plan's advice, with
// the options that make it fit (--plan's), when it has one; else own.
func (b *builder) notFit(own error) error {
	if Planned(b.plan) {
		if a := Advise(b.cfg, b.plan, b.opts); !a.Runs {
			return notFitError(a)
		}
	}
	return own
}

// mapsTo reports whether cfg maps a tier to the backend name.
func mapsTo(cfg *replay.Config, name string) bool {
	for _, b := range cfg.TierMap {
		if b == name {
			return true
		}
	}
	return false
}

// Names are the backends a tier can map to, in the table's order.
func Names() []string {
	var names []string
	for _, f := range factories {
		names = append(names, f.Name)
	}
	return names
}

// nameList is Names for a message: "ram, nvme, gpu or null".
func nameList() string {
	n := Names()
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// Usage describes the backends for kvreplay's help, a line each.
func Usage() string {
	var b strings.Builder
	for _, f := range factories {
		fmt.Fprintf(&b, "  %-5s %s\n", f.Name, f.Usage)
	}
	return b.String()
}

// factory is the table's row of name, nil when there is none.
func factory(name string) *row {
	for i := range factories {
		if factories[i].Name == name {
			return &factories[i]
		}
	}
	return nil
}
