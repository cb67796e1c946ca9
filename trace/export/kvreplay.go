package export

import (
	"math"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/schema"
)

// KvreplayEngines maps fio's ioengines to kvreplay's --engine of the same
// I/O: io_uring to uring (batched, registered buffers) and psync (pread
// and pwrite) to psync. Other ioengines have no counterpart.
var KvreplayEngines = map[string]string{"io_uring": "uring", "psync": "psync"}

// Kvreplay returns the options of the kvreplay command line that replays
// the trace as the job of o does, so that fio's figures and kvreplay's are
// of the same I/O: every option whose default differs from the job's is
// given (kvreplay's defaults are --layout dir, --speed 1, Tier-1 in RAM),
// the exported tiers on its nvme backend in --dir and the others on null
// (their rows move objects and do no I/O, as in the job). The trace is
// o.Source ("TRACE" when unset). notes says what of the job no kvreplay
// option gives; the job file carries both.
func (o FioOptions) Kvreplay() (args, notes []string) {
	o = o.withDefaults()
	var tiers []string
	exported := map[schema.Tier]bool{}
	for _, t := range o.Tiers {
		exported[t] = true
	}
	for t := range schema.Tier(schema.NumTiers) {
		b := "null"
		if exported[t] {
			b = "nvme"
		}
		tiers = append(tiers, t.String()+"="+b)
	}
	speed := "max"
	if o.Speed == SpeedTimed {
		speed = "1"
	}
	args = []string{"--layout", o.Layout, "--tier-map", strings.Join(tiers, ","), "--size-scale", formatScale(o.SizeScale),
		"--block-size", formatSize(o.BlockSize), "--queue-depth", strconv.Itoa(o.IODepth)}
	if e, ok := KvreplayEngines[o.Engine]; ok {
		args = append(args, "--engine", e)
	} else {
		notes = append(notes, "ioengine="+o.Engine+" has no kvreplay engine (io_uring is its uring, psync its psync)")
	}
	args = append(args, "--speed", speed)
	if o.Buffered {
		args = append(args, "--buffered")
	}
	if o.NoPrescan {
		args = append(args, "--no-prescan")
	}
	src := o.Source
	if src == "" {
		src = "TRACE"
	}
	args = append(args, "--dir", o.Dir, src)
	notes = append(notes, "objects are aligned to "+strconv.FormatInt(o.Align, 10)+" bytes, as kvreplay aligns them on a drive of that alignment "+
		"(the file system's direct-I/O alignment or the device's logical block size, at least 4096)")
	if len(o.Tiers) > 1 {
		notes = append(notes, "each tier's replay job keeps iodepth="+strconv.Itoa(o.IODepth)+" I/Os in flight; kvreplay's --queue-depth bounds those of all its tiers together")
		if o.Layout == LayoutExtent {
			notes = append(notes, "kvreplay keeps every tier on its nvme backend in one extent file; the job keeps one file per tier")
		}
	}
	if o.Layout == LayoutDir {
		notes = append(notes, "kvreplay makes an object's file (fallocate) at each write and removes it at each delete; "+
			"the job's prep job wrote every file before the replay, and the job removes none (an iolog cannot)")
		if o.NoPrescan || o.Source == "-" {
			notes = append(notes, "kvreplay bounds Tier-2 of a trace it does not read first at half of --dir's free space, "+
				"evicting least recently used objects past it, which the job does not: give it --capacity above the trace's peak")
		}
	}
	return args, notes
}

// KvreplayLine is the kvreplay command line of Kvreplay, quoted for a
// POSIX shell where an argument needs it.
func (o FioOptions) KvreplayLine() string {
	args, _ := o.Kvreplay()
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return "kvreplay " + strings.Join(q, " ")
}

// shellQuote quotes s for a POSIX shell unless it holds only characters
// that need none.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,+:@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// formatScale writes a size scale as kvreplay's --size-scale reads it
// back to the same value: 1/N where it is one, else the shortest decimal.
func formatScale(s float64) string {
	if s > 0 && s < 1 {
		if d := 1 / s; d == math.Round(d) && d < 1<<53 && 1/d == s {
			return "1/" + strconv.FormatFloat(d, 'f', 0, 64)
		}
	}
	return strconv.FormatFloat(s, 'g', -1, 64)
}

// formatSize writes a byte count as kvreplay's byte-size options read it:
// in the largest binary unit that divides it exactly.
func formatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}
