package sim

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/sim/reqtrace"
)

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
		if err != nil || g != nil {
			return g, err
		}
		e.notes = append(e.notes, "the ShareGPT dataset is empty: falling back to synthetic users (as the reference does)")
		return nil, nil
	case cfg.UseBurstTrace:
		files, err := burstFiles(cfg.BurstTracePath)
		if err != nil {
			return nil, err
		}
		return e.newTraceGen(files, reqtrace.FormatBurstGPT)
	}
	return nil, nil
}

// burstFiles resolves --burst-trace-path as the reference does: a
// directory (its *.csv, sorted), a glob, or a file.
func burstFiles(p string) ([]string, error) {
	var files []string
	if strings.ContainsAny(p, "*?[") {
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("--burst-trace-path %s: %w", p, err)
		}
		files = m
	} else if m, err := filepath.Glob(filepath.Join(p, "*.csv")); err == nil && len(m) > 0 {
		files = m
	} else {
		files = []string{p}
	}
	slices.Sort(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("--burst-trace-path %s: no CSV files match", p)
	}
	return files, nil
}

// arrival enqueues the generator's pending request and schedules the next.
func (e *engine) arrival() error {
	if e.pending == nil {
		if err := e.fetch(); err != nil || e.pending == nil {
			return err
		}
		if e.pendingAt > e.now {
			e.push(event{at: e.pendingAt, kind: evArrival})
			return nil
		}
	}
	if e.genZero && e.queue.Len() >= e.queueCap() {
		e.genBlock = true // dispatch re-arms the generator when there is room
		return nil
	}
	r := e.pending
	e.pending = nil
	id := e.nextRequestID()
	r.id = id + 1
	if r.key == "" {
		r.userID = "trace_user_" + strconv.Itoa(e.genIndex%1000)
		r.key = fmt.Sprintf("%s_req_%04d", r.userID, id)
	} else if r.userID == "" {
		r.userID = "dataset_user_" + strconv.FormatUint(id%uint64(max(1, e.cfg.NumUsers)), 10)
	}
	e.genIndex++
	e.enqueue(r)
	if err := e.fetch(); err != nil {
		return err
	}
	if e.pending == nil {
		// Every replay cycle is done: the reference stops the run.
		e.stopAfterDispatch = true
		return nil
	}
	e.push(event{at: max(e.pendingAt, e.now), kind: evArrival})
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
	r.qos = e.drawQoS()
	r.priority = e.cfg.QoS[r.qos].Priority
	r.phase = phaseOf(r.context)
	e.pending, e.pendingAt = r, at
	return nil
}

// traceGen replays request-trace files with their own timestamps, scaled
// by --trace-speedup, for --replay-cycles passes (0: until the run ends).
type traceGen struct {
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
	// untimed is set for a trace whose requests carry no arrival times (a
	// ShareGPT file, or a pass whose requests all arrive at once): its
	// requests are spaced by --request-rate, else by minSpacing with the
	// generator held back while the queue is full. At their recorded
	// times they would all arrive at one instant, pass after pass, and
	// virtual time would never reach --duration.
	untimed bool
}

func (e *engine) newTraceGen(files []string, f reqtrace.Format) (generator, error) {
	g := &traceGen{e: e, files: files, format: f, cycleStart: e.now, last: e.now}
	e.genZero = e.cfg.TraceSpeedup == 0
	return g, nil
}

// setUntimed spaces the requests from now on (see untimed).
func (g *traceGen) setUntimed() {
	if g.untimed {
		return
	}
	g.untimed = true
	if g.e.cfg.RequestRate <= 0 {
		g.e.genZero = true
	}
}

func (g *traceGen) next(r *request) (time.Duration, bool, error) {
	e := g.e
	for {
		if g.cur == nil {
			if g.fileIdx == len(g.files) {
				// End of a pass over all files.
				if g.rowsCycle == 0 {
					e.notes = append(e.notes, "the request trace yielded no requests")
					return 0, false, nil
				}
				g.cycle++
				if e.cfg.ReplayCycles > 0 && g.cycle >= e.cfg.ReplayCycles {
					return 0, false, nil
				}
				start := g.last
				if start == g.cycleStart {
					// A pass that spans no time (one request, or all at
					// one timestamp) would repeat at that instant without
					// end: its requests are spaced from now on.
					start += minSpacing
					g.setUntimed()
				}
				g.fileIdx, g.rowsCycle, g.cycleStart = 0, 0, start
			}
			f, err := reqtrace.Open(g.files[g.fileIdx], g.format, reqtrace.Options{MaxConversations: e.cfg.MaxConversations, TimeUnit: e.cfg.RequestTraceTimeUnit, BlockTokens: e.cfg.RequestTraceBlockTokens})
			if err != nil {
				return 0, false, err
			}
			g.cur = f
			if f.Format() == reqtrace.FormatShareGPT {
				g.setUntimed()
			}
		}
		err := g.cur.Next(&g.req)
		if err == io.EOF {
			if n := g.cur.Skipped(); n > 0 && g.cycle == 0 {
				e.notes = append(e.notes, fmt.Sprintf("%s: %d rows skipped (unparseable, as the reference skips them)", g.files[g.fileIdx], n))
			}
			if u := g.cur.TimeUnit(); u != "" && g.cycle == 0 {
				e.notes = append(e.notes, fmt.Sprintf("%s: timestamps read as %s (the unit found from the first)", g.files[g.fileIdx], u))
			}
			if b := g.cur.HashBlocks(); b != nil && b.Fit+b.Apportioned > 0 && g.cycle == 0 {
				e.notes = append(e.notes, g.files[g.fileIdx]+": "+b.String())
			}
			g.cur.Close()
			g.cur = nil
			g.fileIdx++
			continue
		}
		if err != nil {
			g.cur.Close()
			g.cur = nil
			return 0, false, err
		}
		g.rowsCycle++
		at := g.last + minSpacing
		switch s := e.cfg.TraceSpeedup; {
		case g.untimed && e.cfg.RequestRate > 0:
			at = g.last + time.Duration(math.Round(float64(time.Second)/e.cfg.RequestRate))
		case g.untimed:
		case s > 0:
			at = max(g.last, g.cycleStart+time.Duration(float64(g.req.Arrival)/s))
		}
		g.last = at
		r.context, r.gen = g.req.InputTokens, g.req.OutputTokens
		if len(g.req.HashIDs) > 0 {
			r.blocks, r.blockTokens = true, g.req.BlockTokens
			r.hashIDs = append(r.hashIDs[:0], g.req.HashIDs...)
		}
		if g.req.Conversation != "" {
			r.key = g.req.Conversation + "_turn_" + strconv.Itoa(max(1, g.req.Turn))
		}
		return at, true, nil
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
}

func (e *engine) newShareGPT(path string) (generator, error) {
	f, err := reqtrace.Open(path, reqtrace.FormatShareGPT, reqtrace.Options{MaxConversations: e.cfg.MaxConversations})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g := &shareGPTGen{e: e, last: e.now, first: true}
	index := map[string]int{}
	var req reqtrace.Request
	for {
		err := f.Next(&req)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		i, ok := index[req.Conversation]
		if !ok {
			i = len(g.convs)
			index[req.Conversation] = i
			g.convs = append(g.convs, nil)
		}
		g.convs[i] = append(g.convs[i], req)
	}
	if len(g.convs) == 0 {
		return nil, nil
	}
	g.gap = minSpacing
	if r := e.cfg.RequestRate; r > 0 {
		g.gap = time.Duration(math.Round(float64(time.Second) / r))
	} else {
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
	if !g.first {
		at += g.gap
	}
	g.first = false
	g.last = at
	return at, true, nil
}
