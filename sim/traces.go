package sim

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/sim/reqtrace"
)

// ErrNoRequests is wrapped by the error of a trace-driven run whose trace
// holds no request: an empty ShareGPT file (the reference falls back to
// synthetic users, which only its log says), a request trace whose rows
// are all skipped.
var ErrNoRequests = errors.New("no requests in it")

// generator produces the requests of a trace-driven run (BurstGPT,
// ShareGPT, or a --request-trace) one at a time. next fills r and returns
// its arrival time; ok is false when every replay cycle is done.
type generator interface {
	next(r *request) (at time.Duration, ok bool, err error)
}

// minSpacing is the virtual time a generator with no pacing of its own
// (--trace-speedup 0, ShareGPT without --request-rate) spends per request:
// the reference's generator thread is as fast as Python goes, and virtual
// time must advance for the run to end.
const minSpacing = 100 * time.Microsecond

// rateGap is the gap between requests at rate per second, at least
// minSpacing: a --request-rate above 10,000 requests/s arrives as fast as
// an unpaced trace. Its gap rounded to 0 ns from 2e9 on, and virtual time
// stood still (the run never ended).
func rateGap(rate float64) time.Duration {
	return max(time.Duration(math.Round(float64(time.Second)/rate)), minSpacing)
}

// newGenerator returns the run's trace-driven generator, or nil for a
// synthetic run. ShareGPT takes precedence over BurstGPT, as in the
// reference.
func (e *engine) newGenerator() (generator, error) {
	cfg := e.cfg
	switch {
	case cfg.RequestTrace != "":
		f, err := reqtrace.ParseFormat(cfg.RequestTraceFormat)
		if cfg.RequestTraceFormat == "" {
			f, err = reqtrace.FormatAuto, nil
		}
		if err != nil {
			return nil, err
		}
		return e.newTraceGen([]string{cfg.RequestTrace}, f)
	case cfg.DatasetPath != "":
		g, err := e.newShareGPT(cfg.DatasetPath)
		if err == nil && g == nil {
			// The reference falls back to synthetic users: a run of
			// another workload than the one asked for, said only in a
			// note.
			err = fmt.Errorf("sim: --dataset-path %s: %w (want ShareGPT conversations of human and gpt turns)", cfg.DatasetPath, ErrNoRequests)
		}
		return g, err
	case cfg.UseBurstTrace:
		files, err := BurstFiles(cfg.BurstTracePath)
		if err != nil {
			return nil, err
		}
		return e.newTraceGen(files, reqtrace.FormatBurstGPT)
	}
	return nil, nil
}

// BurstFiles resolves --burst-trace-path p as kv-cache.py's
// _resolve_burst_trace_files does: a directory is its *.csv files; a path
// with a * or ? is a glob; any other path is the file itself (a [ in it is
// a character, not a pattern). A glob's wildcards match no name that
// starts with a dot, as Python's glob module's do: a directory copied from
// a Mac holds ._BurstGPT_1.csv beside BurstGPT_1.csv, which kv-cache.py
// never reads. The files come sorted. A directory without a CSV file and a
// glob that matches nothing are errors; a file is not checked here
// (opening it is).
func BurstFiles(p string) ([]string, error) {
	var files []string
	switch fi, err := os.Stat(p); {
	case err == nil && fi.IsDir():
		m, err := pyGlob(filepath.Join(p, "*.csv"))
		if err != nil {
			return nil, fmt.Errorf("--burst-trace-path %s: %w", p, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("--burst-trace-path %s: a directory with no *.csv file", p)
		}
		files = m
	case strings.ContainsAny(p, "*?"):
		m, err := pyGlob(p)
		if err != nil {
			return nil, fmt.Errorf("--burst-trace-path %s: %w", p, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("--burst-trace-path %s: no file matches", p)
		}
		files = m
	default:
		return []string{p}, nil
	}
	slices.Sort(files)
	return files, nil
}

// pyGlob is filepath.Glob without the matches that Python's glob leaves
// out: a name starting with a dot where the pattern's part for it has a
// wildcard and does not start with a dot itself.
func pyGlob(pattern string) ([]string, error) {
	m, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	pat := strings.Split(filepath.Clean(pattern), string(filepath.Separator))
	kept := m[:0]
	for _, f := range m {
		parts := strings.Split(f, string(filepath.Separator))
		hidden := false
		// Glob's matches have the cleaned pattern's parts, one for one,
		// counted from the end.
		for i, j := len(parts)-1, len(pat)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
			if strings.ContainsAny(pat[j], "*?[") && !strings.HasPrefix(pat[j], ".") && strings.HasPrefix(parts[i], ".") {
				hidden = true
				break
			}
		}
		if !hidden {
			kept = append(kept, f)
		}
	}
	return kept, nil
}

// arrival enqueues the generator's pending request, reading it first
// where none is pending, and schedules the next.
//
// A request's QoS is drawn as it is enqueued, and the next request is
// read once this one is dispatched (its event comes after this step's
// dispatch): the reference's generator thread draws a row's QoS, enqueues
// it and sleeps until the next row's time, and a worker takes the request,
// drawing its prefix-cache detection, while the generator sleeps. Its
// draws go QoS, prefix, QoS, prefix, ..., and so do kvtrace's; a QoS
// drawn when the request was read ahead came before the prefix draw of
// the request before it, and for the same seed every request's QoS and
// prefix differed from the reference's (a ShareGPT pass's shuffle too).
func (e *engine) arrival() error {
	if e.pending == nil {
		if err := e.fetch(); err != nil {
			return err
		}
		if e.pending == nil {
			// Every replay cycle is done: the reference stops the run.
			e.stopAfterDispatch = true
			return nil
		}
		if e.pendingAt > e.now {
			e.push(event{at: e.pendingAt, kind: evArrival})
			return nil
		}
	}
	if e.genZero && e.queue.Len() >= e.queueCap() {
		e.genBlock = true // dispatch re-arms the generator when there is room
		if e.departed["queue-cap"] {
			return nil // said once; formatting it at every blocked arrival costs one allocation a request
		}
		e.depart("queue-cap", fmt.Sprintf("the trace's requests have no pacing (--trace-speedup 0, or --dataset-path without --request-rate): "+
			"kv-cache.py's generator thread enqueues them as fast as Python runs, into an unbounded queue; here one arrives every %g ms "+
			"of virtual time while fewer than %d requests (twice the workers) are queued, and the generator waits for room", float64(minSpacing)/float64(time.Millisecond), e.queueCap()))
		return nil
	}
	r := e.pending
	e.pending = nil
	r.qos = uint8(e.drawQoS())
	r.phase = phaseOf(r.context)
	id := e.nextRequestID()
	r.id = id + 1
	// The user and key are built when the request is served (named).
	if r.key == "" {
		r.naming, r.traceUser = nameTrace, uint16(e.genIndex%1000)
	} else if r.userID == "" {
		r.naming = nameDataset
	}
	e.genIndex++
	e.enqueue(r)
	e.push(event{at: e.now, kind: evArrival})
	return nil
}

// fetch reads the generator's next request into pending.
func (e *engine) fetch() error {
	r := e.newRequest()
	at, ok, err := e.gen.next(r)
	if err != nil || !ok {
		e.free.Put(r)
		return err
	}
	e.pending, e.pendingAt = r, at
	return nil
}

// traceGen replays request-trace files with their own timestamps, scaled
// by --trace-speedup, for --replay-cycles passes (0: until the run ends).
type traceGen struct {
	runNoted   bool // endRun noted the open file's first pass
	e          *engine
	files      []string
	format     reqtrace.Format
	fileIdx    int
	cur        *reqtrace.File
	cycle      int
	rowsCycle  int
	cycleStart time.Duration
	last       time.Duration
	req        reqtrace.Request
	// paced is the pass's time so far at speed 1, as the reference's
	// replay sleeps it: the sum of the positive steps from one record's
	// Stamp to the next, over all the files of the pass (a record stamped
	// earlier than the one before it sleeps nothing, and the next sleeps
	// from it). prevStamp is the pass's last record's Stamp, stamped says
	// there is one.
	paced     time.Duration
	prevStamp time.Duration
	stamped   bool
	// absolute is set for a Mooncake or Azure trace, whose requests keep
	// their own times (their Arrival), a record stamped earlier than the
	// one before arriving with it. The reference reads neither format,
	// and a replay in the manner of its BurstGPT one, which sleeps from
	// each record's stamp, made one record out of order delay every
	// later one by as much.
	absolute bool
	// firstPass is the first pass's requests and span (of run time),
	// pass2At when the second began, later the requests of the passes
	// after the first: a trace shorter than --duration replayed again
	// (--replay-cycles 0) is said once the run ends (endRun).
	firstPass int
	span      time.Duration
	pass2At   time.Duration
	later     int64
	// absurd counts the records of the first pass whose lengths no model
	// serves (checkLengths); absurdAt names the first few.
	absurd   int
	absurdAt []string
	// untimed is set for a trace whose requests carry no arrival times (a
	// ShareGPT file, or a pass whose requests all arrive at once): its
	// requests are spaced at rate (setUntimed), or with --trace-speedup 0
	// by minSpacing with the generator held back while the queue is full.
	// At their recorded times they would all arrive at one instant, pass
	// after pass, and virtual time would never reach --duration.
	untimed bool
	rate    float64
	arr     *arrivals // under --arrival, the gaps at rate
	// keep says the pass being read is kept in kept; mem holds a kept
	// pass, replayed from memIdx instead of the file.
	keep   bool
	kept   []reqtrace.Request
	mem    []reqtrace.Request
	memIdx int
}

func (e *engine) newTraceGen(files []string, f reqtrace.Format) (generator, error) {
	g := &traceGen{e: e, files: files, format: f, cycleStart: e.now, last: e.now}
	e.genZero = e.cfg.TraceSpeedup == 0
	return g, nil
}

// DefaultUntimedRate is the arrival rate, in requests per second, of a
// --request-trace whose requests carry no arrival times (a ShareGPT file,
// or a pass whose requests all arrive at one instant) when --request-rate
// is not given: the rate of the reference's published ShareGPT run
// (--request-rate 20). Without a rate, such a trace ran at 10,000
// requests/s (one every minSpacing).
const DefaultUntimedRate = 20

// setUntimed spaces the requests from now on (see untimed), at
// --request-rate or DefaultUntimedRate, and says so; why says why the
// trace is untimed. With --trace-speedup 0 they come as fast as the
// workers take them.
func (g *traceGen) setUntimed(why string) {
	if g.untimed {
		return
	}
	g.untimed = true
	e := g.e
	switch {
	case e.cfg.RequestRate > 0:
		g.rate = e.cfg.RequestRate
		e.notes = append(e.notes, fmt.Sprintf("%s: its requests arrive at --request-rate %s requests/s", why, strconv.FormatFloat(g.rate, 'g', -1, 64)))
	case e.cfg.TraceSpeedup == 0:
		e.genZero = true
		e.notes = append(e.notes, why+": with --trace-speedup 0 its requests arrive as fast as the workers take them")
	default:
		g.rate = DefaultUntimedRate
		e.warn(fmt.Sprintf("%s: its requests arrive at %d requests/s, the default for an untimed trace (--request-rate sets it)", why, DefaultUntimedRate))
	}
	if g.rate > 0 && e.cfg.Arrival != "" {
		g.arr = newArrivals(e.cfg, g.rate)
		e.notes = append(e.notes, "arrivals: "+g.arr.describe()+", arrival seed "+strconv.FormatInt(e.cfg.ArrivalSeed, 10))
	}
}

func (g *traceGen) next(r *request) (time.Duration, bool, error) {
	e := g.e
	for {
		if g.cur == nil && (g.mem == nil || g.memIdx == len(g.mem)) {
			if g.fileIdx == len(g.files) || g.mem != nil {
				// End of a pass over all files.
				if g.rowsCycle == 0 {
					flag := "--request-trace"
					if e.cfg.RequestTrace == "" {
						flag = "--burst-trace-path"
					}
					return 0, false, fmt.Errorf("sim: %s %s: %w", flag, strings.Join(g.files, ", "), ErrNoRequests)
				}
				g.cycle++
				if e.cfg.ReplayCycles > 0 && g.cycle >= e.cfg.ReplayCycles {
					return 0, false, nil
				}
				start := g.last
				if g.cycle == 1 {
					g.firstPass, g.span = g.rowsCycle, g.last-g.cycleStart
				}
				if start == g.cycleStart {
					// A pass that spans no time (one request, or all at
					// one timestamp) would repeat at that instant without
					// end: its requests are spaced from now on.
					start += minSpacing
					g.setUntimed(g.files[0] + "'s requests all arrive at one instant")
				}
				g.fileIdx, g.rowsCycle, g.cycleStart, g.memIdx = 0, 0, start, 0
				if g.cycle == 1 {
					g.pass2At = start
				}
				g.paced, g.stamped = 0, false
			}
			if g.mem == nil {
				f, err := reqtrace.Open(g.files[g.fileIdx], g.format, reqtrace.Options{MaxConversations: e.cfg.MaxConversations, TimeUnit: e.cfg.RequestTraceTimeUnit, BlockTokens: e.cfg.RequestTraceBlockTokens,
					OpenFile: e.cfg.OpenInput})
				if err != nil {
					return 0, false, err
				}
				g.cur = f
				g.absolute = f.Format() == reqtrace.FormatMooncake || f.Format() == reqtrace.FormatAzure
				if g.cycle == 0 && g.fileIdx == 0 && e.cfg.ReplayCycles != 1 && slices.ContainsFunc(g.files, readOnce) {
					// A pipe cannot be read again: the first pass is
					// kept for the next ones.
					g.keep = true
				}
				if f.Format() == reqtrace.FormatShareGPT {
					g.setUntimed(g.files[g.fileIdx] + " is ShareGPT, whose requests carry no arrival times")
					// Its requests (at most --max-conversations
					// conversations' turns) are kept for the next passes:
					// parsing its JSON again on every pass was most of a
					// run's time.
					g.keep = g.keep || len(g.files) == 1
				}
			}
		}
		if g.cur == nil {
			g.req = g.mem[g.memIdx]
			g.memIdx++
		} else if err := g.cur.Next(&g.req); err == io.EOF {
			g.endFile()
			continue
		} else if err != nil {
			g.cur.Close()
			g.cur = nil
			return 0, false, err
		} else if g.keep {
			// Next reuses the record's hash ids: the kept one needs its own.
			kept := g.req
			kept.HashIDs = slices.Clone(g.req.HashIDs)
			g.kept = append(g.kept, kept)
		}
		g.rowsCycle++
		if g.cycle > 0 {
			g.later++
		}
		g.checkLengths()
		g.pace()
		at := g.last + minSpacing
		switch s := e.cfg.TraceSpeedup; {
		case g.untimed && g.arr != nil:
			at = g.last + g.arr.next()
		case g.untimed && g.rate > 0:
			at = g.last + rateGap(g.rate)
		case g.untimed:
		case s > 0:
			at = max(g.last, g.cycleStart+time.Duration(float64(g.paced)/s))
		}
		g.last = at
		r.context, r.gen = g.req.InputTokens, g.req.OutputTokens
		if len(g.req.HashIDs) > 0 {
			r.blocks, r.blockTokens = true, g.req.BlockTokens
			// Packed first, then copied: a new request's array is then
			// the size of its ids, not append's doubling.
			e.packed = packIDs(e.packed[:0], g.req.HashIDs)
			r.ids = append(r.ids[:0], e.packed...)
		}
		if g.req.Conversation != "" {
			r.key = g.req.Conversation + "_turn_" + strconv.Itoa(max(1, g.req.Turn))
		}
		return at, true, nil
	}
}

// pace adds the current record's step from the one before it in the pass
// to paced: its Stamp's advance, none when it is stamped earlier. Within a
// file whose stamps never decrease, paced is the record's Arrival; the
// next file of a pass goes on from the last record of the one before, as
// the reference's replay goes on sleeping from its previous timestamp
// (the files' Arrivals each start at 0).
func (g *traceGen) pace() {
	if g.absolute {
		g.paced = g.req.Arrival
		return
	}
	st := g.req.Stamp
	if g.stamped && st > g.prevStamp {
		step := st - g.prevStamp
		if step < 0 || g.paced+step < g.paced { // overflowed: stamps 292 years apart
			g.paced = math.MaxInt64
		} else {
			g.paced += step
		}
	}
	g.prevStamp, g.stamped = st, true
}

// endFile closes the current file at its end, noting what its first pass
// found.
func (g *traceGen) endFile() {
	if g.cycle == 0 {
		g.noteFile("")
	}
	g.cur.Close()
	g.cur = nil
	g.fileIdx++
	if g.keep && g.fileIdx == len(g.files) {
		g.mem, g.kept, g.keep = g.kept, nil, false
		if g.mem == nil {
			g.mem = []reqtrace.Request{}
		}
		g.memIdx = len(g.mem)
	}
}

// readOnce reports whether the request trace name can be read only once:
// standard input ("-"), a named pipe (a shell's <(command) included) or
// another file that is not a regular one.
func readOnce(name string) bool {
	if name == "-" {
		return true
	}
	fi, err := os.Stat(name)
	return err == nil && !fi.Mode().IsRegular()
}

// noteFile notes what the first pass of the current file found: in all
// of it, or, with a qualifier such as " (in the rows read before the run
// ended)", in what was read of it.
func (g *traceGen) noteFile(qualifier string) {
	e := g.e
	name := g.files[g.fileIdx]
	ref := g.cur.RefDepartures()
	if n := g.cur.Skipped(); n > 0 {
		like := "unparseable, as the reference skips them"
		if ref != nil && ref.Kept+ref.Short > 0 {
			like = fmt.Sprintf("unparseable; %d of them as the reference skips them", n-ref.Kept-ref.Short)
		}
		e.notes = append(e.notes, fmt.Sprintf("%s: %d rows skipped (%s)%s", name, n, like, qualifier))
	}
	if ref != nil && e.cfg.RequestTrace == "" {
		g.noteBurstDepartures(name, ref, qualifier)
	}
	if n, line := g.cur.Early(); n > 0 {
		how := " (the records after them keep their own times)"
		if !g.absolute {
			how = ", and the next sleeps from its stamp, as kv-cache.py's replay sleeps (t - previous t): the records after each arrive that much later than their stamps"
		}
		e.notes = append(e.notes, fmt.Sprintf("%s:%d: %d records stamped earlier than the record before them arrive with it%s%s", name, line, n, how, qualifier))
	}
	if u := g.cur.TimeUnit(); u != "" {
		found := " (the unit found from the first)"
		if e.cfg.RequestTraceTimeUnit != "" {
			found = "" // u says it was given
		}
		e.notes = append(e.notes, fmt.Sprintf("%s: timestamps read as %s%s", name, u, found))
	}
	if b := g.cur.HashBlocks(); b != nil && b.Fit+b.Apportioned > 0 {
		e.notes = append(e.notes, name+": "+b.String()+qualifier)
	}
	if g.absurd > 0 {
		e.warn(fmt.Sprintf("%d records with lengths no model serves (%s)%s: an input is capped at %d tokens, an output at %d, and --duration bounds a generation",
			g.absurd, strings.Join(g.absurdAt, "; "), qualifier, maxInputTokens, MaxGenTokens))
		g.absurd, g.absurdAt = 0, nil
	}
}

// noteBurstDepartures says where --use-burst-trace's file name was read
// otherwise than kv-cache.py reads it (reqtrace.RefDepartures).
func (g *traceGen) noteBurstDepartures(name string, ref *reqtrace.RefDepartures, qualifier string) {
	e := g.e
	if ref.Short > 0 {
		e.depart("burst-short", fmt.Sprintf("%s:%d: %d rows with fewer fields than the columns read were skipped%s, and the rows after them replayed; "+
			"kv-cache.py's reader stops at the first (int(None) raises TypeError and ends its generator thread), and no request follows it",
			name, ref.ShortLine, ref.Short, qualifier))
	}
	if ref.Kept > 0 {
		e.depart("burst-kept", fmt.Sprintf("%s:%d: %d rows skipped%s that kv-cache.py does not skip: a Timestamp of nan or inf or beyond 4.5e9 s, "+
			"or a negative token count, which its float() and int() read", name, ref.KeptLine, ref.Kept, qualifier))
	}
	if ref.Stall > 0 && e.cfg.TraceSpeedup > 0 {
		e.depart("burst-stall", fmt.Sprintf("%s:%d: %d rows with a Timestamp of inf or beyond ±4.5e9 s skipped%s, and the rows after them replayed; "+
			"kv-cache.py sleeps the gap to such a row ((timestamp - previous) / --trace-speedup; after a negative one, to the next row) "+
			"before it enqueues it, in 5 s steps until the run ends, and no request follows it", name, ref.StallLine, ref.Stall, qualifier))
	}
	switch ref.BOMColumn {
	case "":
	case "Timestamp":
		e.depart("burst-bom", name+": the file begins with a UTF-8 byte order mark, dropped here; kv-cache.py reads the first column's name "+
			"as \"\\ufeffTimestamp\", finds no Timestamp and reads every timestamp as 0, so its requests arrive at once")
	case "Request tokens", "Response tokens":
		e.depart("burst-bom", name+": the file begins with a UTF-8 byte order mark, dropped here; kv-cache.py reads the first column's name "+
			"as \"\\ufeff"+ref.BOMColumn+"\", finds no "+ref.BOMColumn+" column and skips every row")
	}
}

// endRun notes what the file still open in its first pass when the run
// ended (--duration) found in the rows read of it.
func (g *traceGen) endRun() {
	if g.cur != nil && g.cycle == 0 && !g.runNoted {
		g.runNoted = true
		g.noteFile(" (in the rows read before the run ended)")
	}
	later := g.later
	if g.e.pending != nil && g.cycle > 0 {
		later-- // read, due after the run's end
	}
	if later > 0 && g.e.cfg.ReplayCycles == 0 {
		secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
		g.e.notes = append(g.e.notes, fmt.Sprintf("%s: its %d requests span %s s, less than --duration %s s: replayed again from its end "+
			"(--replay-cycles 0, the default; --replay-cycles 1 replays it once), pass 2 from %s s: %d requests of later passes",
			strings.Join(g.files, ", "), g.firstPass, secs(g.span), secs(g.e.cfg.Duration), secs(g.pass2At), later))
	}
}

// Bounds of a request's lengths. A trace's record beyond them is a
// mistake or a test of the tool, not a request: both are capped and
// reported with the record's line.
const (
	// MaxGenTokens caps a trace request's output tokens: 128 Ki, more
	// than any model generates in one request. Without it, a record with
	// an output_length of 1e8 made 3 million decode reads a block.
	MaxGenTokens = 128 << 10
	// maxInputTokens caps a trace request's input tokens: 10 Mi tokens,
	// the largest context window offered (Llama 4 Scout's). Without it, a
	// BurstGPT row of 1e14 request tokens made an object of a negative
	// size (bytes per token x tokens overflowed), which ended the run.
	maxInputTokens = 10 << 20
)

// checkLengths caps and counts the current record's absurd lengths, naming
// the first few by line, on the first pass.
func (g *traceGen) checkLengths() {
	in, out := g.req.InputTokens, g.req.OutputTokens
	if in <= maxInputTokens && out <= MaxGenTokens {
		return
	}
	if out > MaxGenTokens {
		g.req.OutputTokens = MaxGenTokens
	}
	if in > maxInputTokens {
		g.req.InputTokens = maxInputTokens
	}
	if g.cycle > 0 {
		return
	}
	g.absurd++
	if len(g.absurdAt) < 3 {
		what := "output_length " + strconv.Itoa(out)
		if in > maxInputTokens {
			what = "input_length " + strconv.Itoa(in)
		}
		g.absurdAt = append(g.absurdAt, fmt.Sprintf("%s:%d: %s", g.files[g.fileIdx], g.cur.Line(), what))
	}
}

// shareGPTGen is the reference's ShareGPT replay: conversations shuffled
// on every pass, their turns in order, one request every 1/--request-rate
// seconds. Conversations are not registered for multi-turn history reads,
// and keys repeat on every pass, as in the reference.
type shareGPTGen struct {
	e      *engine
	convs  [][]reqtrace.Request
	order  []int
	ci, ti int
	cycle  int
	last   time.Duration
	first  bool
	gap    time.Duration
	arr    *arrivals // under --arrival, the gaps
}

func (e *engine) newShareGPT(path string) (generator, error) {
	f, err := reqtrace.Open(path, reqtrace.FormatShareGPT, reqtrace.Options{MaxConversations: e.cfg.MaxConversations, OpenFile: e.cfg.OpenInput})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g := &shareGPTGen{e: e, last: e.now, first: true}
	// The reference shuffles the file's elements that have pairs, each
	// its own entry whatever its id: elements sharing an id are not one
	// conversation.
	elem := 0
	var req reqtrace.Request
	for {
		err := f.Next(&req)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if n := f.Conversations(); n != elem {
			elem = n
			g.convs = append(g.convs, nil)
		}
		g.convs[len(g.convs)-1] = append(g.convs[len(g.convs)-1], req)
	}
	if len(g.convs) == 0 {
		return nil, nil
	}
	if e.cfg.DisableMultiTurn && !e.cfg.DecodeOnly {
		e.depart("sharegpt-single-turn", "--dataset-path with --disable-multi-turn: kv-cache.py's workers compare the requests' turn number, "+
			"None, with 1 and die at their first request (a TypeError), so its trace has no rows; here the conversations replay as without "+
			"--disable-multi-turn (its ShareGPT replay reads no history either way)")
	}
	g.gap = minSpacing
	r := e.cfg.RequestRate
	if r <= 0 && e.cfg.Arrival != "" {
		r = DefaultUntimedRate
		e.warn(fmt.Sprintf("--arrival %s without --request-rate: --dataset-path %s arrives at %d requests/s", e.cfg.Arrival, path, DefaultUntimedRate))
	}
	switch {
	case e.cfg.Arrival != "":
		g.arr = newArrivals(e.cfg, r)
		e.notes = append(e.notes, fmt.Sprintf("arrivals: %s, %.4g requests/s, arrival seed %d", g.arr.describe(), r, e.cfg.ArrivalSeed))
	case r > 0:
		g.gap = rateGap(r)
	default:
		e.genZero = true
	}
	g.shuffle()
	return g, nil
}

func (g *shareGPTGen) shuffle() {
	g.order = g.order[:0]
	for i := range g.convs {
		g.order = append(g.order, i)
	}
	g.e.rng.Shuffle(len(g.order), func(i, j int) { g.order[i], g.order[j] = g.order[j], g.order[i] })
	g.ci, g.ti = 0, 0
}

func (g *shareGPTGen) next(r *request) (time.Duration, bool, error) {
	if g.ci < len(g.order) && g.ti >= len(g.convs[g.order[g.ci]]) {
		g.ci, g.ti = g.ci+1, 0
	}
	if g.ci >= len(g.order) {
		g.cycle++
		if c := g.e.cfg.ReplayCycles; c > 0 && g.cycle >= c {
			return 0, false, nil
		}
		g.shuffle()
	}
	t := g.convs[g.order[g.ci]][g.ti]
	g.ti++
	r.context, r.gen = t.InputTokens, t.OutputTokens
	r.key = t.Conversation + "_turn_" + strconv.Itoa(t.Turn)
	at := g.last
	switch {
	case g.first:
	case g.arr != nil:
		at += g.arr.next()
	default:
		at += g.gap
	}
	g.first = false
	g.last = at
	return at, true, nil
}
