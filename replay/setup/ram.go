package setup

import (
	"fmt"
	"math"
	"strconv"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/ram"
	"github.com/kvbench/kvbench/schema"
)

// defaultRAM is the least RAM arena of a trace nothing sized (a pipe with
// no sidecar), and its size where the machine's memory is unknown.
const defaultRAM = 1 << 30

// newRAM makes the RAM tier: an arena of RAMSize, refused when it passes
// 8/10 of the machine's memory. An arena sized by guess (a trace nothing
// counted) is not prefaulted, and shrinks where the kernel will not
// reserve it (strict overcommit); a closed loop's is prefaulted for the
// trace's peak.
func newRAM(b *builder) (backend.Backend, error) {
	size, prefault := RAMSize(b.cfg, b.plan, b.opts.RAMBudget)
	populate := prefault > 0
	if mem := host.Facts().MemoryB; mem > 0 && size > mem*8/10 {
		return nil, cli.Input(b.notFit(fmt.Errorf("the RAM tier needs %s and this machine has %s of memory: use --size-scale (e.g. %s), map a tier to nvme, or set --ram-budget (kvreplay then evicts LRU objects)",
			cli.FormatBytes(size), cli.FormatBytes(mem), suggestScale(size, mem))))
	}
	opts := []ram.Option{ram.Populate()}
	switch {
	case !populate:
		opts = []ram.Option{ram.NoReserve()}
	case prefault < size:
		opts = []ram.Option{ram.PopulateFirst(prefault)}
		if b.plan.Scanned {
			b.note(loopArenaNote(size, prefault, b.plan.Reach["ram"]))
		}
	}
	r, err := ram.New(size, opts...)
	for err != nil && !populate && size > defaultRAM {
		size /= 2
		r, err = ram.New(size, opts...)
	}
	if err != nil {
		return nil, err
	}
	if !populate && b.opts.RAMBudget == 0 {
		b.note(fmt.Sprintf("the RAM tier's arena of a trace not read before the replay (a pipe, or --no-prescan) reserves %s, half the memory available, and grows into it: "+
			"its pages are committed as objects first use them (first writes to a page fault), it holds at most what the trace has held so far (as a trace file's arena holds its peak), and past it kvreplay evicts LRU objects (--ram-budget sets its size)", cli.FormatBytes(size)))
	}
	b.where(schema.PathInfo{Backend: "ram", Path: "anonymous mmap " + cli.FormatBytes(size)})
	return r, nil
}

// loopArenaNote says what a closed loop's RAM arena of size bytes, of
// which prefault (the trace's peak) were prefaulted, holds of reach, the
// most its users can keep live (replay.ArenaBytes): all of it, or, where
// replay.FitShare of the memory available holds less, that much, past
// which the replay evicts.
func loopArenaNote(size, prefault, reach int64) string {
	holds := "holds every object its users put there (a closed loop's order is not the trace's, and can keep more live than the trace's peak)"
	if size < reach {
		holds = fmt.Sprintf("holds as much of the %s its users put there as %s of the memory available holds beside the engine's state, past which kvreplay evicts least recently used objects "+
			"(a closed loop's order is not the trace's, and can keep more live than the trace's peak)", cli.FormatBytes(reach), replay.FitShareText())
	}
	return fmt.Sprintf("the RAM tier's arena of a closed loop, %s, %s; its first %s, the trace's peak, were prefaulted, "+
		"the rest is committed as objects first use it (a first write to a page past them faults)", cli.FormatBytes(size), holds, cli.FormatBytes(prefault))
}

// RAMSize is the RAM arena's size: budget (--ram-budget) when set, else
// the plan's peak live bytes on the RAM tier (the engine waits for frees
// in trace order and the arena cannot fragment, so the peak is enough),
// or a closed loop's reach within the memory available
// (replay.ArenaBytes), or, planned from sidecars, their peak and a page
// for each object it can hold, prefaulted for the peak, else, for a trace
// nothing sized, an arena that grows: it reserves replay.FitShare of the memory available beside the engine's own, and is
// not prefaulted, so the kernel commits its pages as objects first use
// them (the arena places objects first fit by address, so they stay low:
// its memory follows the most bytes live at once); the replay waits for
// frees and evicts LRU objects within it, as within any bounded tier.
// prefault is the bytes to prefault from its start: all of it, but the
// trace's peak of a closed loop's larger arena and the sidecars' peak of
// theirs, and none of an arena sized by guess.
func RAMSize(cfg *replay.Config, plan *replay.Plan, budget int64) (size, prefault int64) {
	switch {
	case budget > 0:
		return budget, budget
	case plan.Scanned:
		size = replay.ArenaBytes(cfg, plan.Peak["ram"], plan.Reach["ram"], plan.Objects, hostMemory())
		return size, min(size, max(plan.Peak["ram"], 1<<20))
	case plan.FromMeta:
		// The sidecars' peaks are of the trace's sizes, scaled as one
		// sum, while each object takes whole pages of the arena: the
		// arena holds a page more for each object that can be live
		// (Plan.PeakObjects), within the share of memory, and prefaults
		// the sidecars' peak (the MLPerf 8B trace at 1/256, --no-prescan:
		// an arena of the sum, 12.80 MiB, against a peak of 12.82 MiB,
		// evicted 1570 objects that nothing bounded).
		peak := max(plan.Peak["ram"], 1<<20)
		room := int64(replay.FitShare*float64(hostMemory())) - replay.EngineMemory(cfg, plan.Objects)
		size = max(peak, min(peak+plan.PeakObjects["ram"]*ram.Align, room&^(1<<20-1)))
		return size, peak
	}
	avail, total := host.Memory()
	if avail == 0 {
		avail = total / 2
	}
	if avail <= 0 {
		return defaultRAM, 0
	}
	size = int64(replay.FitShare*float64(avail)) - replay.EngineMemory(cfg, plan.Objects)
	return max(size&^(1<<20-1), min(defaultRAM, avail/4)), 0
}

// hostMemory is the memory a replay may count on here (replay.Machine's).
func hostMemory() int64 {
	avail, total := host.Memory()
	return replay.Machine{MemAvailable: avail, MemTotal: total}.Memory()
}

// suggestScale is a --size-scale 1/2^k that brings need bytes within a
// quarter of mem.
func suggestScale(need, mem int64) string {
	d := math.Pow(2, math.Ceil(math.Log2(float64(need)/float64(mem/4))))
	return "1/" + strconv.FormatFloat(d, 'f', 0, 64)
}
