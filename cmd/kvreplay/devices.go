package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/gpu"
	"github.com/kvbench/kvbench/replay/ioengine/gds"
	"github.com/kvbench/kvbench/schema"
)

// listDevices prints the GPUs the CUDA runtime reports and whether
// GPUDirect Storage's libcufile loads: on any machine, with or without
// GPUs, and exits 0.
func listDevices(w io.Writer) error {
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
			fmt.Fprintf(w, "GPU %d: %s, %s (%s free), PCI %s\n", i, d.Name, cli.FormatBytes(int64(d.TotalBytes)), cli.FormatBytes(int64(d.FreeBytes)), d.PCIBusID)
		}
	}
	fmt.Fprintf(w, "cuFile (GPUDirect Storage): %s\n", cuFileStatus())
	fmt.Fprintln(w, "kvreplay's GPU tier (--tier-map Tier-0=gpu) copies through the CUDA runtime, and --gds moves through libcufile; both have been tested against fake libraries only, not yet on a GPU")
	return nil
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

// mapsTo reports whether cfg maps a tier to backend.
func mapsTo(cfg *replay.Config, backend string) bool {
	for _, b := range cfg.TierMap {
		if b == backend {
			return true
		}
	}
	return false
}

// openGDS loads libcufile and opens its driver for --gds, before any
// I/O: without it, or without a gpu and an nvme tier to move between, the
// run stops here; nothing falls back to host memory quietly.
func (o *options) openGDS() error {
	if !mapsTo(&o.cfg, "gpu") || !mapsTo(&o.cfg, "nvme") {
		return errors.New("--gds moves objects between a gpu tier and an nvme tier: map one tier to gpu and one to nvme (--tier-map Tier-0=gpu,Tier-2=nvme)")
	}
	f, err := cuda.LoadCuFile()
	if err != nil {
		return fmt.Errorf("--gds: %w: drop --gds to move the gpu tier's objects through pinned host memory (kvreplay --list-devices shows what this machine offers)", err)
	}
	if err := f.Open(); err != nil {
		return fmt.Errorf("--gds: %s loads, but its driver does not open: %w", f.Path, err)
	}
	o.cufile = f
	return nil
}

// gdsPath is what --gds moved in the run, nil without --gds.
func (o *options) gdsPath() *schema.GDSPath {
	if o.cufile == nil {
		return nil
	}
	lib := o.cufile.Path
	if v, ok := o.cufile.Version(); ok {
		lib += " " + cuda.VersionString(v)
	}
	dir := func(d gds.Direction) schema.GDSDirection {
		g := schema.GDSDirection{Blocks: d.Blocks, Bytes: d.Bytes, CallS: d.Seconds}
		if d.Seconds > 0 {
			g.CallGBps = float64(d.Bytes) / d.Seconds / 1e9
		}
		return g
	}
	return &schema.GDSPath{Library: lib, BufferRegistration: o.gdsStats.BufferRegistration,
		ToFile: dir(o.gdsStats.ToFile), FromFile: dir(o.gdsStats.FromFile)}
}

// gpuRuntime checks, before any I/O, that --tier-map T=gpu can be
// served: a CUDA runtime loads and reports a device, and it returns that
// runtime for the gpu tier. Without one the run stops here, naming
// --tier-map T=ram; nothing falls back quietly.
func gpuRuntime(tier string) (*cuda.Runtime, error) {
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
	if found == "" {
		return r, nil
	}
	return nil, fmt.Errorf("--tier-map %s=gpu: %s: replay the tier in RAM with --tier-map %s=ram (kvreplay --list-devices shows what this machine offers)", tier, found, tier)
}

// makeGPU makes the gpu tier's backend: an arena of the trace's peak
// live bytes on the tiers mapped to gpu, on the GPU of this rank (--gpus,
// taken at the local rank).
func makeGPU(o *options, plan *replay.Plan) (backend.Backend, schema.PathInfo, error) {
	var pi schema.PathInfo
	r := o.cuda // loaded and checked by parse
	n, err := r.DeviceCount()
	if err != nil {
		return nil, pi, cli.Input(err)
	}
	ids, err := parseGPUs(o.gpus, n)
	if err != nil {
		return nil, pi, cli.Input(err)
	}
	dev := ids[o.rank.local%len(ids)]
	size := max(plan.Peak["gpu"], 1<<20)
	b, info, err := gpu.New(r, gpu.Options{Device: dev, Capacity: size, Slots: o.cfg.QueueDepth, StageBytes: o.cfg.BlockSize})
	if err != nil {
		return nil, pi, cli.Input(err)
	}
	d := info.Device
	pi = schema.PathInfo{Backend: "gpu", Path: fmt.Sprintf("GPU %d, %s arena", dev, cli.FormatBytes(size)),
		Device: fmt.Sprintf("%s (PCI %s, driver %s, runtime %s)", d.Name, d.PCIBusID, info.Driver, info.Runtime),
		Model:  d.Name,
		GPU: &schema.GPUPath{Name: d.Name, PCIBusID: d.PCIBusID, PCIeLink: info.Link, Driver: info.Driver, Runtime: info.Runtime,
			Copies: fmt.Sprintf("host-to-device and device-to-host through %d pinned staging buffers of %s, a stream each, timed by CUDA events",
				o.cfg.QueueDepth, cli.FormatBytes(o.cfg.BlockSize))}}
	o.afterRun = append(o.afterRun, func(res *schema.Result) {
		c := b.Copies()
		for i := range res.Host.TierPaths {
			if g := res.Host.TierPaths[i].GPU; g != nil {
				g.HostToDevice = gpuDirection(c.H2D)
				g.DeviceToHost = gpuDirection(c.D2H)
				g.RAMArena, g.GDS = o.ramArena, o.gdsPath()
			}
		}
	})
	return b, pi, nil
}

// gpuDirection is a direction's copies for the result.
func gpuDirection(d gpu.Direction) schema.GPUDirection {
	return schema.GPUDirection{Copies: d.Copies, Bytes: d.Bytes, DeviceS: d.DeviceS, CopyGBps: d.GBps()}
}

// parseGPUs parses --gpus against the n devices there are; "" is all.
func parseGPUs(s string, n int) ([]int, error) {
	if s == "" {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i
		}
		if n == 0 {
			return nil, errors.New("--tier-map ...=gpu: the CUDA runtime reports no GPU")
		}
		return ids, nil
	}
	var ids []int
	for _, f := range strings.Split(s, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 || i >= n {
			return nil, fmt.Errorf("--gpus %s: %q is not one of the %d GPUs here (0 to %d)", s, f, n, n-1)
		}
		ids = append(ids, i)
	}
	return ids, nil
}
