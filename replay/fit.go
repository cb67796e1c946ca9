package replay

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// Fitting a replay to a machine (design section 5): before any I/O, the
// plan knows what the replay needs (each backend's peak live bytes, its
// bytes written and read, the bandwidth the trace's pace asks for) and the
// caller knows what the machine has (its memory, the free space where the
// NVMe tier lives). Advise compares them and finds the options that make
// the replay fit: kvreplay --plan prints them, --fit applies them, and a
// replay that cannot start says them in its error. Every size is the one
// the replay allocates; a smaller size scale is bounded from the plan's
// (peakAt) and planned exactly again once chosen.

// The figures a plan assumes of a machine, stated wherever one is shown
// and never measured: the rates are those a modest machine sustains
// (memcpy and data generation on a core or two; one NVMe SSD or a good
// cloud volume under mixed reads and writes; one client's requests to an
// object store over a network), and a fitted replay asks
// for at most FitShare of each, of the memory available and of the free
// space, so that the replay keeps the trace's pace with room for the page
// cache, other processes and a disk slower than assumed.
const (
	AssumedRAMRate    = 4e9    // bytes/s
	AssumedDiskRate   = 1e9    // bytes/s
	AssumedObjectRate = 0.25e9 // bytes/s, the s3 backend
	FitShare          = 0.5
)

// An object store serves a client's requests one at a time on each of its
// connections, each a round trip and the store's own work: tens of
// milliseconds for a small object on a cloud store. So it serves at most
// ObjectRequests requests in flight (s3's --s3-concurrency, else
// DefaultObjectRequests) per AssumedObjectRequest, whatever their size:
// at the small size scales a plan picks, its objects are small and the
// requests, not the bytes, are what the trace's pace asks of it. Up to the
// s3 tier's part size (Config.S3PartSize) an object operation is one
// request, whatever the size scale; above it the tier writes an object in
// a multipart upload (its create, a PUT of each part, its complete: parts
// + 2 requests) and reads it in a GET of each part, so a larger size scale
// asks more requests of the same rows (Plan.Ops counts them at the plan's
// scale, which bounds them at a smaller one).
const (
	AssumedObjectRequest  = 20 * time.Millisecond
	DefaultObjectRequests = 16
)

// EngineMemory is the memory the engine itself takes beside the RAM
// arena, by the design's bound (64 MiB and a queue depth of blocks) plus
// the state it keeps per object (a few hundred bytes; counted as 1 KiB)
// for objects objects, at least 256 Ki of them. kvreplay's soft memory
// limit starts here.
func EngineMemory(cfg *Config, objects int64) int64 {
	return 56<<20 + int64(cfg.QueueDepth)*cfg.BlockSize + 1024*max(objects, 256<<10)
}

// ExtentBytes is the size of the extent layout's file for an NVMe tier of
// peak live bytes whose largest object is big: room for first-fit
// fragmentation (internal/extent's churn tests: the highest address used
// stays under 1.5x the live bytes for KV-shaped workloads) and a few of
// the largest objects.
func ExtentBytes(peak, big int64) int64 {
	return peak + peak/4 + 8*big + 1<<20
}

// Machine is what a machine offers a replay, as the caller found it; 0 is
// unknown, but for DiskFree, where 0 is a full file system and -1 unknown.
type Machine struct {
	// MemAvailable and MemTotal are /proc/meminfo's.
	MemAvailable int64 `json:"mem_available_bytes"`
	MemTotal     int64 `json:"mem_total_bytes"`
	// Disk is where the NVMe tier would live (--dir, the temp dir, or
	// --device) and DiskFree what it may take there: the file system's
	// free space (with the size of an existing --device file, whose
	// blocks are reused), or a block device's size (DiskIsDevice).
	Disk         string `json:"disk"`
	DiskFree     int64  `json:"disk_free_bytes"`
	DiskIsDevice bool   `json:"disk_is_device,omitempty"`
	// DiskSpace names the file system that holds Disk as every message
	// of a full or too small one names it (cli.DescribeSpace): "ext4 on
	// /mnt/nvme (/dev/nvme0n1p2): 1.20 GiB free of 1.75 TiB"; "" for a
	// block device, or where the caller did not find it.
	DiskSpace string `json:"disk_file_system,omitempty"`
	// DiskGateway names the FUSE gateway of an object store that Disk is
	// on (s3fs, rclone, mountpoint-s3, ...), "" for a disk: the NVMe tier
	// there moves at an object store's rate (Rate, OpsRate).
	DiskGateway string `json:"disk_gateway,omitempty"`
	// ObjectRequests is the requests in flight the s3 tier keeps
	// (--s3-concurrency); 0 is DefaultObjectRequests.
	ObjectRequests int `json:"object_requests_in_flight,omitempty"`
}

// SpaceText is DiskSpace in parentheses, after a space, for a message
// that names Disk; "" where it is unknown.
func (m Machine) SpaceText() string {
	if m.DiskSpace == "" {
		return ""
	}
	return " (" + m.DiskSpace + ")"
}

// Rate is the bandwidth a plan assumes of backend on m: AssumedRate's,
// but the object store's for an NVMe tier on an object store's gateway.
func (m Machine) Rate(backend string) float64 {
	if backend == "nvme" && m.DiskGateway != "" {
		return AssumedObjectRate
	}
	return AssumedRate(backend)
}

// OpsRate is the operations a second a plan assumes of backend on m: an
// object store's (the s3 tier, or an NVMe tier on an object store's
// gateway), its requests in flight over AssumedObjectRequest; 0 (no
// bound) for the others.
func (m Machine) OpsRate(backend string) float64 {
	return float64(m.InFlight(backend)) / AssumedObjectRequest.Seconds()
}

// InFlight is the requests in flight a plan assumes of backend on m when
// it is an object store: the s3 tier's ObjectRequests, a gateway's
// DefaultObjectRequests; 0 for the others.
func (m Machine) InFlight(backend string) int {
	switch {
	case backend == "s3" && m.ObjectRequests > 0:
		return m.ObjectRequests
	case backend == "s3", backend == "nvme" && m.DiskGateway != "":
		return DefaultObjectRequests
	}
	return 0
}

// overRequests reports whether b asks more operations a second than the
// share of those assumed of its backend (Machine.OpsRate).
func (a *Advice) overRequests(b Need) bool {
	ops := a.Machine.OpsRate(b.Backend)
	return ops > 0 && b.OpsRate > FitShare*ops
}

// OpsText says the operations a second b asks of an object store ("398
// operations/s"), "" for a backend the plan bounds no requests of.
func (a *Advice) OpsText(b Need) string {
	if b.OpsRate <= 0 || a.Machine.OpsRate(b.Backend) <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f operations/s", b.OpsRate)
}

// Memory is the memory a replay may count on: what is available, else
// the total.
func (m Machine) Memory() int64 {
	if m.MemAvailable > 0 {
		return m.MemAvailable
	}
	return m.MemTotal
}

// Sizing is how the caller makes the backends from a plan.
type Sizing struct {
	// RAMBudget is the RAM arena's size (--ram-budget); 0 sizes it at the
	// plan's peak.
	RAMBudget int64
	// Extent says that the NVMe tier is one extent file or device
	// (ExtentBytes), not a directory of one file per object.
	Extent bool

	mem int64 // the machine's memory (Machine.Memory), for ArenaBytes
}

// ArenaBytes is the RAM arena a replay of cfg makes (without
// --ram-budget) for a RAM tier that holds peak bytes at most in the
// trace's order and reach bytes in any order (Plan.Peak, Plan.Reach),
// beside the engine's state for objects objects, on a machine of mem bytes
// (available, else total; 0: unknown): the peak, 1 MiB at least. A closed
// loop releases the users' requests in another order than the trace's
// (each user waits for its own storage), so more can be live at once (8
// of a 20-user trace's users, closed-loop, outgrew an arena of the trace's
// peak of 3.9 MiB by 2x): its arena is the reach, as much of it as
// FitShare of mem holds beside the engine's state, never less than the
// peak. Past the arena the replay evicts least recently used objects,
// counted in the result.
func ArenaBytes(cfg *Config, peak, reach, objects, mem int64) int64 {
	size := max(peak, 1<<20)
	if !cfg.ClosedLoop || reach <= size || mem <= 0 {
		return size
	}
	return max(size, min(reach, arenaRoom(cfg, objects, mem)))
}

// arenaRoom is what FitShare of mem holds beside the engine's state for
// objects objects, in whole MiB (negative when the state alone passes
// it): the most a closed loop's arena takes of the memory beyond the peak.
func arenaRoom(cfg *Config, objects, mem int64) int64 {
	return (int64(FitShare*float64(mem)) - EngineMemory(cfg, objects)) &^ (1<<20 - 1)
}

// Need is what one backend asks of the machine.
type Need struct {
	Backend string   `json:"backend"`
	Tiers   []string `json:"tiers"`
	// Peak is the most bytes live at once, as allocated; MaxObject the
	// largest object.
	Peak      int64 `json:"peak_live_bytes"`
	MaxObject int64 `json:"largest_object_bytes"`
	// Reach, for a closed loop, is the most bytes it can keep live at
	// once, in its order (Plan.Reach); 0 for an open loop, whose order is
	// the trace's.
	Reach int64 `json:"closed_loop_reach_bytes,omitempty"`
	// Written and Read are the logical bytes the replay moves.
	Written int64 `json:"written_bytes"`
	Read    int64 `json:"read_bytes"`
	// Rate is the bandwidth the trace's pace asks for: the bytes over the
	// replay's wall time; 0 at --speed max, which asks for all there is.
	Rate float64 `json:"asked_bytes_per_s"`
	// Ops are the operations the replay makes of it (Plan.Ops: the s3
	// tier's requests, a multipart upload's and a parted read's each),
	// OpsRate those over the replay's wall time (0 at --speed max). At a
	// smaller scale than the plan's they are the plan's, a bound: a
	// smaller object has no more parts.
	Ops     int64   `json:"operations"`
	OpsRate float64 `json:"asked_operations_per_s"`
}

// Needs is what a replay asks of the machine at one size scale.
type Needs struct {
	Scale float64 `json:"size_scale"`
	// Exact says that the figures come from a prescan at this scale;
	// otherwise they bound those of one (peakAt).
	Exact    bool   `json:"exact"`
	Backends []Need `json:"backends"`
	Objects  int64  `json:"objects"`
	// Memory is the RAM the process takes: the RAM arena (Arena:
	// --ram-budget, or ArenaBytes) and the engine's state (EngineMemory);
	// Disk the space the NVMe tier takes.
	Memory int64 `json:"memory_bytes"`
	Arena  int64 `json:"ram_arena_bytes,omitempty"`
	Disk   int64 `json:"disk_bytes"`
	// Span is the trace time replayed, WallS the replay's wall time at
	// --speed (0 at max).
	SpanS float64 `json:"trace_span_s"`
	WallS float64 `json:"wall_s"`

	// capacity is --capacity, which bounds the backend Tier-2 maps to,
	// capBackend (0: none): each of its objects must fit in it.
	capacity   int64
	capBackend string
	// depth and block are --queue-depth and --block-size, whose I/O
	// buffers (depth x block) are part of EngineMemory.
	depth int
	block int64
}

// need returns the need of the backend named name, nil when none.
func (n *Needs) need(name string) *Need {
	for i := range n.Backends {
		if n.Backends[i].Backend == name {
			return &n.Backends[i]
		}
	}
	return nil
}

// peakAt bounds a peak of peak bytes with objects objects live at most,
// planned at scale from, at the smaller scale to: each object's size
// scales, and rounds up by less than planAlign (an object of size s at
// scale f takes at most f*s + planAlign, and at least f*s - 1 at from).
// A smaller scale never needs more than a larger one.
func peakAt(peak, objects int64, from, to float64) int64 {
	if to >= from {
		return peak
	}
	b := math.Ceil(float64(peak)*to/from) + float64(objects*planAlign)
	return min(peak, int64(b))
}

// objectAt bounds the planned size of one object of size bytes planned at
// scale from, at the smaller scale to: its size scales (truncated:
// trace.ScaledSize; at from it was at least size*from - 1 before it was
// rounded up) and rounds up to planAlign, so it is at most ceil(size*to/
// from) rounded up, one page at the least scales. peakAt's bound, for many
// objects, adds a page to each instead.
func objectAt(size int64, from, to float64) int64 {
	if to >= from {
		return size
	}
	b := int64(math.Ceil(float64(size) * to / from))
	return min(size, (b+planAlign-1)/planAlign*planAlign)
}

// needs is what the replay of p asks at scale (at most cfg.SizeScale, at
// which p was planned; exact there).
func (p *Plan) needs(cfg *Config, sz Sizing, scale float64) Needs {
	n := Needs{Scale: scale, Exact: scale == cfg.SizeScale, Objects: p.Objects, SpanS: p.Span.Seconds()}
	if cfg.Speed > 0 {
		n.WallS = n.SpanS / cfg.Speed
	}
	f := scale / cfg.SizeScale
	tierB, names := backendIndex(cfg)
	for i, name := range names {
		need := Need{Backend: name,
			Peak:      peakAt(p.Peak[name], p.PeakObjects[name], cfg.SizeScale, scale),
			MaxObject: objectAt(p.MaxObjectOf[name], cfg.SizeScale, scale),
			Written:   int64(float64(p.Written[name]) * f), Read: int64(float64(p.Read[name]) * f), Ops: p.Ops[name]}
		for t, b := range tierB {
			if int(b) == i && (!p.Scanned || p.Used[t]) {
				need.Tiers = append(need.Tiers, schema.Tier(t).String())
			}
		}
		if len(need.Tiers) == 0 {
			continue // mapped, not used: never made
		}
		if cfg.ClosedLoop {
			need.Reach = max(need.Peak, peakAt(p.Reach[name], p.ReachObjects[name], cfg.SizeScale, scale))
		}
		if cfg.Capacity > 0 && cfg.TierMap[schema.TierNVMe] == name {
			need.Peak, need.Reach = min(need.Peak, cfg.Capacity), min(need.Reach, cfg.Capacity)
			n.capacity, n.capBackend = cfg.Capacity, name
		}
		if n.WallS > 0 {
			need.Rate = float64(need.Written+need.Read) / n.WallS
			need.OpsRate = float64(need.Ops) / n.WallS
		}
		n.Backends = append(n.Backends, need)
	}
	return p.needsWindow(cfg, sz, n)
}

// Advice is what a plan says of a replay on a machine: what it needs,
// whether it fits, and the options that make it fit.
type Advice struct {
	Machine Machine `json:"machine"`
	// The rates and the share assumed (AssumedRAMRate, AssumedDiskRate,
	// AssumedObjectRate, FitShare).
	AssumedRAMRate    float64 `json:"assumed_ram_bytes_per_s"`
	AssumedDiskRate   float64 `json:"assumed_disk_bytes_per_s"`
	AssumedObjectRate float64 `json:"assumed_object_bytes_per_s"`
	// AssumedObjectRequestS is AssumedObjectRequest, in seconds.
	AssumedObjectRequestS float64 `json:"assumed_object_request_s"`
	Share                 float64 `json:"share"`
	// WindowS is the trace time the plan covers (--duration at --speed),
	// 0 for the whole trace.
	WindowS float64 `json:"window_s,omitempty"`
	Needs   Needs   `json:"needs"`
	// Runs says that the replay can start here: its memory and disk are
	// within what the machine has (Blockers say which are not). Fits
	// says that it asks at most Share of the machine (memory, space,
	// the assumed rates), so that it should keep the trace's pace
	// (Problems say where it asks more).
	Runs     bool     `json:"runs"`
	Fits     bool     `json:"fits"`
	Blockers []string `json:"blockers,omitempty"`
	Problems []string `json:"problems,omitempty"`
	// Options are the options that make the replay fit, each with what
	// the replay then needs; Fit is what kvreplay --fit applies, the
	// first option (nil when the replay fits as it is, or nothing was
	// found).
	Options []Option `json:"options,omitempty"`
	Fit     *Fit     `json:"fit,omitempty"`
	// Notes say what the replay may do that its figures do not show: a
	// closed loop whose RAM arena holds less than it can keep live.
	Notes []string `json:"notes,omitempty"`

	sizing Sizing
	closed bool // a closed loop: the rates are the most it asks
}

// Option is an option that makes a replay fit, and its effect.
type Option struct {
	Option string `json:"option"`
	Effect string `json:"effect"`
	// Pace marks an option that changes only what the trace's pace asks
	// (--closed-loop, --speed): it makes fit a replay that runs here but
	// asks too much bandwidth, never one short of memory or space.
	Pace bool `json:"pace_only,omitempty"`
}

// Fit is what kvreplay --fit applies: a size scale, and a --capacity or a
// --ram-budget where scaling alone leaves the space too small; and a
// slower pace (--speed) where an object store's requests, which no size
// scale lowers, ask more than it is assumed to serve.
type Fit struct {
	Scale     float64  `json:"size_scale"`
	Capacity  int64    `json:"capacity_bytes,omitempty"`
	RAMBudget int64    `json:"ram_budget_bytes,omitempty"`
	Speed     float64  `json:"speed,omitempty"`
	Flags     []string `json:"flags"`
	Needs     Needs    `json:"needs"`
}

// Advise compares what the replay of p with cfg needs with what m offers,
// and finds the options that make it fit. p must be a plan of cfg.
func Advise(p *Plan, cfg *Config, sz Sizing, m Machine) *Advice {
	sz.mem = m.Memory()
	a := &Advice{Machine: m, AssumedRAMRate: AssumedRAMRate, AssumedDiskRate: m.Rate("nvme"), AssumedObjectRate: AssumedObjectRate,
		AssumedObjectRequestS: AssumedObjectRequest.Seconds(), Share: FitShare,
		WindowS: p.Window.Seconds(), Needs: p.needs(cfg, sz, cfg.SizeScale), sizing: sz, closed: cfg.ClosedLoop}
	a.Blockers = a.runProblems(a.Needs)
	a.Problems = a.shareProblems(a.Needs, cfg)
	a.Runs, a.Fits = len(a.Blockers) == 0, len(a.Blockers) == 0 && len(a.Problems) == 0
	a.Notes = append(a.arenaNotes(a.Needs, cfg), a.diskNotes(a.Needs, cfg)...)
	a.Notes = append(a.Notes, leftOutNotes(p, cfg)...)
	if a.Fits {
		return a
	}
	a.Fit = a.search(p, cfg, sz)
	if a.Fit == nil {
		a.Fit = a.paced(p, cfg, sz)
	}
	if a.Fit != nil {
		a.Options = append(a.Options, Option{Option: strings.Join(a.Fit.Flags, " "), Effect: a.effect(a.Fit.Needs)})
	}
	for _, o := range a.others(p, cfg, sz) {
		if a.Fit == nil || o.Option != a.Options[0].Option { // not the fit's own again
			a.Options = append(a.Options, o)
		}
	}
	return a
}

// arenaNotes says when a closed loop's RAM arena holds less than the
// loop can keep live: it may evict. It says what sized the arena:
// --ram-budget; FitShare of the memory available (ArenaBytes); or the
// trace's peak (1 MiB at least), which the arena never goes below,
// where that share holds less or the memory is not known.
func (a *Advice) arenaNotes(n Needs, cfg *Config) []string {
	r := n.need("ram")
	if r == nil || r.Reach <= n.Arena {
		return nil
	}
	mem := a.Machine.Memory()
	why, fix := "as much of it as "+FitShareText()+" of the memory available holds", "a smaller --size-scale"
	switch room := arenaRoom(cfg, n.Objects, mem); {
	case a.sizing.RAMBudget > 0:
		why = "--ram-budget"
	case mem <= 0:
		why = "the trace's peak (1 MiB at least): the memory available is not known"
	case n.Arena > room:
		least := "the trace's peak"
		if n.Arena > r.Peak {
			least = "its least, 1 MiB"
		}
		why = fmt.Sprintf("%s, which it never goes below: more than the %s that %s of the memory available holds beside the engine's state",
			least, cli.FormatBytes(max(room, 0)), FitShareText())
	}
	if ArenaBytes(cfg, r.Peak, r.Reach, n.Objects, mem) >= r.Reach {
		fix = "--ram-budget " + cli.FormatBytes(r.Reach)
	}
	return []string{fmt.Sprintf("ram: a closed loop releases the users' requests in another order than the trace's, so it may keep up to %s live on the RAM tier (every object its users put there), more than the trace's peak of %s; the arena holds %s (%s): past it kvreplay evicts least recently used objects, counted in the result (a read of one rewrites it untimed first); %s keeps them",
		cli.FormatBytes(r.Reach), cli.FormatBytes(r.Peak), cli.FormatBytes(n.Arena), why, fix)}
}

// diskNotes says when a closed loop may keep more live on the NVMe tier
// (a directory of files, unbounded) than --dir has free: the disk, whose
// need is the trace's peak, fills before the run ends (a 20-user trace
// with deletes on Tier-2, closed-loop: 20 MiB at its peak in the trace's
// order, up to 1.75 GiB in the loop's; 3 objects past the peak at --speed
// 4). A --capacity bounds it, as the arena bounds the RAM tier.
func (a *Advice) diskNotes(n Needs, cfg *Config) []string {
	d := n.need("nvme")
	free := a.Machine.DiskFree
	if d == nil || d.Reach <= d.Peak || a.sizing.Extent || cfg.Capacity > 0 || free < 0 || d.Reach+d.MaxObject <= free {
		return nil
	}
	fix := "a smaller --size-scale"
	if c := capacityFor(free, d.MaxObject, a.sizing); c >= 2*d.MaxObject {
		fix = "--capacity " + cli.FormatBytes(c) + " bounds it (kvreplay then evicts least recently used objects, counted in the result)"
	}
	return []string{fmt.Sprintf("nvme: a closed loop releases the users' requests in another order than the trace's, so it may keep up to %s live on the NVMe tier, more than the trace's peak of %s, "+
		"and %s has %s free: a loop that outgrows it stops when the disk fills (incomplete); %s",
		cli.FormatBytes(d.Reach), cli.FormatBytes(d.Peak), a.Machine.Disk, cli.FormatBytes(free)+a.Machine.SpaceText(), fix)}
}

// leftOutNotes says what the objects prepared for a --users sample
// (ColdObject.LeftOut) add to the peaks: those a replayed row reads first
// are written before the clock, and live from the start; those a
// demotion reads first (ColdObject.Demoted) only on a bounded tier that
// holds them beside the peak, which leaves them out.
func leftOutNotes(p *Plan, cfg *Config) []string {
	if p.LeftOut == 0 {
		return nil
	}
	_, names := backendIndex(cfg)
	more := func(hi, lo map[string]int64) string {
		var out []string
		for _, name := range names {
			if d := hi[name] - lo[name]; d > 0 {
				out = append(out, fmt.Sprintf("%s %s", name, cli.FormatBytes(d)))
			}
		}
		if len(out) == 0 {
			return "none"
		}
		return strings.Join(out, ", ")
	}
	var notes []string
	if n := p.LeftOut - p.Demoted; n > 0 {
		notes = append(notes, fmt.Sprintf("--users %d: %d objects (%s) that users left out wrote and the replayed users read are written before the clock, with the cold objects, "+
			"so that none is written inside the measured window: the peaks count them, live from the start (more than made when first read: %s); a bounded tier that does not hold them gets them when first read",
			p.UserLimit, n, FormatData(p.LeftOutBytes-p.DemotedBytes), more(p.PeakSample, p.PeakLazy)))
	}
	if p.Demoted > 0 {
		notes = append(notes, fmt.Sprintf("--users %d: %d objects (%s) that users left out wrote and the replayed users' requests demote (the trace's LRU moving them on) are written before the clock "+
			"only on a bounded tier (the RAM arena, --capacity) that holds them beside the peak, which does not count them (it would take %s more); elsewhere the demotion makes them, untimed, inside the measured window",
			p.UserLimit, p.Demoted, FormatData(p.DemotedBytes), more(p.PeakLeftOut, p.PeakSample)))
	}
	return notes
}

// memLimit is the memory a replay may take to run at all: 80 % of the
// total, within what is available.
func (a *Advice) memLimit() int64 {
	lim := a.Machine.MemTotal * 8 / 10
	if av := a.Machine.MemAvailable; av > 0 && (lim == 0 || av < lim) {
		lim = av
	}
	return lim
}

// runProblems says what keeps n from starting here: the memory and the
// disk it needs beyond what the machine has, and a bound (--capacity,
// --ram-budget) smaller than the largest object of its tier, for which no
// eviction makes room (the run would stop at that object's write,
// ErrTooBig). Each says which flag to change, and to what.
func (a *Advice) runProblems(n Needs) []string {
	var out []string
	if b := n.need(n.capBackend); n.capacity > 0 && b != nil && b.MaxObject > n.capacity {
		out = append(out, boundProblem("capacity", "--capacity", n.capacity, n.capacity, "the largest object of Tier-2's backend, "+b.Backend, b.MaxObject, n.Scale))
	}
	arena := (n.Arena + planAlign - 1) / planAlign * planAlign // what the arena holds
	if r := n.need("ram"); r != nil && a.sizing.RAMBudget > 0 && r.MaxObject > arena {
		out = append(out, boundProblem("ram", "--ram-budget", n.Arena, arena, "the RAM tier's largest object", r.MaxObject, n.Scale))
	}
	if lim := a.memLimit(); lim > 0 && n.Memory > lim {
		msg := fmt.Sprintf("memory: the replay needs %s (%s) and this machine has %s available of %s",
			cli.FormatBytes(n.Memory), a.memoryParts(n), cli.FormatBytes(a.Machine.MemAvailable), cli.FormatBytes(a.Machine.MemTotal))
		if buf := int64(n.depth) * n.block; buf > lim {
			// The I/O buffers do not shrink with --size-scale.
			msg += fmt.Sprintf(": the I/O buffers alone, --queue-depth %d x --block-size %s = %s at any --size-scale, are more than that: lower --queue-depth or --block-size",
				n.depth, cli.FormatBytes(n.block), cli.FormatBytes(buf))
		}
		out = append(out, msg)
	}
	// A block device is the extent backend's to size; a file system's
	// free space is checked here.
	if free := a.Machine.DiskFree; free >= 0 && n.Disk > free && !a.Machine.DiskIsDevice {
		out = append(out, fmt.Sprintf("disk: the trace keeps %s live on the NVMe tier at its peak (%s) and %s has %s free%s",
			cli.FormatBytes(n.need("nvme").Peak), a.diskParts(n), a.Machine.Disk, cli.FormatBytes(free), a.Machine.SpaceText()))
	}
	return out
}

// boundProblem says that the bound flag puts on tier (its value bound,
// room what it holds) is less than what, an object of largest bytes at
// scale, for which no eviction makes room: raise it, or lower
// --size-scale where that brings the object within it. At the least
// scales an object is planned at a page (planAlign: objectAt), so only a
// bound below a page holds none at any scale, and then the message does
// not send the user to a smaller --size-scale.
func boundProblem(tier, flag string, bound, room int64, what string, largest int64, scale float64) string {
	msg := fmt.Sprintf("%s: %s %s is less than %s, %s at --size-scale %s, which no eviction makes room for: raise %s to %s at least",
		tier, flag, cli.FormatBytes(bound), what, cli.FormatBytes(largest), FormatScale(scale), flag, cli.FormatBytes(largest))
	if least := objectAt(largest, scale, math.Ldexp(1, -maxScaleSteps)); least > room {
		return msg + fmt.Sprintf(" (a smaller --size-scale does not help: at any scale an object is planned at a page at least, %s, and %s %s holds %s)",
			cli.FormatBytes(planAlign), flag, cli.FormatBytes(bound), cli.FormatBytes(room))
	}
	return msg + ", or lower --size-scale"
}

func (a *Advice) diskWord() string {
	if a.Machine.DiskIsDevice {
		return "in all"
	}
	return "free"
}

// memoryParts says what makes up n's memory.
func (a *Advice) memoryParts(n Needs) string {
	eng := n.Memory
	parts := ""
	if r := n.need("ram"); r != nil {
		if n.Arena < n.Memory {
			eng -= n.Arena
		}
		parts = fmt.Sprintf("the RAM tier's arena %s, ", cli.FormatBytes(n.Arena))
	}
	if buf := int64(n.depth) * n.block; buf > 0 && buf < eng {
		// The I/O buffers, named by the flags that size them: where they
		// are most of it, no --size-scale makes the replay fit, and the
		// fix is a smaller --block-size or --queue-depth.
		eng -= buf
		parts += fmt.Sprintf("the I/O buffers %s (--queue-depth %d x --block-size %s), ", cli.FormatBytes(buf), n.depth, cli.FormatBytes(n.block))
	}
	return parts + fmt.Sprintf("the engine's state %s for %d objects", cli.FormatBytes(eng), n.Objects)
}

// diskParts says what makes up n's disk.
func (a *Advice) diskParts(n Needs) string {
	d := n.need("nvme")
	if a.sizing.Extent {
		return fmt.Sprintf("an extent file of %s, with room for fragmentation and for its largest object, %s", cli.FormatBytes(n.Disk), cli.FormatBytes(d.MaxObject))
	}
	return fmt.Sprintf("%s with its largest object, %s", cli.FormatBytes(n.Disk), cli.FormatBytes(d.MaxObject))
}

// shareProblems says where n asks more than the share of the machine.
func (a *Advice) shareProblems(n Needs, cfg *Config) []string {
	var out []string
	if mem := a.Machine.Memory(); mem > 0 && float64(n.Memory) > FitShare*float64(mem) {
		out = append(out, fmt.Sprintf("memory: the replay needs %s, more than %s of the %s available", cli.FormatBytes(n.Memory), FitShareText(), cli.FormatBytes(mem)))
	}
	if free := a.Machine.DiskFree; free >= 0 && float64(n.Disk) > FitShare*float64(free) {
		out = append(out, fmt.Sprintf("disk: the NVMe tier needs %s, more than %s of the %s %s in %s%s", cli.FormatBytes(n.Disk), FitShareText(), cli.FormatBytes(free), a.diskWord(), a.Machine.Disk, a.Machine.SpaceText()))
	}
	for _, b := range n.Backends {
		if rate := a.rate(b.Backend); rate > 0 && b.Rate > FitShare*rate && !a.closed {
			out = append(out, fmt.Sprintf("bandwidth: the trace's pace asks %s of the %s tier (%s written and %s read in %.1f s at --speed %g), more than %s of the %s assumed",
				FormatRate(b.Rate), b.Backend, FormatData(b.Written), FormatData(b.Read), n.WallS, cfg.Speed, FitShareText(), FormatRate(rate)))
		}
		if a.overRequests(b) && !a.closed {
			out = append(out, fmt.Sprintf("requests: the trace's pace asks %.0f operations/s of the %s tier (%d in %.1f s at --speed %g), more than %s of the %.0f/s assumed "+
				"of an object store (%d requests in flight, %s each; a smaller size scale lowers the count only of objects above the s3 tier's part size, each a request a part)",
				b.OpsRate, b.Backend, b.Ops, n.WallS, cfg.Speed, FitShareText(), a.Machine.OpsRate(b.Backend), a.Machine.InFlight(b.Backend), AssumedObjectRequest))
		}
	}
	return out
}

// FitShareText is FitShare as a percentage, for messages ("50 %").
func FitShareText() string { return strconv.FormatFloat(FitShare*100, 'f', -1, 64) + " %" }

// rate is the bandwidth assumed of a backend, 0 for none (null, gpu).
func (a *Advice) rate(backend string) float64 { return a.Machine.Rate(backend) }

// AssumedRate is the bandwidth a plan assumes of a backend
// (AssumedRAMRate, AssumedDiskRate, AssumedObjectRate), 0 for one it
// assumes none of (null, gpu).
func AssumedRate(backend string) float64 {
	switch backend {
	case "ram":
		return AssumedRAMRate
	case "nvme":
		return AssumedDiskRate
	case "s3":
		return AssumedObjectRate
	}
	return 0
}

// AssumedTime is how long the replay p plans takes on m at the assumed
// rates (Machine.Rate, OpsRate) when nothing paces it (--speed max): the
// longest of its backends' bytes written and read over their rates, and
// of an object store's operations over its request rate; 0 where a plan
// does not know them (from sidecars) or assumes no rate.
func (p *Plan) AssumedTime(m Machine) time.Duration {
	var s float64
	for name, w := range p.Written {
		if r := m.Rate(name); r > 0 {
			s = max(s, float64(w+p.Read[name])/r)
		}
		if r := m.OpsRate(name); r > 0 {
			s = max(s, float64(p.Ops[name])/r)
		}
	}
	return time.Duration(s * float64(time.Second))
}

// fits reports whether n asks at most the share of the machine.
func (a *Advice) fits(n Needs, cfg *Config) bool {
	return len(a.runProblems(n)) == 0 && len(a.shareProblems(n, cfg)) == 0
}

// maxScaleSteps bounds the search: 2^-48 of a petabyte is 4 bytes.
const maxScaleSteps = 48

// search finds the largest size scale 1/2^k (below cfg.SizeScale) at which
// the replay fits; where none does (the objects, each rounding up to a
// page, fill the space however small), the largest at which the rates fit
// and a --capacity or a --ram-budget bounds the space, each holding the
// largest object twice over.
func (a *Advice) search(p *Plan, cfg *Config, sz Sizing) *Fit {
	var scales []float64
	for k := range maxScaleSteps + 1 {
		if s := math.Ldexp(1, -k); s < cfg.SizeScale {
			scales = append(scales, s)
		}
	}
	for _, s := range scales {
		if n := p.needs(cfg, sz, s); a.fits(n, cfg) {
			return &Fit{Scale: s, Flags: []string{"--size-scale " + FormatScale(s)}, Needs: n}
		}
	}
	for _, s := range scales {
		if f := a.bounded(p, cfg, sz, s); f != nil {
			return f
		}
	}
	return nil
}

// paced is a fit at the pace an object store's requests fit (requestPace),
// where they ask more than it is assumed to serve at the trace's: the
// replay as it is at that pace, or the search's fit there; nil when the
// requests fit, or nothing fits at that pace either.
func (a *Advice) paced(p *Plan, cfg *Config, sz Sizing) *Fit {
	speed := a.requestPace(a.Needs, cfg)
	if speed <= 0 || speed >= cfg.Speed {
		return nil
	}
	c := *cfg
	c.Speed = speed
	flag := "--speed " + FormatSpeed(speed)
	if n := p.needs(&c, sz, c.SizeScale); a.fits(n, &c) {
		return &Fit{Scale: c.SizeScale, Speed: speed, Flags: []string{flag}, Needs: n}
	}
	f := a.search(p, &c, sz)
	if f == nil {
		return nil
	}
	f.Speed, f.Flags = speed, append(f.Flags, flag)
	return f
}

// requestPace is the --speed at which the object stores' requests of n
// ask at most the share of the rate assumed (Machine.OpsRate), rounded
// down to 3 digits; 0 when they ask no more at the trace's pace, or the
// pace is not the trace's (--speed max, a closed loop).
func (a *Advice) requestPace(n Needs, cfg *Config) float64 {
	if cfg.Speed <= 0 || a.closed {
		return 0
	}
	slow := 1.0
	for _, b := range n.Backends {
		if a.overRequests(b) {
			slow = min(slow, FitShare*a.Machine.OpsRate(b.Backend)/b.OpsRate)
		}
	}
	if slow >= 1 {
		return 0
	}
	return floor3(cfg.Speed * slow)
}

// floor3 rounds x > 0 down to 3 significant digits, as --speed is shown:
// the float the flag written with FormatSpeed parses to (0.0084 stays
// 0.0084, not 0.00839; 0.0014 is not 0.0014000000000000002).
func floor3(x float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(x))-2)
	v, err := strconv.ParseFloat(strconv.FormatFloat(math.Floor(x/e+1e-9)*e, 'g', 3, 64), 64)
	if err != nil {
		return x
	}
	return v
}

// FormatSpeed writes a --speed as the flag takes it, in plain decimals
// ("0.223", "1230"), the shortest that parses back to s.
func FormatSpeed(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) }

// bounded is a fit at scale s with the space bounded by --capacity and
// --ram-budget where it passes the share, nil when the rates do not fit
// or a bound would not hold the largest object twice.
func (a *Advice) bounded(p *Plan, cfg *Config, sz Sizing, s float64) *Fit {
	n := p.needs(cfg, sz, s)
	if !a.ratesFit(n) {
		return nil
	}
	f := &Fit{Scale: s, Flags: []string{"--size-scale " + FormatScale(s)}}
	c := *cfg
	if free := a.Machine.DiskFree; free >= 0 && float64(n.Disk) > FitShare*float64(free) {
		d := n.need("nvme")
		if d == nil || cfg.TierMap[schema.TierNVMe] != "nvme" {
			return nil // the space is another tier's: --capacity bounds Tier-2
		}
		capacity := capacityFor(free, d.MaxObject, sz)
		if capacity < 2*d.MaxObject || capacity <= 0 {
			return nil
		}
		f.Capacity, c.Capacity = capacity, capacity
		f.Flags = append(f.Flags, "--capacity "+cli.FormatBytes(capacity))
	}
	if mem := a.Machine.Memory(); mem > 0 && float64(n.Memory) > FitShare*float64(mem) {
		r := n.need("ram")
		if r == nil || sz.RAMBudget > 0 {
			return nil // the engine's own state, or the user's budget
		}
		budget := budgetFor(mem, cfg, p.Objects)
		if budget < 2*r.MaxObject || budget <= 0 {
			return nil
		}
		f.RAMBudget, sz.RAMBudget = budget, budget
		f.Flags = append(f.Flags, "--ram-budget "+cli.FormatBytes(budget))
	}
	f.Needs = p.needs(&c, sz, s)
	if !a.fits(f.Needs, cfg) {
		return nil
	}
	return f
}

// capacityFor is the --capacity that keeps the NVMe tier within the share
// of free bytes, whole MiB.
func capacityFor(free, maxObject int64, sz Sizing) int64 {
	room := int64(FitShare * float64(free))
	if sz.Extent {
		return ((room - 8*maxObject - 1<<20) * 4 / 5) &^ (1<<20 - 1)
	}
	return (room - maxObject) &^ (1<<20 - 1)
}

// budgetFor is the --ram-budget that keeps the process within the share of
// mem bytes beside the engine's state, whole MiB.
func budgetFor(mem int64, cfg *Config, objects int64) int64 {
	return (int64(FitShare*float64(mem)) - EngineMemory(cfg, objects)) &^ (1<<20 - 1)
}

// ratesFit reports whether n's rates are within the share of those
// assumed. A closed loop's are: its users wait for their storage, so what
// it asks follows what the machine serves (the trace's pace is its most).
func (a *Advice) ratesFit(n Needs) bool {
	if a.closed {
		return true
	}
	for _, b := range n.Backends {
		if rate := a.rate(b.Backend); rate > 0 && b.Rate > FitShare*rate {
			return false
		}
		if a.overRequests(b) {
			return false
		}
	}
	return true
}

// effect says what a replay of n needs, in a line.
func (a *Advice) effect(n Needs) string {
	var parts []string
	for _, b := range n.Backends {
		s := fmt.Sprintf("%s %s peak", b.Backend, cli.FormatBytes(b.Peak))
		if b.Rate > 0 {
			s += ", asks " + FormatRate(b.Rate)
		}
		if ops := a.OpsText(b); ops != "" {
			s += " in " + ops
		}
		parts = append(parts, s)
	}
	bound := ""
	if !n.Exact {
		bound = "at most "
	}
	return bound + strings.Join(parts, "; ") + fmt.Sprintf("; memory %s, disk %s", cli.FormatBytes(n.Memory), cli.FormatBytes(n.Disk))
}

// others are the options besides --fit's: a bound on the space alone, a
// shorter window, a closed loop, a slower pace.
func (a *Advice) others(p *Plan, cfg *Config, sz Sizing) []Option {
	var out []Option
	n := a.Needs
	if free := a.Machine.DiskFree; free >= 0 && float64(n.Disk) > FitShare*float64(free) && cfg.TierMap[schema.TierNVMe] == "nvme" {
		if d := n.need("nvme"); d != nil {
			if c := capacityFor(free, d.MaxObject, sz); c >= 2*d.MaxObject {
				out = append(out, Option{Option: "--capacity " + cli.FormatBytes(c),
					Effect: "bounds Tier-2 at " + cli.FormatBytes(c) + ": kvreplay evicts its least recently used objects (and writes them again, untimed, when read again); the bandwidth is the trace's"})
			}
		}
	}
	if mem := a.Machine.Memory(); mem > 0 && float64(n.Memory) > FitShare*float64(mem) && sz.RAMBudget == 0 {
		if r := n.need("ram"); r != nil {
			if b := budgetFor(mem, cfg, p.Objects); b > 0 && b >= 2*r.MaxObject {
				out = append(out, Option{Option: "--ram-budget " + cli.FormatBytes(b),
					Effect: "bounds the RAM arena at " + cli.FormatBytes(b) + ": kvreplay evicts its least recently used objects"})
			}
		}
	}
	if cfg.Speed > 0 {
		if w := a.window(p, cfg, sz); w > 0 && w.Seconds() < n.WallS {
			out = append(out, Option{Option: "--duration " + formatSeconds(w),
				Effect: fmt.Sprintf("replays the first %s of the trace (at --speed %g), which fit as they are", formatSeconds(time.Duration(float64(w)*cfg.Speed)), cfg.Speed)})
		}
		if !a.ratesFit(n) {
			if !cfg.ClosedLoop && len(p.Users) > 0 {
				out = append(out, Option{Option: "--closed-loop", Pace: true,
					Effect: "each user waits for its storage, so the load follows what this machine serves rather than the trace's pace (the space must still fit)"})
			}
			slow := math.Inf(1)
			for _, b := range n.Backends {
				if rate := a.rate(b.Backend); rate > 0 && b.Rate > 0 {
					slow = min(slow, FitShare*rate/b.Rate)
				}
				if ops := a.Machine.OpsRate(b.Backend); ops > 0 && b.OpsRate > 0 {
					slow = min(slow, FitShare*ops/b.OpsRate)
				}
			}
			if s := cfg.Speed * slow; s > 0 && !math.IsInf(s, 0) {
				s = floor3(s)
				out = append(out, Option{Option: "--speed " + FormatSpeed(s), Pace: true,
					Effect: fmt.Sprintf("slows the trace's pace to what the assumed rates serve: the replay then takes %s (the space must still fit)", formatSeconds(time.Duration(n.WallS*float64(cfg.Speed)/s*float64(time.Second))))})
			}
		}
	}
	return out
}

// window is the longest wall time (--duration) whose window of the trace
// fits as configured, from the plan's profile; 0 when none is known.
func (a *Advice) window(p *Plan, cfg *Config, sz Sizing) time.Duration {
	pr := p.profile
	if pr == nil || len(pr.peak) == 0 {
		return 0
	}
	best := -1
	for i := range pr.peak {
		n := a.Needs
		n.Backends = slices.Clone(n.Backends)
		span := time.Duration(i+1) * pr.step
		n.SpanS, n.WallS = span.Seconds(), span.Seconds()/cfg.Speed
		for j := range n.Backends {
			b := &n.Backends[j]
			k := slices.Index(pr.names, b.Backend)
			if k < 0 {
				continue
			}
			b.Peak, b.Written, b.Read, b.Ops = pr.peak[i][k], pr.bytes[i][k], 0, pr.ops[i][k]
			b.Rate, b.OpsRate = float64(b.Written)/n.WallS, float64(b.Ops)/n.WallS
		}
		w := p.needsWindow(cfg, sz, n)
		if !a.fits(w, cfg) {
			break
		}
		best = i
	}
	if best < 0 {
		return 0
	}
	return time.Duration(float64(time.Duration(best+1)*pr.step) / cfg.Speed)
}

// needsWindow computes n's memory and disk from its backends' peaks (the
// whole trace's, or a window's).
func (p *Plan) needsWindow(cfg *Config, sz Sizing, n Needs) Needs {
	n.Memory, n.Arena, n.Disk = 0, 0, 0
	if r := n.need("ram"); r != nil {
		n.Arena = ArenaBytes(cfg, r.Peak, r.Reach, p.Objects, sz.mem)
		if sz.RAMBudget > 0 {
			n.Arena = sz.RAMBudget
		}
	}
	n.Memory = n.Arena + EngineMemory(cfg, p.Objects)
	n.depth, n.block = cfg.QueueDepth, cfg.BlockSize
	if d := n.need("nvme"); d != nil {
		n.Disk = d.Peak + d.MaxObject
		if sz.Extent {
			n.Disk = ExtentBytes(d.Peak, d.MaxObject)
		}
	}
	return n
}

// FormatScale writes a size scale as --size-scale takes it: a fraction
// 1/N where it is one, else a number.
func FormatScale(s float64) string {
	if s > 0 && s < 1 {
		if d := 1 / s; d == math.Round(d) && d < 1<<53 {
			return "1/" + strconv.FormatFloat(d, 'f', 0, 64)
		}
	}
	return strconv.FormatFloat(s, 'g', -1, 64)
}

// FormatRate writes a bandwidth in GB/s (10^9 bytes a second), the one
// unit of bandwidth in every kvbench output, to three significant digits:
// "0.276 GB/s", "4.00 GB/s", "1130 GB/s" (results.FormatRate).
func FormatRate(bps float64) string { return results.FormatRate(bps) }

// FormatData writes an amount of data moved (bytes written or read) in GB
// (10^9 bytes), as every kvbench output does: "0.0105 GB", "12.3 GB"
// (results.FormatData). Sizes (an object's, a tier's peak, memory and free
// space) stay binary (cli.FormatBytes), as the flags that set them take
// them.
func FormatData(n int64) string { return results.FormatData(n) }

// formatSeconds writes a duration as --duration takes it, to a tenth of
// a second (a millisecond below one).
func formatSeconds(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// profile is a prescan's peaks, bytes and operations by trace time, from
// the first row: point i holds them at the end of trace time (i+1)*step.
// Its step doubles whenever the trace outgrows profilePoints points.
type profile struct {
	step  time.Duration
	names []string  // the backends, by index
	peak  [][]int64 // [point][backend]: the peak so far (windowPeak)
	bytes [][]int64 // [point][backend]: bytes written and read so far
	ops   [][]int64 // [point][backend]: operations so far
}

const (
	profileStep   = 10 * time.Millisecond
	profilePoints = 1024
)

func newProfile() *profile { return &profile{step: profileStep} }

// advance closes the points before trace time at with m's state and
// ts's bytes and operations, before the row at at is applied.
func (pr *profile) advance(at time.Duration, m *model, ts *traceScan) {
	at = max(at, 0)
	i := int64(at / pr.step)
	for i >= profilePoints {
		pr.coarsen(false)
		i = int64(at / pr.step)
	}
	for int64(len(pr.peak)) < i {
		pr.snap(m, ts)
	}
}

// close ends the profile at trace time at, the last row's.
func (pr *profile) close(at time.Duration, m *model, ts *traceScan) {
	pr.advance(at, m, ts)
	pr.snap(m, ts)
}

// snap appends a point of m's state and ts's bytes and operations.
func (pr *profile) snap(m *model, ts *traceScan) {
	n := len(m.peak)
	v := make([]int64, 3*n)
	for b := range n {
		v[b], v[n+b], v[2*n+b] = windowPeak(m, b), ts.wr[b]+ts.rd[b], ts.ops[b]
	}
	pr.peak = append(pr.peak, v[:n:n])
	pr.bytes = append(pr.bytes, v[n:2*n:2*n])
	pr.ops = append(pr.ops, v[2*n:])
}

// coarsen doubles the step: each new point is the later of two. A point
// left alone, the last, is partial: recording, it is dropped, to be taken
// again by the next snap; in a closed profile (closed), it is the end.
func (pr *profile) coarsen(closed bool) {
	pr.step *= 2
	n := len(pr.peak) / 2
	for k := range n {
		pr.peak[k], pr.bytes[k], pr.ops[k] = pr.peak[2*k+1], pr.bytes[2*k+1], pr.ops[2*k+1]
	}
	if last := len(pr.peak) - 1; closed && len(pr.peak)%2 == 1 {
		pr.peak[n], pr.bytes[n], pr.ops[n] = pr.peak[last], pr.bytes[last], pr.ops[last]
		n++
	}
	clear(pr.peak[n:])
	clear(pr.bytes[n:])
	clear(pr.ops[n:])
	pr.peak, pr.bytes, pr.ops = pr.peak[:n], pr.bytes[:n], pr.ops[:n]
}

// add returns the sum of pr and o, traces replayed side by side (a bound,
// as their peaks add): the finer is coarsened to the other's step, and a
// profile that ended holds its last point.
func (pr *profile) add(o *profile) *profile {
	if pr == nil {
		return o
	}
	for pr.step < o.step {
		pr.coarsen(true)
	}
	for o.step < pr.step {
		o.coarsen(true)
	}
	n := max(len(pr.peak), len(o.peak))
	at := func(x [][]int64, i int) []int64 {
		if len(x) == 0 {
			return nil
		}
		return x[min(i, len(x)-1)]
	}
	sum := &profile{step: pr.step}
	for i := range n {
		sum.peak = append(sum.peak, addPoint(at(pr.peak, i), at(o.peak, i)))
		sum.bytes = append(sum.bytes, addPoint(at(pr.bytes, i), at(o.bytes, i)))
		sum.ops = append(sum.ops, addPoint(at(pr.ops, i), at(o.ops, i)))
	}
	return sum
}

// addPoint is the sum of two points' figures, backend by backend.
func addPoint(a, b []int64) []int64 {
	p := make([]int64, max(len(a), len(b)))
	for j := range p {
		p[j] = get(a, j) + get(b, j)
	}
	return p
}

func get(x []int64, i int) int64 {
	if i < len(x) {
		return x[i]
	}
	return 0
}
