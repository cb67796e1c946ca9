package setup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/arena"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/gpu"
	"github.com/kvbench/kvbench/replay/ioengine/gds"
	"github.com/kvbench/kvbench/schema"
)

// checkGPU makes sure, before any I/O, that --tier-map tier=gpu can be
// served: a CUDA runtime loads and reports a device, kept in e for the
// gpu tier. Without one the run stops here, naming --tier-map tier=ram;
// nothing falls back quietly.
func checkGPU(e *Env, tier string) error {
	r, err := cuda.Load()
	found := ""
	switch {
	case err != nil && errors.Is(err, cuda.ErrNoRuntime):
		found = "no CUDA runtime here (libcudart)"
	case err != nil:
		found = err.Error()
	default:
		if n, err := r.DeviceCount(); err != nil || n == 0 {
			found = "the CUDA runtime reports no GPU"
			if err != nil {
				found += " (" + err.Error() + ")"
			}
		}
	}
	if found != "" {
		return fmt.Errorf("--tier-map %s=gpu: %s: replay the tier in RAM with --tier-map %s=ram (kvreplay --list-devices shows what this machine offers)", tier, found, tier)
	}
	e.cuda = r
	return nil
}

// newGPU makes the gpu tier: an arena of the trace's peak live bytes on
// the tiers mapped to gpu, on the GPU of this rank (--gpus, taken at the
// local rank), with a staging slot per I/O in flight.
func newGPU(b *builder) (backend.Backend, error) {
	r := b.env.cuda // loaded by checkGPU
	if r == nil {
		return nil, errors.New("gpu: no CUDA runtime was loaded (setup.Env.MapTier checks for one)")
	}
	n, err := r.DeviceCount()
	if err != nil {
		return nil, cli.Input(err)
	}
	ids, err := parseGPUs(b.opts.GPUs, n)
	if err != nil {
		return nil, cli.Input(err)
	}
	dev, err := gpuOfRank(ids, b.opts.LocalRank, b.opts.GPUs)
	if err != nil {
		return nil, cli.Input(err)
	}
	var free int64
	if !b.plan.Scanned || loopReach(b.cfg, b.plan, "gpu") {
		d, err := r.Device(dev)
		if err != nil {
			return nil, cli.Input(err)
		}
		free = int64(min(d.FreeBytes, 1<<62))
	}
	size := gpuArena(b.cfg, b.plan, free)
	if !Planned(b.plan) {
		b.note(fmt.Sprintf("the gpu tier's arena of a trace not read before the replay (a pipe, or --no-prescan) holds %s, half the device's free memory: past it kvreplay evicts LRU objects", cli.FormatBytes(size)))
	}
	g, _, err := gpu.New(r, gpu.Options{Device: dev, Capacity: size, Slots: b.cfg.QueueDepth, StageBytes: b.cfg.BlockSize})
	if err != nil {
		return nil, cli.Input(err)
	}
	b.where(schema.PathInfo{Backend: "gpu", Path: fmt.Sprintf("GPU %d, %s arena", dev, cli.FormatBytes(size)), GPU: &schema.GPUPath{}})
	return g, nil
}

// gpuOfRank is the GPU of ids a rank takes: the one at its local rank.
// A rank whose local rank the launcher does not say (launch.LocalUnknown)
// takes the one GPU given; of several it could take one another rank on
// its host takes, every rank the first, and contend for it unseen: an
// error.
func gpuOfRank(ids []int, local int, gpus string) (int, error) {
	if local >= 0 {
		return ids[local%len(ids)], nil
	}
	if len(ids) == 1 {
		return ids[0], nil
	}
	which := fmt.Sprintf("the %d GPUs here", len(ids))
	if gpus != "" {
		which = "--gpus " + parsemsg.Arg(gpus)
	}
	return 0, fmt.Errorf("--tier-map ...=gpu: the launcher does not say where this rank stands among the ranks on its host (its local rank), so it cannot take its own of %s: ranks on one host would all take the first; give each rank one GPU with --gpus N (--gpus 0 where each rank has a host of its own), or start the ranks with a launcher that sets a local rank (mpirun, srun)", which)
}

// gpuArena is the gpu tier's arena: the plan's peak of the tiers mapped
// to gpu, 1 MiB at least; planned from sidecars, with a page for each
// object it can hold (RAMSize's reason), and for traces nothing sized (a
// pipe, --no-prescan without sidecars) replay.FitShare of free, the
// device's free memory, as RAMSize's arena of the memory available: the
// plan of nothing made an arena of 1 MiB, and the replay stopped at its
// first larger object (exit 1). A closed loop's arena holds what the loop
// can keep live (Plan.Reach), within that share of free, as RAMSize's
// does: its users run ahead or behind the trace's times, and an arena of
// the trace's peak evicted objects the loop still read.
func gpuArena(cfg *replay.Config, plan *replay.Plan, free int64) int64 {
	peak := max(plan.Peak["gpu"], 1<<20)
	room := int64(replay.FitShare*float64(free)) &^ (1<<20 - 1)
	switch {
	case plan.Scanned && loopReach(cfg, plan, "gpu"):
		return max(peak, min(plan.Reach["gpu"], room))
	case plan.Scanned:
		return peak
	case plan.FromMeta:
		return max(peak, min(peak+plan.PeakObjects["gpu"]*arena.Align, room))
	}
	return max(peak, room)
}

// loopReach reports whether a closed loop can keep more live on backend
// than the trace's peak (Plan.Reach).
func loopReach(cfg *replay.Config, plan *replay.Plan, backend string) bool {
	return cfg.ClosedLoop && plan.Reach[backend] > max(plan.Peak[backend], 1<<20)
}

// parseGPUs parses --gpus against the n devices there are; "" is all.
func parseGPUs(s string, n int) ([]int, error) {
	if s == "" {
		if n == 0 {
			return nil, errors.New("--tier-map ...=gpu: the CUDA runtime reports no GPU")
		}
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i
		}
		return ids, nil
	}
	var ids []int
	for _, f := range strings.Split(s, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 || i >= n {
			return nil, fmt.Errorf("--gpus %s: %q is not one of the %d GPUs here (0 to %d)", parsemsg.Arg(s), f, n, n-1)
		}
		ids = append(ids, i)
	}
	return ids, nil
}

// OpenGDS loads libcufile and opens its driver for --gds, before any I/O:
// without it, or without a gpu and an nvme tier to move between, the run
// stops here; nothing falls back to host memory quietly. A tier MapTier
// refused (a gpu tier without a runtime) has said why already: OpenGDS
// then adds nothing.
func (e *Env) OpenGDS(cfg *replay.Config) error {
	if e.refused {
		return nil
	}
	if !mapsTo(cfg, "gpu") || !mapsTo(cfg, "nvme") {
		return errors.New("--gds moves objects between a gpu tier and an nvme tier: map one tier to gpu and one to nvme (--tier-map Tier-0=gpu,Tier-2=nvme)")
	}
	f, err := cuda.LoadCuFile()
	if err != nil {
		return fmt.Errorf("--gds: %w: drop --gds to move the gpu tier's objects through pinned host memory (kvreplay --list-devices shows what this machine offers)", err)
	}
	if err := f.Open(); err != nil {
		return fmt.Errorf("--gds: %s loads, but its driver does not open: %w", f.Path, err)
	}
	e.cufile = f
	return nil
}

// gdsProbe registers a file of its own in dir (the NVMe tier's run
// directory) with cuFile and releases it, so that --gds stops before any
// I/O where cuFile refuses the files of dir's file system, not at its
// first move. On an H100 in a virtual machine without udev, cuFile found
// no udev property of the disk (cufile.log: "udev property not found:
// ID_FS_USAGE") and refused every file (CU_FILE_HANDLE_NOT_REGISTERED).
// The probe is opened as the tier opens its files: O_DIRECT unless
// buffered. shown is where the user put the tier (--dir).
func gdsProbe(f *cuda.CuFile, dir, shown string, direct bool) error {
	p := filepath.Join(dir, "gds-probe")
	flags := unix.O_RDWR | unix.O_CREAT | unix.O_EXCL | unix.O_CLOEXEC
	if direct {
		flags |= unix.O_DIRECT
	}
	fd, err := unix.Open(p, flags, 0o600)
	if err != nil {
		return fmt.Errorf("--gds: a probe file in %s: %w", shown, err)
	}
	defer os.Remove(p)
	defer unix.Close(fd)
	h, err := f.RegisterFile(fd)
	if err != nil {
		return fmt.Errorf("--gds: cuFile refuses the files in %s: %w; its cufile.log (in the working directory) says why: where it finds no udev property of the device, as on a machine without udev, it takes no file there; drop --gds to move through host memory", shown, err)
	}
	f.DeregisterFile(h)
	return nil
}

// gdsPath is what --gds moved in the run, nil without --gds.
func gdsPath(f *cuda.CuFile, st gds.Stats) *schema.GDSPath {
	if f == nil {
		return nil
	}
	lib := f.Path
	if v, ok := f.Version(); ok {
		lib += " " + cuda.VersionString(v)
	}
	dir := func(d gds.Direction) schema.GDSDirection {
		g := schema.GDSDirection{Blocks: d.Blocks, Bytes: d.Bytes, CallS: d.Seconds}
		if d.Seconds > 0 {
			g.CallGBps = float64(d.Bytes) / d.Seconds / 1e9
		}
		return g
	}
	return &schema.GDSPath{Library: lib, BufferRegistration: st.BufferRegistration, ToFile: dir(st.ToFile), FromFile: dir(st.FromFile)}
}

// ListDevices prints the GPUs the CUDA runtime reports and whether
// GPUDirect Storage's libcufile loads: on any machine, with or without
// GPUs.
func ListDevices(w io.Writer) error {
	r, err := cuda.Load()
	if err != nil {
		fmt.Fprintf(w, "CUDA runtime: none (%v)\n", err)
	} else {
		fmt.Fprintf(w, "CUDA runtime: %s", r.Path)
		if drv, rt, err := r.Versions(); err == nil {
			fmt.Fprintf(w, " (runtime %s, driver %s)", cuda.VersionString(rt), cuda.VersionString(drv))
		}
		fmt.Fprintln(w)
		n, err := r.DeviceCount()
		if err != nil {
			fmt.Fprintf(w, "GPUs: none (%v)\n", err)
		}
		for i := range n {
			d, err := r.Device(i)
			if err != nil {
				fmt.Fprintf(w, "GPU %d: %v\n", i, err)
				continue
			}
			link := gpu.PCIeLink(d.PCIBusID)
			if link == "" {
				link = "link not in sysfs"
			}
			fmt.Fprintf(w, "GPU %d: %s, %s (%s free), PCI %s, %s\n", i, d.Name, cli.FormatBytes(int64(d.TotalBytes)), cli.FormatBytes(int64(d.FreeBytes)), d.PCIBusID, link)
		}
	}
	fmt.Fprintf(w, "cuFile (GPUDirect Storage): %s\n", cuFileStatus())
	_, err = fmt.Fprintln(w, "kvreplay's GPU tier (--tier-map Tier-0=gpu) copies through the CUDA runtime, and --gds moves through libcufile; both ran on an H100 (CUDA 13.0), --gds in cuFile's compatibility mode only (bench/gpu-check.sh)")
	return err
}

// cuFileStatus says whether libcufile loads here and its driver opens.
func cuFileStatus() string {
	f, err := cuda.LoadCuFile()
	if err != nil {
		return fmt.Sprintf("none (%v)", err)
	}
	what := f.Path
	if v, ok := f.Version(); ok {
		what += " " + cuda.VersionString(v)
	}
	if err := f.Open(); err != nil {
		return fmt.Sprintf("%s, but its driver does not open: %v", what, err)
	}
	f.Close()
	return what + ", driver opens"
}
