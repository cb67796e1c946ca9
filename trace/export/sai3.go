package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// Sai3Header is the header row of the op-log Sai3 writes: the s3dlio
// op-log columns, tab-separated.
const Sai3Header = "idx\tthread\top\tclient_id\tn_objects\tbytes\tendpoint\tfile\terror\tstart\tfirst_byte\tend\tduration_ns"

// sai3Time formats start times: RFC 3339 in UTC with all nine fraction
// digits, so that the text sorts as the times do.
const sai3Time = "2006-01-02T15:04:05.000000000Z07:00"

// Sai3Options shape Sai3's output. The zero value of a field means its
// default (DefaultSai3Options).
type Sai3Options struct {
	// Prefix is the endpoint column: the URI prefix the keys are objects
	// under, such as s3://bucket/ or file:///mnt/kv/. An object's URI is
	// Prefix followed by its key.
	Prefix string
	// Tiers are the tiers whose rows become operations; each must have
	// rows in the trace (Sai3 refuses one without, NoRowsError).
	Tiers []schema.Tier
	// SizeScale multiplies every object's size, truncated to whole bytes
	// as kvreplay scales; greater than 0 and at most 1.
	SizeScale float64
	// ClientID is the client_id column.
	ClientID string
	// Start is the time of the trace's time 0 when the trace has virtual
	// timestamps; the zero Time means 1970-01-01T00:00:00Z. A trace with
	// epoch timestamps (the reference's) keeps its own times.
	Start time.Time
}

// DefaultSai3Options returns the defaults: prefix s3://kvbench/, Tier-2
// only, no scaling, client kvtrace.
func DefaultSai3Options() Sai3Options {
	return Sai3Options{
		Prefix:    "s3://kvbench/",
		Tiers:     []schema.Tier{schema.TierNVMe},
		SizeScale: 1,
		ClientID:  "kvtrace",
	}
}

func (o Sai3Options) withDefaults() Sai3Options {
	d := DefaultSai3Options()
	if o.Prefix == "" {
		o.Prefix = d.Prefix
	}
	if len(o.Tiers) == 0 {
		o.Tiers = d.Tiers
	}
	if o.SizeScale == 0 {
		o.SizeScale = d.SizeScale
	}
	if o.ClientID == "" {
		o.ClientID = d.ClientID
	}
	return o
}

// Validate reports every problem of o at once, one per line, naming the
// flag of kvtrace export that sets the field.
func (o Sai3Options) Validate() error {
	o = o.withDefaults()
	var p problems
	if strings.ContainsAny(o.Prefix, "\t\r\n") {
		p.bad("--prefix %q: must not hold tabs or line breaks", o.Prefix)
	}
	p.add(checkTiers(o.Tiers))
	p.add(checkScale(o.SizeScale))
	if strings.ContainsAny(o.ClientID, "\t\r\n") {
		p.bad("client id %q: must not hold tabs or line breaks", o.ClientID)
	}
	return p.err()
}

// Sai3Stats is what Sai3 wrote.
type Sai3Stats struct {
	// Rows counts the trace rows read, of all tiers.
	Rows int64
	// Clamped counts operations earlier than the one before them, written
	// with that one's start time.
	Clamped int64
	// Ops and Bytes count the operations written and their bytes, by
	// schema.Op: GET, PUT, DELETE (DELETEs carry 0 bytes).
	Ops, Bytes [schema.NumOps]int64
	// TierRows counts the trace's rows on each tier, exported or not.
	TierRows [schema.NumTiers]int64
}

var sai3Ops = [schema.NumOps]string{schema.OpRead: "GET", schema.OpWrite: "PUT", schema.OpDelete: "DELETE"}

// Sai3 streams the trace once and writes its rows of opt.Tiers to w as a
// sai3-bench op-log: one operation per row, in trace order, with start
// times that never decrease. It returns what it wrote, and with an error
// the figures so far. A tier of opt.Tiers on which the trace has no rows
// is refused, once the trace is read, with a *NoRowsError (the op-log
// would leave its operations out without a word); w may have been
// written to, as with any error.
func Sai3(r *trace.Reader, w io.Writer, opt Sai3Options) (Sai3Stats, error) {
	opt = opt.withDefaults()
	var st Sai3Stats
	if err := opt.Validate(); err != nil {
		return st, fmt.Errorf("export: %w", err)
	}
	var on [schema.NumTiers]bool
	for _, t := range opt.Tiers {
		on[t] = true
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(Sai3Header + "\n")
	var (
		rec   schema.Record
		base  = opt.Start.UTC()
		first = true
		prev  time.Duration
		idx   int64
		b     []byte
	)
	if opt.Start.IsZero() {
		base = time.Unix(0, 0).UTC()
	}
	for {
		err := r.Read(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, fmt.Errorf("export: %w", err)
		}
		st.Rows++
		st.TierRows[rec.Tier]++
		if first {
			first = false
			if epoch, ok := r.Epoch(); ok {
				base = epoch
			}
			prev = rec.Time
		}
		if !on[rec.Tier] {
			continue
		}
		t := rec.Time
		if t < prev {
			t = prev
			st.Clamped++
		}
		prev = t
		var n int64
		if rec.Op != schema.OpDelete {
			n = trace.ScaledSize(rec.Size, opt.SizeScale)
		}
		b = b[:0]
		b = strconv.AppendInt(b, idx, 10)
		b = append(b, '\t')
		b = strconv.AppendUint(b, rec.Request, 10)
		b = append(b, '\t')
		b = append(b, sai3Ops[rec.Op]...)
		b = append(b, '\t')
		b = append(b, opt.ClientID...)
		b = append(b, "\t1\t"...)
		b = strconv.AppendInt(b, n, 10)
		b = append(b, '\t')
		b = append(b, opt.Prefix...)
		b = append(b, '\t')
		b = append(b, rec.Key...)
		b = append(b, "\t\t"...) // no error
		b = base.Add(t).AppendFormat(b, sai3Time)
		b = append(b, "\t\t\t\n"...) // no first_byte, end or duration
		bw.Write(b)
		idx++
		st.Ops[rec.Op]++
		st.Bytes[rec.Op] += n
	}
	if err := checkRows(r.Name, "op-log", opt.Tiers, &st.TierRows); err != nil {
		return st, err
	}
	if err := bw.Flush(); err != nil {
		return st, fmt.Errorf("export: sai3: %w", err)
	}
	return st, nil
}
