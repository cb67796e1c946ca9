package reqtrace

import (
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// The Azure LLM inference traces' column names (Azure/AzurePublicDataset,
// AzureLLMInferenceTrace_{code,conv}.csv of 2023 and the 2024 week-long
// traces).
const (
	azureTimestamp = "TIMESTAMP"
	azureContext   = "ContextTokens"
	azureGenerated = "GeneratedTokens"
)

// azure reads an Azure LLM inference trace. Every row must have as many
// fields as the header; unlike BurstGPT there is no reference that skips
// bad rows, so a bad row ends the trace with a *ParseError.
type azure struct {
	base
	t               *csvTable
	iTS, iCtx, iGen int
	t0              time.Time
}

var _ Reader = (*azure)(nil)

// newAzure returns a nil Reader, not a typed nil, with an error.
func newAzure(b base, r io.Reader) (Reader, error) {
	a := &azure{base: b}
	a.t = newCSVTable(&a.base, r, false)
	if err := a.t.readHeader(); err != nil {
		return nil, err
	}
	a.iTS = a.t.column(azureTimestamp)
	a.iCtx = a.t.column(azureContext)
	a.iGen = a.t.column(azureGenerated)
	var missing []string
	for _, c := range []struct {
		name string
		i    int
	}{{azureTimestamp, a.iTS}, {azureContext, a.iCtx}, {azureGenerated, a.iGen}} {
		if c.i < 0 {
			missing = append(missing, c.name)
		}
	}
	if missing != nil {
		return nil, a.t.missing(missing, "TIMESTAMP, ContextTokens and GeneratedTokens")
	}
	return a, nil
}

func (a *azure) format() Format { return FormatAzure }

// Next implements Reader.
func (a *azure) Next(req *Request) error {
	if a.err != nil {
		return a.err
	}
	rec, err := a.t.read()
	if err != nil {
		return a.fail(err)
	}
	if len(rec) != len(a.t.header) {
		return a.fail(&ParseError{
			File:   a.name,
			Line:   a.t.line,
			Err:    ErrFieldCount,
			Detail: strconv.Itoa(len(rec)) + " fields, want " + strconv.Itoa(len(a.t.header)),
		})
	}
	t, ok := parseAzureTime(rec[a.iTS])
	if !ok {
		return a.fail(a.t.bad(a.iTS, rec[a.iTS], ErrBadTime, `want a date and time like "2023-11-16 18:17:03.9799600" or "2024-05-10 00:00:00.009930+00:00"`))
	}
	ctx, ok := parseCount(rec[a.iCtx])
	if !ok {
		return a.fail(a.t.bad(a.iCtx, rec[a.iCtx], ErrBadNumber, "want a non-negative integer"))
	}
	gen, ok := parseCount(rec[a.iGen])
	if !ok {
		return a.fail(a.t.bad(a.iGen, rec[a.iGen], ErrBadNumber, "want a non-negative integer"))
	}
	if !a.haveFirst {
		a.haveFirst = true
		a.t0 = t
	}
	d := t.Sub(a.t0)
	if d == math.MaxInt64 || d == math.MinInt64 { // Sub saturates
		return a.fail(a.t.bad(a.iTS, rec[a.iTS], ErrBadTime, "more than 292 years from the first row"))
	}
	*req = Request{Arrival: a.arrival(d, a.t.line), Stamp: d, InputTokens: ctx, OutputTokens: gen}
	return nil
}

// parseAzureTime parses "2023-11-16 18:17:03.9799600" (any number of
// fractional digits, taken as UTC) and "2024-05-10 00:00:00.009930+00:00"
// (with an offset, or Z); a T between date and time is accepted too.
func parseAzureTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) < len("2006-01-02 15:04:05") {
		return time.Time{}, false
	}
	layout := "2006-01-02 15:04:05"
	if s[10] == 'T' {
		layout = "2006-01-02T15:04:05"
	}
	if strings.ContainsAny(s[19:], "Z+-") {
		layout += "Z07:00"
	}
	t, err := time.Parse(layout, s)
	return t, err == nil
}

// line returns the line of the last request read.
func (a *azure) line() int { return a.t.line }
