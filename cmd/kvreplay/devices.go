package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cuda"
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
	if ok, what := cuda.CuFile(); ok {
		fmt.Fprintf(w, "cuFile (GPUDirect Storage): %s\n", what)
	} else {
		fmt.Fprintf(w, "cuFile (GPUDirect Storage): none (%s)\n", what)
	}
	fmt.Fprintln(w, "kvreplay's GPU tier is not built yet: replay Tier-0 rows in RAM (--tier-map Tier-0=ram)")
	return nil
}

// gpuTierError is why --tier-map T=gpu stops the run before any I/O:
// what this machine has, and the way to replay the tier anyway.
func gpuTierError(tier string) error {
	found := "no GPU found"
	if r, err := cuda.Load(); err != nil {
		found = "no CUDA runtime here"
		if !errors.Is(err, cuda.ErrNoRuntime) {
			found = err.Error()
		}
	} else if n, err := r.DeviceCount(); err == nil && n > 0 {
		found = fmt.Sprintf("%d GPUs found, but kvreplay's GPU backend is not built yet (kvreplay --list-devices)", n)
	}
	return fmt.Errorf("--tier-map %s=gpu: %s: replay the tier in RAM with --tier-map %s=ram", tier, found, tier)
}
