package reqtrace

import (
	"errors"
	"io"
	"strconv"
	"time"
)

// BurstGPT's column names (HPMLL/BurstGPT, BurstGPT_1.csv and later).
const (
	burstTimestamp = "Timestamp"
	burstRequest   = "Request tokens"
	burstResponse  = "Response tokens"
	burstTotal     = "Total tokens"
)

// burstGPT reads a BurstGPT CSV as kv-cache.py's _load_burst_trace does
// (csv.DictReader): Timestamp (float seconds; 0 when the column is absent),
// Request tokens and Response tokens (integers, required), Total tokens
// (an integer when present, otherwise unused). A row the reference drops
// with a ValueError or KeyError is dropped here and counted.
type burstGPT struct {
	base
	skipList
	t                      *csvTable
	iTS, iReq, iResp, iTot int   // field indexes, -1 when absent
	need                   int   // fields a row must have
	t0                     int64 // first row's timestamp, ns
}

var (
	_ Reader  = (*burstGPT)(nil)
	_ Skipper = (*burstGPT)(nil)
)

// newBurstGPT returns a nil Reader, not a typed nil, with an error.
func newBurstGPT(b base, r io.Reader) (Reader, error) {
	g := &burstGPT{base: b}
	g.t = newCSVTable(&g.base, r, true) // Python's csv module tolerates stray quotes
	if err := g.t.readHeader(); err != nil {
		return nil, err
	}
	g.iTS = g.t.column(burstTimestamp)
	g.iReq = g.t.column(burstRequest)
	g.iResp = g.t.column(burstResponse)
	g.iTot = g.t.column(burstTotal)
	var missing []string
	if g.iReq < 0 {
		missing = append(missing, burstRequest)
	}
	if g.iResp < 0 {
		missing = append(missing, burstResponse)
	}
	if missing != nil {
		return nil, g.t.missing(missing, `"Request tokens" and "Response tokens"`)
	}
	g.need = max(g.iTS, g.iReq, g.iResp, g.iTot) + 1
	return g, nil
}

func (g *burstGPT) format() Format { return FormatBurstGPT }

// Next implements Reader.
func (g *burstGPT) Next(req *Request) error {
	if g.err != nil {
		return g.err
	}
	for {
		rec, err := g.t.read()
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) && pe.Err == ErrBadCSV {
				g.add(pe)
				continue
			}
			return g.fail(err)
		}
		if pe := g.parse(rec, req); pe != nil {
			g.add(pe)
			continue
		}
		return nil
	}
}

// parse fills *req from rec, or says why the reference would drop the row.
func (g *burstGPT) parse(rec []string, req *Request) *ParseError {
	if len(rec) < g.need {
		return &ParseError{
			File:   g.name,
			Line:   g.t.line,
			Err:    ErrFieldCount,
			Detail: strconv.Itoa(len(rec)) + " fields, want at least " + strconv.Itoa(g.need),
		}
	}
	ts := int64(0)
	if g.iTS >= 0 {
		v, ok := parseSeconds(rec[g.iTS])
		if !ok {
			return g.t.bad(g.iTS, rec[g.iTS], ErrBadNumber, "want seconds, a finite decimal number")
		}
		ts = v
	}
	in, ok := parseCount(rec[g.iReq])
	if !ok {
		return g.t.bad(g.iReq, rec[g.iReq], ErrBadNumber, "want a non-negative integer")
	}
	out, ok := parseCount(rec[g.iResp])
	if !ok {
		return g.t.bad(g.iResp, rec[g.iResp], ErrBadNumber, "want a non-negative integer")
	}
	if g.iTot >= 0 {
		// The reference parses it (and would use it), so a row whose
		// total is not an integer is one it drops.
		if _, ok := parseInt(rec[g.iTot]); !ok {
			return g.t.bad(g.iTot, rec[g.iTot], ErrBadNumber, "want an integer")
		}
	}
	if !g.haveFirst {
		g.haveFirst = true
		g.t0 = ts
	}
	// Both timestamps are within ±maxSeconds, so this fits a Duration.
	*req = Request{Arrival: g.arrival(time.Duration(ts - g.t0)), Stamp: time.Duration(ts), InputTokens: in, OutputTokens: out}
	return nil
}

// line returns the line of the last request read.
func (g *burstGPT) line() int { return g.t.line }
