package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// Source is one trace to replay.
type Source struct {
	// Name names the trace in results and errors ("-" for stdin).
	Name string
	// Open opens the trace from its start. It is called once, or twice
	// when Rescan is set and the plan prescans the trace.
	Open func() (*trace.Reader, error)
	// Rescan reports that Open can be called again (a file, not a pipe).
	Rescan bool
	// Meta is the trace's sidecar, nil when it has none.
	Meta *trace.Meta
}

// planAlign is the alignment sizes are planned with: the largest any
// backend declares, so a plan never underestimates.
const planAlign = 4096

// Plan is what a prescan of the traces found: what the run needs before it
// starts.
type Plan struct {
	// Scanned reports that the traces were read; otherwise the plan only
	// holds what the sidecars said.
	Scanned bool
	Rows    int64
	// Cold are the objects read before any write in the trace: the run
	// writes them untimed before its clock starts.
	Cold []ColdObject
	// Peak is the most physical bytes live at once on each backend, by
	// name (the tiers mapped to it together).
	Peak map[string]int64
	// MaxObject is the largest physical object size; MaxObjectOf the
	// largest on each backend, by name.
	MaxObject   int64
	MaxObjectOf map[string]int64
	// Used reports which trace tiers have rows.
	Used [schema.NumTiers]bool
	// UsedRows counts the rows of each trace tier.
	UsedRows [schema.NumTiers]int64
}

// ColdObject is an object read before it is written.
type ColdObject struct {
	Key     string
	Tier    schema.Tier
	Logical int64
}

// sizes returns an object's logical (scaled) and physical (aligned) size.
func sizes(size int64, scale float64, align int64) (logical, physical int64) {
	logical = size
	if scale != 1 {
		logical = int64(float64(size) * scale)
	}
	physical = (logical + align - 1) / align * align
	return logical, physical
}

// sourceKey namespaces a key by its trace when several are replayed.
func sourceKey(src int, nsrc int, key []byte) string {
	if nsrc == 1 {
		return string(key)
	}
	return strconv.Itoa(src) + ":" + string(key)
}

// Prepare reads the traces once (when they can be read twice and
// cfg.Prescan is set) to find cold objects, per-backend peak bytes and the
// largest object; otherwise it plans from the sidecars. Malformed traces
// stop here, before any I/O.
func Prepare(ctx context.Context, cfg *Config, srcs []Source) (*Plan, error) {
	p := &Plan{Peak: map[string]int64{}, MaxObjectOf: map[string]int64{}}
	scan := cfg.Prescan
	for _, s := range srcs {
		scan = scan && s.Rescan
	}
	if !scan {
		for _, s := range srcs {
			if s.Meta == nil {
				continue
			}
			for t := range schema.Tier(schema.NumTiers) {
				if b := cfg.TierMap[t]; b != "" {
					_, phys := sizes(s.Meta.PeakLiveBytes[t.String()], cfg.SizeScale, planAlign)
					p.Peak[b] += phys
				}
			}
		}
		return p, nil
	}
	p.Scanned = true
	type live struct {
		tier   schema.Tier
		phys   int64
		exists bool
	}
	objects := map[string]*live{}
	var cur [schema.NumTiers]int64
	account := func(t schema.Tier, d int64) {
		cur[t] += d
		if d <= 0 {
			return
		}
		b := cfg.TierMap[t]
		if b == "" {
			return
		}
		var sum int64
		for u := range schema.Tier(schema.NumTiers) {
			if cfg.TierMap[u] == b {
				sum += cur[u]
			}
		}
		p.Peak[b] = max(p.Peak[b], sum)
	}
	for i, s := range srcs {
		r, err := s.Open()
		if err != nil {
			return nil, err
		}
		var rec schema.Record
		for {
			if p.Rows&0xffff == 0 {
				if err := ctx.Err(); err != nil {
					r.Close()
					return nil, err
				}
			}
			err := r.Read(&rec)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.Close()
				return nil, err
			}
			p.Rows++
			p.Used[rec.Tier] = true
			p.UsedRows[rec.Tier]++
			key := sourceKey(i, len(srcs), rec.Key)
			logical, phys := sizes(rec.Size, cfg.SizeScale, planAlign)
			p.MaxObject = max(p.MaxObject, phys)
			if b := cfg.TierMap[rec.Tier]; b != "" {
				p.MaxObjectOf[b] = max(p.MaxObjectOf[b], phys)
			}
			o := objects[key]
			first := o == nil
			if first {
				o = &live{}
				objects[key] = o
			}
			switch {
			case rec.Op == schema.OpRead:
				if !o.exists {
					// A key read before any row wrote it is prepared before
					// the run; one read again after its Delete is written
					// again lazily, when the read comes.
					if first {
						p.Cold = append(p.Cold, ColdObject{Key: key, Tier: rec.Tier, Logical: logical})
					}
					o.tier, o.phys, o.exists = rec.Tier, phys, true
					account(rec.Tier, phys)
				}
			case rec.Op == schema.OpWrite:
				account(rec.Tier, phys)
				if o.exists {
					account(o.tier, -o.phys)
				}
				o.tier, o.phys, o.exists = rec.Tier, phys, true
			case rec.Op == schema.OpDelete:
				if o.exists {
					account(o.tier, -o.phys)
					o.exists = false
				}
			}
		}
		if err := r.Close(); err != nil {
			return nil, fmt.Errorf("replay: %s: %w", s.Name, err)
		}
	}
	if cfg.Capacity > 0 {
		if b := cfg.TierMap[schema.TierNVMe]; b != "" {
			p.Peak[b] = min(p.Peak[b], cfg.Capacity+p.MaxObjectOf[b])
		}
	}
	return p, nil
}
