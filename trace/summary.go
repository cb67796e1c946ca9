package trace

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// Summary describes a whole trace: what kvtrace inspect prints. Its JSON
// key names are stable; scripts may rely on them.
type Summary struct {
	File       string   `json:"file"`
	Compressed bool     `json:"compressed"`
	Columns    []string `json:"columns"`
	// TimeBase is "epoch" for traces with Unix timestamps (the
	// reference's), "virtual" for virtual time from 0.
	TimeBase string `json:"time_base"`
	// EpochStart is the Unix time of the first row, in seconds, for epoch
	// traces.
	EpochStart float64 `json:"epoch_start,omitempty"`
	Rows       int64   `json:"rows"`
	// StartS and EndS are the earliest and latest row times in seconds
	// (normalised to the first row for epoch traces); SpanS = EndS - StartS.
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	SpanS  float64 `json:"span_s"`
	// OutOfOrder counts rows whose timestamp is earlier than the row
	// before them.
	OutOfOrder int64 `json:"out_of_order"`
	// Objects counts distinct keys; Requests distinct non-zero Request
	// values (0 when the trace has no Request column).
	Objects  int64  `json:"objects"`
	Requests int64  `json:"requests"`
	Totals   Totals `json:"totals"`
	// ByOpTierPhase has one cell per operation x tier x phase that occurs,
	// in that order.
	ByOpTierPhase []Cell `json:"by_op_tier_phase"`
	// ObjectSize is the distribution of object sizes over distinct keys
	// (each key's first size).
	ObjectSize SizeStats `json:"object_size_bytes"`
	// ColdReads counts Read rows (any phase) of keys with no earlier Write
	// in the trace; ColdReadKeys the distinct keys among them.
	ColdReads    int64 `json:"cold_reads"`
	ColdReadKeys int64 `json:"cold_read_keys"`
	// SizeMismatchKeys counts keys whose rows do not all carry one size.
	SizeMismatchKeys int64      `json:"size_mismatch_keys"`
	Evict            EvictStats `json:"evict"`
	// Meta is the trace's sidecar, when there is one.
	Meta *Meta `json:"meta,omitempty"`
}

// Totals are row and byte counts by operation.
type Totals struct {
	ReadRows   int64 `json:"read_rows"`
	WriteRows  int64 `json:"write_rows"`
	DeleteRows int64 `json:"delete_rows"`
	ReadBytes  int64 `json:"read_bytes"`
	WriteBytes int64 `json:"write_bytes"`
}

// Cell counts the rows and bytes of one operation x tier x phase.
type Cell struct {
	Op    string `json:"op"`
	Tier  string `json:"tier"`
	Phase string `json:"phase"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

// SizeStats is a distribution of object sizes in bytes (nearest-rank
// percentiles).
type SizeStats struct {
	Min  int64   `json:"min"`
	P50  int64   `json:"p50"`
	P95  int64   `json:"p95"`
	Max  int64   `json:"max"`
	Mean float64 `json:"mean"`
}

// EvictStats describes the Evict rows. A pair is an Evict Read of a key
// followed later by an Evict Write of the same key; it is adjacent when the
// Write is the very next row.
type EvictStats struct {
	Pairs          int64 `json:"pairs"`
	Adjacent       int64 `json:"adjacent"`
	NonAdjacent    int64 `json:"non_adjacent"`
	UnpairedReads  int64 `json:"unpaired_reads"`
	UnpairedWrites int64 `json:"unpaired_writes"`
	// Moves counts pairs by direction, e.g. "Tier-0->Tier-1".
	Moves map[string]int64 `json:"moves"`
}

type keyInfo struct {
	size     int64
	written  bool
	coldRead bool
	mismatch bool
}

type pendingEvict struct {
	row  int64
	tier schema.Tier
}

// Summarizer accumulates a Summary one record at a time. Its memory grows
// with the number of distinct keys and requests, not with rows.
type Summarizer struct {
	s        Summary
	cells    [schema.NumOps][schema.NumTiers][schema.NumPhases]Cell
	keys     map[string]*keyInfo
	requests map[uint64]struct{}
	pending  map[string]pendingEvict
	minT     time.Duration
	maxT     time.Duration
	moves    [schema.NumTiers][schema.NumTiers]int64
}

// NewSummarizer returns an empty Summarizer.
func NewSummarizer() *Summarizer {
	return &Summarizer{
		keys:     make(map[string]*keyInfo),
		requests: make(map[uint64]struct{}),
		pending:  make(map[string]pendingEvict),
	}
}

// Add counts rec.
func (z *Summarizer) Add(rec *schema.Record) {
	s := &z.s
	row := s.Rows
	s.Rows++
	if row == 0 || rec.Time < z.minT {
		z.minT = rec.Time
	}
	if row == 0 || rec.Time > z.maxT {
		z.maxT = rec.Time
	}
	c := &z.cells[rec.Op][rec.Tier][rec.Phase]
	c.Rows++
	c.Bytes += rec.Size
	if rec.Request != 0 {
		z.requests[rec.Request] = struct{}{}
	}

	ki := z.keys[string(rec.Key)]
	if ki == nil {
		ki = &keyInfo{size: rec.Size}
		z.keys[string(rec.Key)] = ki
	} else if ki.size != rec.Size && !ki.mismatch {
		ki.mismatch = true
		s.SizeMismatchKeys++
	}
	switch rec.Op {
	case schema.OpWrite:
		ki.written = true
	case schema.OpRead:
		if !ki.written {
			s.ColdReads++
			if !ki.coldRead {
				ki.coldRead = true
				s.ColdReadKeys++
			}
		}
	}

	if rec.Phase != schema.PhaseEvict {
		return
	}
	e := &s.Evict
	switch rec.Op {
	case schema.OpRead:
		if _, dup := z.pending[string(rec.Key)]; dup {
			e.UnpairedReads++ // a second Evict Read before the first's Write
		}
		z.pending[string(rec.Key)] = pendingEvict{row: row, tier: rec.Tier}
	case schema.OpWrite:
		p, ok := z.pending[string(rec.Key)]
		if !ok {
			e.UnpairedWrites++
			return
		}
		delete(z.pending, string(rec.Key))
		e.Pairs++
		if p.row == row-1 {
			e.Adjacent++
		} else {
			e.NonAdjacent++
		}
		z.moves[p.tier][rec.Tier]++
	}
}

// Summary returns the summary of everything added so far.
func (z *Summarizer) Summary() *Summary {
	s := z.s
	s.StartS, s.EndS = z.minT.Seconds(), z.maxT.Seconds()
	s.SpanS = (z.maxT - z.minT).Seconds()
	s.Objects = int64(len(z.keys))
	s.Requests = int64(len(z.requests))
	s.ByOpTierPhase = nil
	s.Totals = Totals{}
	for op := range schema.Op(schema.NumOps) {
		for tier := range schema.Tier(schema.NumTiers) {
			for ph := range schema.Phase(schema.NumPhases) {
				c := z.cells[op][tier][ph]
				if c.Rows == 0 {
					continue
				}
				c.Op, c.Tier, c.Phase = op.String(), tier.String(), ph.String()
				s.ByOpTierPhase = append(s.ByOpTierPhase, c)
				switch op {
				case schema.OpRead:
					s.Totals.ReadRows += c.Rows
					s.Totals.ReadBytes += c.Bytes
				case schema.OpWrite:
					s.Totals.WriteRows += c.Rows
					s.Totals.WriteBytes += c.Bytes
				case schema.OpDelete:
					s.Totals.DeleteRows += c.Rows
				}
			}
		}
	}
	if s.ByOpTierPhase == nil {
		s.ByOpTierPhase = []Cell{}
	}
	sizes := make([]int64, 0, len(z.keys))
	var sum float64
	for _, ki := range z.keys {
		sizes = append(sizes, ki.size)
		sum += float64(ki.size)
	}
	slices.Sort(sizes)
	if n := len(sizes); n > 0 {
		s.ObjectSize = SizeStats{Min: sizes[0], P50: rank(sizes, 0.50), P95: rank(sizes, 0.95), Max: sizes[n-1], Mean: sum / float64(n)}
	}
	s.Evict.UnpairedReads += int64(len(z.pending))
	s.Evict.Moves = map[string]int64{}
	for from := range schema.Tier(schema.NumTiers) {
		for to := range schema.Tier(schema.NumTiers) {
			if n := z.moves[from][to]; n > 0 {
				s.Evict.Moves[from.String()+"->"+to.String()] = n
			}
		}
	}
	return &s
}

// rank returns the nearest-rank p-quantile of sorted.
func rank(sorted []int64, p float64) int64 {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// Summarize reads r to its end and summarises it. File, compression, columns
// and the time base come from r; the caller may attach a sidecar to Meta.
func Summarize(r *Reader) (*Summary, error) {
	z := NewSummarizer()
	var rec schema.Record
	for {
		err := r.Read(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		z.Add(&rec)
	}
	s := z.Summary()
	s.File = r.Name
	s.Compressed = r.Compressed()
	s.Columns, _ = r.Header()
	s.TimeBase = "virtual"
	if t, ok := r.Epoch(); ok {
		s.TimeBase = "epoch"
		s.EpochStart = float64(t.UnixMicro()) / 1e6
	}
	s.OutOfOrder = r.OutOfOrder()
	return s, nil
}

// WriteText renders s for people.
func (s *Summary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	comp := "plain"
	if s.Compressed {
		comp = "zstd"
	}
	p("trace %s (%s, %s time", s.File, comp, s.TimeBase)
	if s.TimeBase == "epoch" {
		p(" from %s", time.UnixMicro(int64(math.Round(s.EpochStart*1e6))).UTC().Format("2006-01-02T15:04:05.000000Z"))
	}
	p(")\n")
	p("columns: %s\n", joinNames(s.Columns))
	p("rows %d, objects %d", s.Rows, s.Objects)
	if s.Requests > 0 {
		p(", requests %d", s.Requests)
	}
	p("\ntime %.6f s to %.6f s (span %.6f s), %d rows out of order\n", s.StartS, s.EndS, s.SpanS, s.OutOfOrder)
	p("read %d rows %s, write %d rows %s, delete %d rows\n\n",
		s.Totals.ReadRows, dataGB(s.Totals.ReadBytes), s.Totals.WriteRows, dataGB(s.Totals.WriteBytes), s.Totals.DeleteRows)
	p("op\ttier\tphase\trows\tGB\t\n")
	for _, c := range s.ByOpTierPhase {
		p("%s\t%s\t%s\t%d\t%s\t\n", c.Op, c.Tier, c.Phase, c.Rows, strings.TrimSuffix(dataGB(c.Bytes), " GB"))
	}
	p("\nobject size\tmin %s\tp50 %s\tp95 %s\tmax %s\tmean %s\t\n",
		human(s.ObjectSize.Min), human(s.ObjectSize.P50), human(s.ObjectSize.P95), human(s.ObjectSize.Max), human(int64(s.ObjectSize.Mean)))
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p = func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	p("cold reads %d (of %d keys never written before their read)\n", s.ColdReads, s.ColdReadKeys)
	p("evict pairs %d: %d adjacent, %d not adjacent; unpaired %d reads, %d writes\n",
		s.Evict.Pairs, s.Evict.Adjacent, s.Evict.NonAdjacent, s.Evict.UnpairedReads, s.Evict.UnpairedWrites)
	for _, k := range slices.Sorted(maps.Keys(s.Evict.Moves)) {
		p("  %s\t%d\n", k, s.Evict.Moves[k])
	}
	if s.SizeMismatchKeys > 0 {
		p("keys whose size changes: %d\n", s.SizeMismatchKeys)
	}
	if m := s.Meta; m != nil {
		p("\nsidecar: %s %s, dialect %s, seed %d", m.Tool, m.ToolVersion, m.Dialect, m.Seed)
		if m.Model != "" {
			p(", model %s (%d bytes/token, TP %d)", m.Model, m.BytesPerToken, m.TensorParallel)
		}
		p(", measured from %.6f s\n", m.MeasuredFrom)
		for _, k := range slices.Sorted(maps.Keys(m.TierCapacityBytes)) {
			c := "unlimited"
			if v := m.TierCapacityBytes[k]; v >= 0 {
				c = human(v)
			}
			p("  capacity %s\t%s\n", k, c)
		}
		if len(m.CommandLine) > 0 {
			p("  command line: %s\n", strings.Join(m.CommandLine, " "))
		}
		for _, n := range m.Notes {
			p("  note: %s\n", n)
		}
	} else {
		p("\nno sidecar\n")
	}
	return tw.Flush()
}

// dataGB renders an amount of data moved in GB (10^9 bytes), as every
// kvbench output does, to three significant digits (more before the
// point): "0.0105 GB", "12.3 GB". Sizes (objects', tiers' capacities)
// stay binary (human), as the flags that set them take them.
func dataGB(n int64) string {
	v := float64(n) / 1e9
	if v <= 0 {
		return "0 GB"
	}
	return strconv.FormatFloat(v, 'f', max(0, 2-int(math.Floor(math.Log10(v)))), 64) + " GB"
}

// human renders a size with a binary unit.
func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), 0
	for v >= unit && i < 5 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.2f %ciB", v, "KMGTPE"[i-1])
}
