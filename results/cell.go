package results

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// Cell aggregates what one tier x operation x phase did: completed
// operations, their bytes and busy time, and two latency histograms, from
// submission and from the scheduled time. The zero value is an empty
// Cell, ready to use.
type Cell struct {
	// Ops counts completed operations; Logical and Physical their bytes
	// (the trace's times the size scale, and what moved after alignment).
	Ops, Logical, Physical int64
	// Failed counts operations that failed (AddFailed): in no figure
	// but Busy, which the caller keeps.
	Failed int64
	// Busy is the time at least one operation of the cell was in flight.
	// Add leaves it alone: the caller, which sees operations start and end,
	// adds to it. Merge keeps the longest of the documents' (ranks run side
	// by side, so the union of their busy intervals is unknown): a merged
	// Busy is a lower bound, not exact.
	Busy time.Duration

	lat, sched Latency
	// firstByte is the time to first byte of the reads whose backend
	// knows it (an object store's GET); empty for the others.
	firstByte Latency
}

// NewCell returns an empty Cell. Its two histograms, of about 190 KB
// each, are allocated on the first Add or Merge.
func NewCell() *Cell { return &Cell{} }

// Add records one completed operation: its latency from submission, its
// latency from its scheduled time (which includes waiting for earlier
// operations and workers: coordinated-omission safe) and its bytes.
func (c *Cell) Add(lat, fromSched time.Duration, logical, physical int64) {
	c.Ops++
	c.Logical += logical
	c.Physical += physical
	c.lat.Add(lat)
	c.sched.Add(fromSched)
}

// AddFailed records one operation that failed: counted apart, with no
// bytes or latency.
func (c *Cell) AddFailed() { c.Failed++ }

// AddFirstByte records a read's time from submission to its first byte,
// for a backend that knows it (backend.FirstByteReader: S3).
func (c *Cell) AddFirstByte(d time.Duration) { c.firstByte.Add(d) }

// Merge adds a document's cell: operations and bytes add, both histograms
// are decoded and added exactly, and Busy becomes the longer of the two
// (see Busy). Tier, operation, phase and backend are the caller's to
// match. It fails, leaving c unchanged, on a damaged histogram, on a cell
// whose operations differ from its histograms' counts or that counts
// something negative (ErrInconsistent), or on overflow.
func (c *Cell) Merge(d schema.Cell) error { return mergeOne(c.mergeAll, d) }

// MergeAll is Merge of every cell of ds at once, and much faster than
// Merge in a loop (see Latency.MergeAll). It fails, leaving c unchanged,
// as Merge does; an error about one of ds is an *IndexError naming it.
func (c *Cell) MergeAll(ds []schema.Cell) error { return mergeMany(c.mergeAll, ds) }

func (c *Cell) mergeAll(ds []schema.Cell) (int, error) {
	ops, failed, logical, physical, busy := c.Ops, c.Failed, c.Logical, c.Physical, c.Busy
	lats := make([]schema.Latency, len(ds))
	scheds := make([]schema.Latency, len(ds))
	var firsts []schema.Latency
	for i, d := range ds {
		if d.Ops < 0 || d.FailedOps < 0 || d.LogicalBytes < 0 || d.PhysicalBytes < 0 || d.BusyS < 0 {
			return i, fmt.Errorf("cell %s %s %s: %w: ops %d, failed %d, bytes %d logical %d physical, busy %gs",
				d.Tier, d.Op, d.Phase, ErrInconsistent, d.Ops, d.FailedOps, d.LogicalBytes, d.PhysicalBytes, d.BusyS)
		}
		if d.Latency.Count != d.Ops || d.FromSchedule.Count != d.Ops {
			return i, fmt.Errorf("cell %s %s %s: %w: %d ops, latency of %d and from schedule of %d",
				d.Tier, d.Op, d.Phase, ErrInconsistent, d.Ops, d.Latency.Count, d.FromSchedule.Count)
		}
		var err error
		if ops, err = addCount(ops, d.Ops); err == nil {
			if failed, err = addCount(failed, d.FailedOps); err == nil {
				if logical, err = addCount(logical, d.LogicalBytes); err == nil {
					physical, err = addCount(physical, d.PhysicalBytes)
				}
			}
		}
		if err != nil {
			return i, fmt.Errorf("cell %s %s %s: %w", d.Tier, d.Op, d.Phase, err)
		}
		busy = max(busy, fromSeconds(d.BusyS))
		lats[i], scheds[i] = d.Latency, d.FromSchedule
		if fb := d.FirstByte; fb != nil {
			if fb.Count > d.Ops {
				return i, fmt.Errorf("cell %s %s %s: %w: %d ops, %d times to first byte", d.Tier, d.Op, d.Phase, ErrInconsistent, d.Ops, fb.Count)
			}
			firsts = append(firsts, *fb)
		}
	}
	lat, i, err := decodeAll(lats)
	if err != nil {
		return i, fmt.Errorf("cell %s: latency: %w", cellName(ds, i), err)
	}
	sched, i, err := decodeAll(scheds)
	if err != nil {
		return i, fmt.Errorf("cell %s: latency from schedule: %w", cellName(ds, i), err)
	}
	if err := c.lat.fits(lat); err != nil {
		return -1, fmt.Errorf("cell %s: latency: %w", cellName(ds, 0), err)
	}
	if err := c.sched.fits(sched); err != nil {
		return -1, fmt.Errorf("cell %s: latency from schedule: %w", cellName(ds, 0), err)
	}
	first, _, err := decodeAll(firsts)
	if err != nil {
		return -1, fmt.Errorf("cell %s: time to first byte: %w", cellName(ds, 0), err)
	}
	if err := c.firstByte.fits(first); err != nil {
		return -1, fmt.Errorf("cell %s: time to first byte: %w", cellName(ds, 0), err)
	}
	// Nothing below fails: the histograms share one geometry and their
	// totals fit.
	if err := c.lat.merge(lat); err != nil {
		return -1, err
	}
	if err := c.sched.merge(sched); err != nil {
		return -1, err
	}
	if err := c.firstByte.merge(first); err != nil {
		return -1, err
	}
	c.Ops, c.Failed, c.Logical, c.Physical, c.Busy = ops, failed, logical, physical, busy
	return -1, nil
}

// cellName names ds[i] (ds[0] when i is not an index) for messages.
func cellName(ds []schema.Cell, i int) string {
	if i < 0 || i >= len(ds) {
		i = 0
	}
	if len(ds) == 0 {
		return "-"
	}
	return ds[i].Tier + " " + ds[i].Op + " " + ds[i].Phase
}

// Finalize renders the cell of the given names over a run of wall time
// wall: its bandwidth DeviceBps is Logical over Busy (the device rate),
// OfferedBps Logical over wall (the offered load); each 0 when its time is
// not positive. c stays usable.
func (c *Cell) Finalize(tier, op, phase, backend string, wall time.Duration) schema.Cell {
	s := schema.Cell{
		Tier: tier, Op: op, Phase: phase, Backend: backend,
		Ops: c.Ops, FailedOps: c.Failed, LogicalBytes: c.Logical, PhysicalBytes: c.Physical, BusyS: c.Busy.Seconds(),
		Latency: c.lat.Finalize(), FromSchedule: c.sched.Finalize(),
	}
	if c.firstByte.Count() > 0 {
		fb := c.firstByte.Finalize()
		s.FirstByte = &fb
	}
	s.DeviceBps, s.OfferedBps = DeviceRate(c.Logical, c.Busy), OfferedLoad(c.Logical, wall)
	return s
}

// DeviceRate is a tier's (or a cell's) bandwidth as kvbench reports it
// first: bytes over the time the tier was busy serving them (a Busy's
// Total: the union of the operations' intervals), so that it does not
// fall when something else (another tier, the trace's pace) makes the run
// longer. 0 when busy is not positive.
func DeviceRate(bytes int64, busy time.Duration) float64 {
	if busy <= 0 {
		return 0
	}
	return float64(bytes) / busy.Seconds()
}

// OfferedLoad is bytes over the run's wall time: what a tier was asked to
// move per second of the run, the reference's tier bandwidth. It falls
// when the run takes longer for any reason, so it is never the tier's
// bandwidth alone. 0 when wall is not positive.
func OfferedLoad(bytes int64, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return float64(bytes) / wall.Seconds()
}

// TierBusy is how long a tier was busy (the union of its operations'
// intervals) with any operation, with reads and with writes.
type TierBusy struct {
	Tier             string
	All, Read, Write time.Duration
}

// ApplyTierBusy sets the busy times of tiers from busy, matched by tier
// name, and their device rates over them (DeviceRate); a tier busy does
// not name keeps the BusyS it has and no device rate. A busy time of 0
// (unknown) leaves BusyS alone and gives no device rate.
func ApplyTierBusy(tiers []schema.TierTotals, busy []TierBusy) {
	for i := range tiers {
		t := &tiers[i]
		j := slices.IndexFunc(busy, func(b TierBusy) bool { return b.Tier == t.Tier })
		if j < 0 {
			continue
		}
		b := busy[j]
		if b.All > 0 {
			t.BusyS = b.All.Seconds()
		}
		t.ReadBusyS, t.WriteBusyS = b.Read.Seconds(), b.Write.Seconds()
		t.ReadDeviceBps, t.WriteDeviceBps = DeviceRate(t.ReadBytes, b.Read), DeviceRate(t.WriteBytes, b.Write)
	}
}

// MergeTierBusy is the busy time of each tier of documents that ran side
// by side (the ranks of a run): the longest of the documents', for the
// union of their intervals is unknown, so that a merged busy time is a
// lower bound and the device rate over it an upper bound (as a merged
// cell's). A document that moved a tier's read (write) bytes without a
// busy time for them (written before kvbench measured it) makes that busy
// time unknown: 0.
func MergeTierBusy(docs ...[]schema.TierTotals) []TierBusy {
	var out []TierBusy
	unknown := map[string][2]bool{}
	for _, tiers := range docs {
		for _, t := range tiers {
			j := slices.IndexFunc(out, func(b TierBusy) bool { return b.Tier == t.Tier })
			if j < 0 {
				j = len(out)
				out = append(out, TierBusy{Tier: t.Tier})
			}
			b, u := &out[j], unknown[t.Tier]
			b.All = max(b.All, fromSeconds(t.BusyS))
			b.Read = max(b.Read, fromSeconds(t.ReadBusyS))
			b.Write = max(b.Write, fromSeconds(t.WriteBusyS))
			u[0] = u[0] || (t.ReadBytes > 0 && t.ReadBusyS <= 0)
			u[1] = u[1] || (t.WriteBytes > 0 && t.WriteBusyS <= 0)
			unknown[t.Tier] = u
		}
	}
	for i := range out {
		u := unknown[out[i].Tier]
		if u[0] {
			out[i].Read = 0
		}
		if u[1] {
			out[i].Write = 0
		}
	}
	return out
}

// TierTotals totals cells per tier, over a run of wall time wall: read,
// write and delete operations, logical and physical bytes, read and write
// offered load (OfferedLoad: logical bytes over wall), the longest busy
// time of the tier's cells (a lower bound of the tier's: ApplyTierBusy
// sets the measured one, and the device rates), the operations that
// failed, and the tier's backends (sorted, comma-separated). Tiers come in
// schema.Tier order, unknown names after in order of appearance; a tier
// whose cells completed no operation and had none fail is left out. Cells
// of operations other than Read, Write and Delete count toward nothing but
// busy time, failed operations and backends.
func TierTotals(cells []schema.Cell, wall time.Duration) []schema.TierTotals {
	var out []schema.TierTotals
	index := map[string]int{}
	for _, c := range cells {
		i, ok := index[c.Tier]
		if !ok {
			i = len(out)
			index[c.Tier] = i
			out = append(out, schema.TierTotals{Tier: c.Tier})
		}
		t := &out[i]
		t.Backend = JoinUnique(t.Backend, c.Backend, ",")
		switch c.Op {
		case schema.OpRead.String():
			t.ReadOps += c.Ops
			t.ReadBytes += c.LogicalBytes
			t.PhysicalReadBytes += c.PhysicalBytes
		case schema.OpWrite.String():
			t.WriteOps += c.Ops
			t.WriteBytes += c.LogicalBytes
			t.PhysicalWriteBytes += c.PhysicalBytes
		case schema.OpDelete.String():
			t.DeleteOps += c.Ops
		}
		t.FailedOps += c.FailedOps
		t.BusyS = max(t.BusyS, c.BusyS)
	}
	out = slices.DeleteFunc(out, func(t schema.TierTotals) bool { return t.ReadOps+t.WriteOps+t.DeleteOps+t.FailedOps == 0 })
	slices.SortStableFunc(out, func(a, b schema.TierTotals) int { return cmp.Compare(tierOrder(a.Tier), tierOrder(b.Tier)) })
	for i := range out {
		out[i].ReadOfferedBps = OfferedLoad(out[i].ReadBytes, wall)
		out[i].WriteOfferedBps = OfferedLoad(out[i].WriteBytes, wall)
	}
	return out
}

// tierOrder is a tier name's index; unknown names sort after the known.
func tierOrder(s string) int {
	t, err := schema.ParseTier(s)
	if err != nil {
		return int(schema.NumTiers)
	}
	return int(t)
}

// JoinUnique adds the sep-separated names of b to the sep-separated set a,
// keeping the set sorted, so that a merged name ("nvme,ram": a tier's
// backends, a merged run's engines or hosts) does not depend on the order
// of merges. It is how TierTotals names a tier's backends; kvreport's
// merges name the rest the same way.
func JoinUnique(a, b, sep string) string {
	if b == "" {
		return a
	}
	if a == "" {
		return b
	}
	parts := strings.Split(a, sep)
	for _, p := range strings.Split(b, sep) {
		if p != "" && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, sep)
}
