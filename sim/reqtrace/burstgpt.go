package reqtrace

import (
	"errors"
	"io"
	"strconv"
	"strings"
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
	ref                    RefDepartures
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
	if g.bom && len(g.t.header) > 0 {
		g.ref.BOMColumn = g.t.header[0]
	}
	return g, nil
}

// RefDepartures says where a BurstGPT file is read otherwise than
// kv-cache.py's --use-burst-trace reads it (csv.DictReader, float() and
// int(), ValueError and KeyError caught), as the sim package documents.
type RefDepartures struct {
	// Kept counts the rows dropped here that kv-cache.py keeps: a
	// Timestamp Python's float() reads that is not a finite number of at
	// most 4.5e9 s (nan, inf, 1e300), or a token count Python's int()
	// reads that is negative or beyond int64. KeptLine is the first's line.
	Kept     int64
	KeptLine int
	// Stall counts, of Kept, the rows whose Timestamp float() reads as
	// infinite or beyond ±4.5e9 s; StallLine is the first's line. Under
	// --trace-speedup above 0, kv-cache.py sleeps the gap to such a row
	// (after a negative one, to the next row) before it enqueues it, in 5 s
	// steps until the run ends: no request follows it.
	Stall     int64
	StallLine int
	// Short counts the rows, dropped here, with fewer fields than the
	// columns read; ShortLine is the first's line. kv-cache.py's reader
	// stops at the first (int(None) raises TypeError, which ends its
	// generator thread): no request follows it.
	Short     int64
	ShortLine int
	// BOMColumn is the name of the first column when the file began with
	// a UTF-8 byte order mark, which is dropped here; kv-cache.py keeps it
	// in that column's name ("\ufeffTimestamp") and so does not find the
	// column. "" when there was no mark.
	BOMColumn string
}

// keptByReference reports whether kv-cache.py keeps a row that parse
// drops for field i's value v: the float() or int() it applies reads v.
func (g *burstGPT) keptByReference(i int, v string) bool {
	if i == g.iTS {
		return pyFloatText(v)
	}
	return pyIntText(v)
}

// pyIntText reports whether Python's int() reads s, of any size or sign.
func pyIntText(s string) bool {
	_, ok := pyParse(s, func(s string) (struct{}, bool) {
		s, ok := pyDigits(strings.TrimSpace(s))
		if ok && s != "" && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		return struct{}{}, ok && s != "" && allDigits(s)
	})
	return ok
}

// pyFloatText reports whether Python's float() reads s: a decimal
// number, of any magnitude, or nan, inf or infinity, with a sign and
// spaces around it (not hex, which float() refuses).
func pyFloatText(s string) bool {
	_, ok := pyParse(s, func(s string) (struct{}, bool) {
		s, ok := pyDigits(strings.TrimSpace(s))
		if !ok || s == "" {
			return struct{}{}, false
		}
		body := s
		if body[0] == '+' || body[0] == '-' {
			body = body[1:]
		}
		switch strings.ToLower(body) {
		case "nan", "inf", "infinity":
			return struct{}{}, true
		}
		if body == "" || strings.ContainsAny(body, "xXpP") || body[0] == '+' || body[0] == '-' {
			return struct{}{}, false
		}
		_, err := strconv.ParseFloat(body, 64)
		var ne *strconv.NumError
		return struct{}{}, err == nil || errors.As(err, &ne) && ne.Err == strconv.ErrRange
	})
	return ok
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
		if g.ref.Short++; g.ref.ShortLine == 0 {
			g.ref.ShortLine = g.t.line
		}
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
			return g.bad(g.iTS, rec[g.iTS], "want seconds, a finite decimal number")
		}
		ts = v
	}
	in, ok := parseCount(rec[g.iReq])
	if !ok {
		return g.bad(g.iReq, rec[g.iReq], "want a non-negative integer")
	}
	out, ok := parseCount(rec[g.iResp])
	if !ok {
		return g.bad(g.iResp, rec[g.iResp], "want a non-negative integer")
	}
	if g.iTot >= 0 {
		// The reference parses it (and would use it), so a row whose
		// total is not an integer is one it drops.
		if _, ok := parseInt(rec[g.iTot]); !ok {
			return g.bad(g.iTot, rec[g.iTot], "want an integer")
		}
	}
	if !g.haveFirst {
		g.haveFirst = true
		g.t0 = ts
	}
	// Both timestamps are within ±maxSeconds, so this fits a Duration.
	*req = Request{Arrival: g.arrival(time.Duration(ts-g.t0), g.t.line), Stamp: time.Duration(ts), InputTokens: in, OutputTokens: out}
	return nil
}

// bad returns the ErrBadNumber error of field i's value v, counting the
// row in Kept when kv-cache.py reads v.
func (g *burstGPT) bad(i int, v, detail string) *ParseError {
	if g.keptByReference(i, v) {
		if g.ref.Kept++; g.ref.KeptLine == 0 {
			g.ref.KeptLine = g.t.line
		}
		// A timestamp float() reads and parseSeconds refuses is nan, or
		// infinite or beyond ±maxSeconds.
		if i == g.iTS && !strings.Contains(strings.ToLower(v), "nan") {
			if g.ref.Stall++; g.ref.StallLine == 0 {
				g.ref.StallLine = g.t.line
			}
		}
	}
	return g.t.bad(i, v, ErrBadNumber, detail)
}

// line returns the line of the last request read.
func (g *burstGPT) line() int { return g.t.line }
