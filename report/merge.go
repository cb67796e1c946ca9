package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// maxErrorMessages bounds the first error messages a merge keeps.
const maxErrorMessages = 10

// MergeRanks merges the documents of the ranks of one run into one result
// document, itself valid (Ranks is the run's, Rank 0). A merge that lacks
// some of the run's ranks (MissingRanks) is marked incomplete, with a
// warning, and is never a PASS; merged with the ranks it lacks, it is
// whole again.
// The merge is exact where the documents allow it, with results'
// aggregates, the ones kvreplay measures with: operation counts and bytes
// add, cells are matched by tier, operation and phase, and their
// HdrHistograms are decoded and added (percentiles are recomputed, never
// averaged); offered load is recomputed over the common wall-clock window
// (the earliest Started to the latest Started+WallS); timelines are
// aligned by Started, to the whole second; QoS compliance is recomputed
// from the requests within target of each rank; tier totals and the
// summary are recomputed as kvreplay computes them; the host names are
// joined and every rank's distinct tier paths kept; each warning is kept
// once, saying which ranks gave it ("rank 2: ...", "all ranks: ...": a
// rank's warning speaks of "this rank"). Three figures cannot
// be exact and say so here: a cell's and a tier's busy times are the
// longest of the ranks' (so the device rate over them is an upper bound), a
// second's LagP99US the highest of the ranks', and storage KV tokens per
// second the ranks' tokens over the common window (unknown when a rank's
// are). Device latency is merged only where every rank that read or
// wrote has one: a rank of an older kvreplay without it leaves the merge
// without it, with a warning naming the rank (checkDevice). The documents must share their size scale (checkScales: an
// error wrapping ErrScales); a document whose
// figures contradict each other, that names an unknown QoS class or whose
// QoS targets differ from this build's is refused, and the error names it.
// Documents whose window, from the earliest start to the latest end, is
// longer than a result document's wall_s can be (maxMergeWindow) are
// refused, wrapping ErrIncompatible, even where a caller merges them
// anyway.
// The merged document's MergedRanks are the ranks it holds. MergeRanks
// does not check that the documents are distinct ranks of one run:
// CheckRanks does, and callers call it first unless told not to. The
// inputs are not modified.
func MergeRanks(docs []*schema.Result) (*schema.Result, error) {
	return MergeRanksContext(context.Background(), docs)
}

// MergeRanksContext is MergeRanks, checking ctx before each document it
// gathers and each cell it merges: once ctx is done it returns ctx's
// error, wrapped, and no document.
func MergeRanksContext(ctx context.Context, docs []*schema.Result) (*schema.Result, error) {
	if len(docs) == 0 {
		return nil, fmt.Errorf("report: merge: no documents")
	}
	first := docs[0]
	if err := checkScales(docs, func(i int) string { return fmt.Sprintf("document %d", i+1) }); err != nil {
		return nil, fmt.Errorf("report: merge: %w", err)
	}
	out := &schema.Result{
		Header: first.Header, Trial: first.Trial,
		Rank: 0, Complete: true,
		Host: first.Host, Config: first.Config, SizeScale: first.SizeScale,
	}
	// Every rank's tier paths (their drives and file systems may differ),
	// gathered by add; first's are not appended to.
	out.Host.TierPaths = nil
	out.Format, out.FormatVersion = schema.ResultFormat, schema.ResultFormatVersion
	start, end := first.Started, first.Started
	earliest, latest := 0, 0
	for i, d := range docs {
		if d.Started.Before(start) {
			start, earliest = d.Started, i
		}
		if e := d.Started.Add(seconds(d.WallS)); e.After(end) {
			end, latest = e, i
		}
	}
	// Sub saturates at 292 years, past the bound.
	if end.Sub(start) > maxMergeWindow {
		return nil, fmt.Errorf("report: merge: document %d and document %d: %w: the first started at %s, the other ended at %s, "+
			"more than %g s later, the longest window a result document holds: the ranks of one run replay together",
			earliest+1, latest+1, ErrIncompatible, start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339), maxFigure)
	}
	wall := end.Sub(start)
	out.Started = start
	out.WallS = wall.Seconds()

	m := &rankMerger{ctx: ctx, docs: docs, out: out, start: start, cells: map[cellKey]*cellAcc{},
		reqs: make([]schema.RequestStats, len(docs)), lags: make([]schema.Latency, len(docs)),
		tokensKnown: true, timeline: map[int]*schema.Second{}, warnings: map[string][]int{}, rankHealthKnown: true}
	for n, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("report: merge: %w", err)
		}
		m.add(n, d)
	}
	m.checkDevice()
	slices.Sort(out.MergedRanks)
	ranks, held, missing := MissingRanks(docs)
	out.Ranks = max(ranks, len(held))
	out.Warnings = m.rankWarnings(held, len(missing) == 0)
	if m.rankHealthKnown && len(m.rankHealth) > 0 {
		out.RankHealth = m.rankHealth
		slices.SortFunc(out.RankHealth, func(a, b schema.RankStatus) int { return cmp.Compare(a.Rank, b.Rank) })
	}
	if len(missing) > 0 {
		markPartial(out, out.Ranks, held, missing)
	}
	slices.Sort(m.hosts)
	out.Host.Hostname = strings.Join(m.hosts, ",")
	err := m.mergeFigures(wall)
	if err != nil {
		return nil, err
	}
	for _, t := range slices.Sorted(maps.Keys(m.timeline)) {
		out.Timeline = append(out.Timeline, *m.timeline[t])
	}
	out.RankImbalance = imbalance(docs, wall)
	if out.ClosedLoop, err = m.mergeClosed(); err != nil {
		return nil, err
	}
	var kvTokens *float64
	if m.tokensKnown {
		kvTokens = &m.tokens
	}
	if out.Summary, err = results.Summarize(out, kvTokens); err != nil {
		return nil, fmt.Errorf("report: merge: %w", err)
	}
	return out, nil
}

// maxMergeWindow bounds a merge's window, from the earliest start to the
// latest end, to the wall_s any document holds (maxFigure): the ranks of
// one run replay together (CheckRanks), and documents decades apart
// (merged with --force, or a forged or missing "started") would make a
// merged document that kvreport refuses, or a window past what
// time.Duration holds. Each rank's timeline is placed by its start in the
// window: its seconds, not the window's, are kept, so a long window
// costs nothing.
const maxMergeWindow = time.Duration(maxFigure) * time.Second

// rankMerger gathers what MergeRanks merges from each document into out.
// The documents' cells, requests and lag are gathered first and merged at
// once, which decodes their histograms much faster than one by one.
type rankMerger struct {
	ctx         context.Context // checked before each cell is merged
	docs        []*schema.Result
	out         *schema.Result
	start       time.Time // the earliest document's start
	cells       map[cellKey]*cellAcc
	reqs        []schema.RequestStats
	lags        []schema.Latency
	hosts       []string
	tokens      float64 // storage KV tokens, over the ranks
	tokensKnown bool    // every rank said its tokens
	timeline    map[int]*schema.Second
	// warnings are the ranks that gave each warning, warnOrder the
	// warnings in the order they first came.
	warnings  map[string][]int
	warnOrder []string
	// rankHealth is each kvreplay rank's own status; rankHealthKnown
	// false when a merged document written before RankHealth hid its
	// ranks' (its warnings still say their failures).
	rankHealth      []schema.RankStatus
	rankHealthKnown bool
	// noDevice is set when some documents have device latency and some
	// that read or wrote have none (checkDevice): the merge gives none.
	noDevice bool
}

// noDeviceWarning is the warning of a rank whose document has no device
// latency, merged with ranks that have one.
const noDeviceWarning = "NO DEVICE LATENCY: this rank read or wrote, and its document has none (a kvreplay older than device latency): " +
	"the merge gives no device latency, which would hold the other ranks' operations alone; " +
	"its summary's storage_*_device figures are the latency from submission, as an older document's"

// checkDevice sets m.noDevice, and warns naming the ranks without it,
// where some of m's documents have device latency (schema.DeviceLatency:
// every kvreplay since it was measured records one for each operation
// read or written) and some that read or wrote have none: merged, the
// run's device latency would hold only some ranks' operations, shown as
// the whole run's, where the summary of a merge without it takes every
// rank's latency from submission instead (results.DeviceOf).
func (m *rankMerger) checkDevice() {
	var without []int
	with := false
	for _, d := range m.docs {
		if len(d.Device) > 0 {
			with = true
			continue
		}
		if slices.ContainsFunc(d.Cells, func(c schema.Cell) bool {
			return c.Ops > 0 && (c.Op == schema.OpRead.String() || c.Op == schema.OpWrite.String())
		}) {
			without = append(without, ranksOf(d)...)
		}
	}
	if !with || len(without) == 0 {
		return
	}
	m.noDevice = true
	if _, ok := m.warnings[noDeviceWarning]; !ok {
		m.warnOrder = append(m.warnOrder, noDeviceWarning)
	}
	m.warnings[noDeviceWarning] = append(m.warnings[noDeviceWarning], without...)
}

// allRanks starts a merged document's warning that every rank of its run
// gave.
const allRanks = "all ranks: "

// rankPrefix matches a warning that names its ranks (rankWarnings'),
// the ranks as rankList writes them in its group 1.
var rankPrefix = regexp.MustCompile(`^ranks? ([0-9][0-9, -]*): `)

// rankPrefixed splits a warning of a document holding the ranks own that
// names its ranks into the ranks and the warning; false for one that
// names none, or names a rank the document does not hold (a damaged
// document: "ranks 0-2000000000" is not expanded).
func rankPrefixed(w string, own []int) ([]int, string, bool) {
	sub := rankPrefix.FindStringSubmatch(w)
	if sub == nil {
		return nil, w, false
	}
	var rs []int
	for _, part := range strings.Split(sub[1], ", ") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || b < a || b-a >= len(own) {
			return nil, w, false
		}
		for r := a; r <= b; r++ {
			if !slices.Contains(own, r) {
				return nil, w, false
			}
			rs = append(rs, r)
		}
	}
	return rs, w[len(sub[0]):], true
}

// rankWarnings are the merged document's warnings, each once, in the
// order they came, saying whose they are: a rank's own warning speaks of
// "this rank", which means nothing in a document of several. One that
// every rank held gave begins "all ranks: " when the merge is the whole
// run (whole), else it names the ranks held; one that only some gave
// names them ("rank 2: ", "ranks 0, 1, 3: "). A document of one rank keeps
// its warnings as they are.
func (m *rankMerger) rankWarnings(held []int, whole bool) []string {
	out := make([]string, 0, len(m.warnOrder))
	for _, w := range m.warnOrder {
		rs := slices.Compact(slices.Sorted(slices.Values(m.warnings[w])))
		switch {
		case len(held) < 2:
		case whole && slices.Equal(rs, held):
			w = allRanks + w
		default:
			w = rankList(rs) + ": " + w
		}
		out = appendUnique(out, w)
	}
	return out
}

// addRankHealth gathers d's ranks' own verdicts, which the pooled
// criteria do not show: a merged document's RankHealth, or a kvreplay
// rank's storage_health judged as its own run (a partial merge's
// incompleteness, markPartial's, is of the merge, not of the rank). A
// rank that did not pass is also said in the warnings, with its reasons.
func (m *rankMerger) addRankHealth(d *schema.Result) {
	if len(d.MergedRanks) >= 2 {
		m.rankHealth = append(m.rankHealth, d.RankHealth...)
		m.rankHealthKnown = m.rankHealthKnown && d.RankHealth != nil
		return
	}
	if d.Tool != KindKVReplay {
		return
	}
	own := d
	if reason, incomplete := withoutPartial(d); !d.Complete && !incomplete {
		whole := *d
		whole.Complete, whole.IncompleteReason = true, reason
		own = &whole
	}
	h := results.Health(own, &own.Summary)
	rank := ranksOf(d)[0]
	s := schema.RankStatus{Rank: rank, Status: h.OverallStatus}
	if h.OverallStatus != results.HealthPass {
		s.Reasons = h.Reasons
		w := results.RankHealthWarning(h)
		if _, ok := m.warnings[w]; !ok {
			m.warnOrder = append(m.warnOrder, w)
		}
		m.warnings[w] = append(m.warnings[w], rank)
	}
	m.rankHealth = append(m.rankHealth, s)
}

// cellAcc is one cell's documents: docs says which document each came
// from, for errors.
type cellAcc struct {
	backend string
	cells   []schema.Cell
	docs    []int
}

// add gathers document n, d: what is merged as it comes (completeness,
// hosts, traces, warnings, the timeline, the replay's counts, errors,
// ranks, tokens) and what is merged at the end (cells, requests, lag).
func (m *rankMerger) add(n int, d *schema.Result) {
	out := m.out
	if reason, incomplete := withoutPartial(d); incomplete {
		out.Complete = false
		out.IncompleteReason = results.JoinUnique(out.IncompleteReason, reason, "; ")
	}
	for _, h := range strings.Split(d.Host.Hostname, ",") {
		m.hosts = appendUnique(m.hosts, h)
	}
	for _, p := range d.Host.TierPaths {
		if !slices.ContainsFunc(out.Host.TierPaths, func(q schema.PathInfo) bool { return samePath(p, q) }) {
			out.Host.TierPaths = append(out.Host.TierPaths, p)
		}
	}
	for _, t := range d.Traces {
		if !slices.ContainsFunc(out.Traces, func(u schema.TraceInfo) bool { return sameTrace(u, t) }) {
			out.Traces = append(out.Traces, t)
		}
	}
	for _, w := range d.Warnings {
		if strings.HasPrefix(w, partialWarning) {
			continue
		}
		// A merge's warning of all its ranks is each of theirs; one that
		// names its ranks is theirs.
		whose := ranksOf(d)
		if rs, rest, ok := rankPrefixed(w, whose); ok {
			whose, w = rs, rest
		}
		w = strings.TrimPrefix(w, allRanks)
		if _, ok := m.warnings[w]; !ok {
			m.warnOrder = append(m.warnOrder, w)
		}
		m.warnings[w] = append(m.warnings[w], whose...)
	}
	m.addRankHealth(d)
	for _, c := range d.Cells {
		k := keyOf(c)
		a := m.cells[k]
		if a == nil {
			a = &cellAcc{}
			m.cells[k] = a
		}
		a.backend = results.JoinUnique(a.backend, c.Backend, ",")
		a.cells = append(a.cells, c)
		a.docs = append(a.docs, n)
	}
	m.reqs[n], m.lags[n] = d.Requests, d.Lag
	m.addTimeline(d)
	mergeReplay(&out.Replay, &d.Replay)
	out.Errors.Count += d.Errors.Count
	for _, e := range d.Errors.First {
		if len(out.Errors.First) < maxErrorMessages {
			out.Errors.First = append(out.Errors.First, e)
		}
	}
	if t := d.Summary.StorageKVTokensPerSec; t != nil {
		m.tokens += *t * d.WallS
	} else {
		m.tokensKnown = false
	}
	out.MergedRanks = append(out.MergedRanks, ranksOf(d)...)
}

// addTimeline adds d's seconds to the merged timeline, placed by d's start:
// bytes and operations summed, a second's lag p99 the highest.
func (m *rankMerger) addTimeline(d *schema.Result) {
	off := int(math.Floor(d.Started.Sub(m.start).Seconds()))
	for _, s := range d.Timeline {
		t := s.T + off
		sec := m.timeline[t]
		if sec == nil {
			sec = &schema.Second{T: t}
			m.timeline[t] = sec
		}
		for i := range s.ReadBytes {
			sec.ReadBytes[i] += s.ReadBytes[i]
			sec.WriteBytes[i] += s.WriteBytes[i]
			sec.Ops[i] += s.Ops[i]
		}
		sec.LagP99US = max(sec.LagP99US, s.LagP99US)
	}
}

// mergeFigures merges the gathered cells (in cell order), the tiers, the
// requests, the lag and the device latencies into out, over wall.
func (m *rankMerger) mergeFigures(wall time.Duration) error {
	docs, out := m.docs, m.out
	self := func(i int) int { return i }
	for _, k := range slices.SortedFunc(maps.Keys(m.cells), cellKey.compare) {
		if err := m.ctx.Err(); err != nil {
			return fmt.Errorf("report: merge: %w", err)
		}
		a := m.cells[k]
		agg := results.NewCell()
		if err := agg.MergeAll(a.cells); err != nil {
			return m.whose("", err, func(i int) int { return a.docs[i] })
		}
		c := a.cells[0]
		out.Cells = append(out.Cells, agg.Finalize(c.Tier, c.Op, c.Phase, a.backend, wall))
	}
	out.Tiers = results.TierTotals(out.Cells, wall)
	tiers := make([][]schema.TierTotals, len(docs))
	devs := make([][]schema.DeviceLatency, len(docs))
	for i, d := range docs {
		tiers[i] = d.Tiers
		if !m.noDevice {
			devs[i] = d.Device
		}
	}
	results.ApplyTierBusy(out.Tiers, results.MergeTierBusy(tiers...))
	rs := results.NewRequests()
	if err := rs.MergeAll(m.reqs); err != nil {
		return m.whose("", err, self)
	}
	out.Requests = rs.Finalize()
	lag := results.NewLatency()
	if err := lag.MergeAll(m.lags); err != nil {
		return m.whose("lag: ", err, self)
	}
	out.Lag = lag.Finalize()
	var dev results.Device
	if err := dev.MergeAll(devs...); err != nil {
		return fmt.Errorf("report: merge: %w", err)
	}
	out.Device = dev.Finalize()
	return nil
}

// whose prefixes an error of a MergeAll with what it merged and, when it
// is about one value, with the document that value came from (docOf maps
// the value's index to its document's).
func (m *rankMerger) whose(what string, err error, docOf func(int) int) error {
	if ie := (*results.IndexError)(nil); errors.As(err, &ie) {
		n := docOf(ie.Index)
		return fmt.Errorf("report: merge: document %d (rank %d): %s%w", n+1, m.docs[n].Rank, what, ie.Err)
	}
	return fmt.Errorf("report: merge: %s%w", what, err)
}

// samePath reports whether p and q are the same storage of one backend:
// the same path on the same file system, device and I/O mode, behind the
// same gateway.
func samePath(p, q schema.PathInfo) bool {
	return p.Backend == q.Backend && p.Path == q.Path && p.FileSystem == q.FileSystem && p.Device == q.Device &&
		p.Model == q.Model && p.Direct == q.Direct && p.Gateway == q.Gateway && p.GatewayCommand == q.GatewayCommand
}

// ranksOf returns the ranks a document holds: a merged document's
// MergedRanks, else its Rank.
func ranksOf(d *schema.Result) []int {
	if len(d.MergedRanks) > 0 {
		return d.MergedRanks
	}
	return []int{d.Rank}
}

// CheckRanks reports, wrapping ErrIncompatible, why docs are not distinct
// ranks of one run, which MergeRanks would merge into a document that
// reads as one run: a rank held by two documents (the same document given
// twice, or two runs that were not launched as one), documents of
// different trials (kvreplay --trial), documents that replayed different
// traces (SameTraces), that were sharded differently (--shard) or ran at
// different size scales, documents whose measured windows are further
// apart than MaxRankGap (ranks of different runs), or, last and as a
// *MissingRanksError, documents (even one) that lack some of their run's
// ranks. names name the documents in the
// error (file names; the documents' positions when nil).
func CheckRanks(docs []*schema.Result, names []string) error {
	name := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return fmt.Sprintf("document %d", i+1)
	}
	// First: no merge, even one forced, joins ranks of two size scales.
	if err := checkScales(docs, name); err != nil {
		return err
	}
	holder := map[int]int{}
	declared := docs[0].Ranks
	for i, d := range docs {
		for _, r := range ranksOf(d) {
			if j, ok := holder[r]; ok {
				what := "both hold rank " + strconv.Itoa(r)
				if docs[j] == d || sameRun(docs[j], d) {
					what = "are the same run (rank " + strconv.Itoa(r) + ")"
				}
				return fmt.Errorf("%s and %s: %w: they %s: merging them would count the rank twice",
					name(j), name(i), ErrIncompatible, what)
			}
			holder[r] = i
		}
		if i > 0 && d.Trial != docs[0].Trial {
			return fmt.Errorf("%s and %s: %w: they are of trial %d and trial %d: the ranks of one run are of one trial",
				name(0), name(i), ErrIncompatible, docs[0].Trial, d.Trial)
		}
		if i > 0 {
			if ok, why := SameTraces(docs[0].Traces, d.Traces); !ok {
				return fmt.Errorf("%s and %s: %w: they replayed different traces, %s: the ranks of one run replay one trace",
					name(0), name(i), ErrIncompatible, why)
			}
			if d.Replay.Shard != docs[0].Replay.Shard {
				return fmt.Errorf("%s and %s: %w: they were sharded differently, --shard %s and --shard %s: the ranks of one run split one trace one way",
					name(0), name(i), ErrIncompatible, shardName(docs[0].Replay.Shard), shardName(d.Replay.Shard))
			}
			if why := replayedApart(docs[0], d); why != "" {
				return fmt.Errorf("%s and %s: %w: they were replayed differently, %s: the ranks of one run replay it one way, "+
					"and a merged document states one (its loop, pace, window and syncs would be one rank's, its figures both's)",
					name(0), name(i), ErrIncompatible, why)
			}
		}
	}
	if err := checkOverlap(docs, name); err != nil {
		return err
	}
	// A merged document's Ranks is its run's, as a rank's is: a merge of
	// the 3 ranks of one run and rank 3 of a run of 4 is of two runs (with
	// --shard key, their rows of two splits of the trace).
	for i, d := range docs {
		if d.Ranks != declared {
			return fmt.Errorf("%s and %s: %w: one is a rank of %d, the other of %d: the ranks of one run agree on their number",
				name(0), name(i), ErrIncompatible, declared, d.Ranks)
		}
	}
	// A merge must hold every rank of the run, even of one document (a
	// rank's document alone is a part of the run, not the run).
	if ranks, held, missing := MissingRanks(docs); len(missing) > 0 {
		run := name(0)
		if len(docs) > 1 {
			run = fmt.Sprintf("%s and %d more", run, len(docs)-1)
		}
		return &MissingRanksError{Run: run, Ranks: ranks, Held: held, Missing: missing}
	}
	return nil
}

// replayedApart says how two ranks' replays differ in what their figures
// mean: their loop (--closed-loop), pace (--speed), --duration window or
// --fsync; "" when they agree.
func replayedApart(a, b *schema.Result) string {
	loop := func(r *schema.Result) string {
		if r.Replay.ClosedLoop || r.ClosedLoop != nil {
			return "--closed-loop"
		}
		return "an open loop"
	}
	speed := func(r *schema.Result) string {
		if r.Replay.Speed == 0 {
			return "--speed max"
		}
		return "--speed " + strconv.FormatFloat(r.Replay.Speed, 'g', -1, 64)
	}
	window := func(r *schema.Result) string {
		if r.Replay.DurationS == 0 {
			return "no --duration"
		}
		return "--duration " + strconv.FormatFloat(r.Replay.DurationS, 'g', -1, 64) + "s"
	}
	fsync := func(r *schema.Result) string {
		if r.Replay.Fsync {
			return "--fsync"
		}
		return "no --fsync"
	}
	for _, f := range []func(*schema.Result) string{loop, speed, window, fsync} {
		if x, y := f(a), f(b); x != y {
			return x + " and " + y
		}
	}
	return ""
}

// checkScales refuses documents of different size scales, naming the
// first two (name names a document by its position), with an error
// wrapping ErrIncompatible and ErrScales that says why no merge, not even
// one told to, joins them: the merged document states one size scale, and
// its bytes and rates would be of two.
func checkScales(docs []*schema.Result, name func(int) string) error {
	return sameScale(docs, name, "the ranks of one run share --size-scale, and --force cannot merge them: a merged document states "+
		"one size scale, at which all its bytes and rates are read, and theirs would add bytes of two (replay the ranks at one "+
		"--size-scale, or report them apart with --label or --group-by)")
}

// sameScale returns an error wrapping ErrIncompatible and ErrScales that
// names the first two of docs whose size scales differ, and says why
// after it; nil when they share one.
func sameScale(docs []*schema.Result, name func(int) string, why string) error {
	for i, d := range docs {
		if d.SizeScale != docs[0].SizeScale {
			return fmt.Errorf("%s and %s: %w: they ran at %w, %g and %g: %s",
				name(0), name(i), ErrIncompatible, ErrScales, docs[0].SizeScale, d.SizeScale, why)
		}
	}
	return nil
}

// MaxRankGap is how long after every other rank of its run had ended a
// rank may start and still be taken for one of the run's: ranks that
// kvreplay started together (--start-at, --start-barrier) start within
// seconds, and ranks that a launcher started without either within the
// time each takes to read the trace and make its tiers. Ranks further
// apart are of different runs.
const MaxRankGap = 30 * time.Second

// checkOverlap refuses documents whose measured windows ([Started,
// Started+WallS]) leave a gap of more than MaxRankGap: the ranks of one run
// replay at one time, and two runs merged as one would read as a run
// spanning both.
func checkOverlap(docs []*schema.Result, name func(int) string) error {
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return docs[a].Started.Compare(docs[b].Started) })
	last := order[0] // the document that ends last among those before
	end := func(i int) time.Time { return docs[i].Started.Add(seconds(docs[i].WallS)) }
	for _, i := range order[1:] {
		if gap := docs[i].Started.Sub(end(last)); gap > MaxRankGap {
			return fmt.Errorf("%s and %s: %w: they are of different runs: %s started at %s, %s after %s had ended (%s): the ranks of one run replay together (at most %s apart)",
				name(last), name(i), ErrIncompatible, name(i), docs[i].Started.UTC().Format(time.RFC3339),
				gap.Round(time.Second), name(last), end(last).UTC().Format(time.RFC3339), MaxRankGap)
		}
		if end(i).After(end(last)) {
			last = i
		}
	}
	return nil
}

// shardName is --shard as a document says it, "none" for a rank that
// replayed every row.
func shardName(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// MissingRanks returns the number of ranks of the run docs belong to (the
// most any of them declares), the ranks docs hold, sorted, and the ranks
// they lack.
func MissingRanks(docs []*schema.Result) (ranks int, held, missing []int) {
	seen := map[int]bool{}
	for _, d := range docs {
		ranks = max(ranks, d.Ranks)
		for _, r := range ranksOf(d) {
			if !seen[r] {
				seen[r] = true
				held = append(held, r)
			}
		}
	}
	slices.Sort(held)
	for r := range ranks {
		if !seen[r] {
			missing = append(missing, r)
		}
	}
	return ranks, held, missing
}

// MissingRanksError is CheckRanks' error for documents that hold only some
// of the ranks of their run; errors.Is(err, ErrIncompatible) holds.
type MissingRanksError struct {
	Run           string // the documents, by name
	Ranks         int    // the ranks of the run
	Held, Missing []int  // the ranks given and those not
}

func (e *MissingRanksError) Error() string {
	verb := "was"
	if len(e.Held) != 1 {
		verb = "were"
	}
	return fmt.Sprintf("run of %s has %d ranks and only %s %s given: missing %s",
		e.Run, e.Ranks, rankList(e.Held), verb, rankList(e.Missing))
}

// Is makes a MissingRanksError an ErrIncompatible.
func (e *MissingRanksError) Is(target error) bool { return target == ErrIncompatible }

// rankList names ranks for people, in numberList's format: "no rank",
// "rank 1", "ranks 0, 1", "ranks 0-3, 5".
func rankList(rs []int) string {
	switch len(rs) {
	case 0:
		return "no rank"
	case 1:
		return "rank " + strconv.Itoa(rs[0])
	}
	return "ranks " + numberList(rs)
}

// numberList is the one format of every list of ranks or trials kvreport
// writes (rankList, the MLPerf view's missing trials): ascending numbers,
// comma-separated, a run of three or more consecutive ones as its first
// and last: "0, 1", "0, 2, 5", "0-3, 5, 7-9".
func numberList(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.Itoa(ns[i]))
		case j == i+1:
			parts = append(parts, strconv.Itoa(ns[i]), strconv.Itoa(ns[j]))
		default:
			parts = append(parts, strconv.Itoa(ns[i])+"-"+strconv.Itoa(ns[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// partialReason starts the IncompleteReason, and partialWarning the
// warning, of a document that holds only some of its run's ranks; a merge
// that completes the run drops both.
const (
	partialReason  = "partial run: "
	partialWarning = "PARTIAL RUN: "
)

// markPartial marks r, which holds the ranks held of a run of ranks,
// incomplete: it is a part of the run, never a PASS.
func markPartial(r *schema.Result, ranks int, held, missing []int) {
	what := fmt.Sprintf("%d of %d ranks (missing %s)", len(held), ranks, rankList(missing))
	r.Complete = false
	r.IncompleteReason = results.JoinUnique(r.IncompleteReason, partialReason+what, "; ")
	r.Warnings = appendUnique(r.Warnings, partialWarning+what+": the figures cover part of the run")
}

// withoutPartial returns r's IncompleteReason less markPartial's, and
// whether r was incomplete for any other reason.
func withoutPartial(r *schema.Result) (reason string, incomplete bool) {
	if r.Complete {
		return "", false
	}
	var rest []string
	for _, s := range strings.Split(r.IncompleteReason, "; ") {
		if !strings.HasPrefix(s, partialReason) {
			rest = append(rest, s)
		}
	}
	if len(rest) == 0 && r.IncompleteReason != "" {
		return "", false
	}
	return strings.Join(rest, "; "), true
}

// sameRun reports whether two documents are one run's: the same host,
// start and wall time.
func sameRun(a, b *schema.Result) bool {
	return a.Host.Hostname == b.Host.Hostname && a.Started.Equal(b.Started) && a.WallS == b.WallS
}

// sameTrace reports whether two traces are one: by digest when both have
// one, else by file name and rows.
func sameTrace(x, y schema.TraceInfo) bool {
	if x.SHA256 != "" && y.SHA256 != "" {
		return x.SHA256 == y.SHA256
	}
	return x.File == y.File && x.Rows == y.Rows
}

// SameTraces reports whether two results replayed the same traces, in the
// same order, and if not, why. Traces are the same when their SHA-256
// digests are equal; a trace without one (a document of an older kvreplay,
// or a pipe read in part) is compared by file name and, when both are
// known, rows.
func SameTraces(a, b []schema.TraceInfo) (same bool, why string) {
	if len(a) != len(b) {
		return false, fmt.Sprintf("%d traces and %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		switch {
		case x.SHA256 != "" && y.SHA256 != "":
			if x.SHA256 != y.SHA256 {
				return false, TraceName(x) + " and " + TraceName(y)
			}
		case filepath.Base(x.File) != filepath.Base(y.File):
			return false, TraceName(x) + " and " + TraceName(y)
		case !x.ReadInPart && !y.ReadInPart && x.Rows > 0 && y.Rows > 0 && x.Rows != y.Rows:
			return false, TraceName(x) + " and " + TraceName(y)
		}
	}
	return true, ""
}

// TraceName names a trace for people: its file, rows and digest prefix.
func TraceName(t schema.TraceInfo) string {
	s := t.File
	if s == "" {
		s = "(unnamed)"
	}
	var parts []string
	if t.Rows > 0 && !t.ReadInPart {
		parts = append(parts, cli.FormatCount(t.Rows)+" rows")
	}
	if len(t.SHA256) >= 12 {
		parts = append(parts, "sha256 "+t.SHA256[:12])
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// cellKey matches cells across ranks, ordered as kvreplay writes them;
// the names keep cells of two unknown names apart.
type cellKey struct {
	tier, op, phase    int
	tierN, opN, phaseN string
}

func keyOf(c schema.Cell) cellKey {
	return cellKey{order(c.Tier, schema.ParseTier), order(c.Op, schema.ParseOp), order(c.Phase, schema.ParsePhase),
		c.Tier, c.Op, c.Phase}
}

// order is the index of a name (a Tier, an Op, a Phase); unknown names
// sort after the known ones.
func order[T ~uint8](s string, parse func(string) (T, error)) int {
	v, err := parse(s)
	if err != nil {
		return 1000
	}
	return int(v)
}

func (a cellKey) compare(b cellKey) int {
	return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(a.tierN, b.tierN), cmp.Compare(a.op, b.op),
		cmp.Compare(a.opN, b.opN), cmp.Compare(a.phase, b.phase), cmp.Compare(a.phaseN, b.phaseN))
}

func mergeReplay(dst, src *schema.ReplayStats) {
	dst.Rows += src.Rows
	dst.RowsDone += src.RowsDone
	dst.RowsMissed += src.RowsMissed
	dst.SetupRows += src.SetupRows
	dst.RequestsCut += src.RequestsCut
	dst.RequestsCutLate += src.RequestsCutLate
	dst.Objects += src.Objects
	dst.ColdPrepared += src.ColdPrepared
	dst.ColdPreparedBytes += src.ColdPreparedBytes
	dst.CapacityEvictions += src.CapacityEvictions
	dst.SetupCapacityEvictions += src.SetupCapacityEvictions
	dst.Rematerialised += src.Rematerialised
	dst.Verify = dst.Verify || src.Verify
	dst.VerifiedBytes += src.VerifiedBytes
	dst.PeakRSSBytes = max(dst.PeakRSSBytes, src.PeakRSSBytes)
	if src.CPUPressure != nil && (dst.CPUPressure == nil || *src.CPUPressure > *dst.CPUPressure) {
		p := *src.CPUPressure
		dst.CPUPressure = &p
	}
	dst.Workers += src.Workers
	dst.QueueDepth += src.QueueDepth
	dst.BlockSize = max(dst.BlockSize, src.BlockSize)
	dst.Speed = max(dst.Speed, src.Speed)
	dst.Engine = results.JoinUnique(dst.Engine, src.Engine, ",")
	dst.Fsync = dst.Fsync || src.Fsync
	dst.Syncs += src.Syncs
	dst.ClosedLoop = dst.ClosedLoop || src.ClosedLoop
	dst.DurationS = max(dst.DurationS, src.DurationS)
	dst.Shard = results.JoinUnique(dst.Shard, src.Shard, ",")
}

// imbalance compares the ranks: the slowest, its share of the bytes and
// of the window, and the spread of their starts; nil for one document.
func imbalance(docs []*schema.Result, window time.Duration) *schema.RankImbalance {
	if len(docs) < 2 {
		return nil
	}
	bytesOf := func(d *schema.Result) int64 {
		var n int64
		for _, t := range d.Tiers {
			n += t.ReadBytes + t.WriteBytes
		}
		return n
	}
	var total int64
	slow, fast := docs[0], docs[0]
	first, last := docs[0].Started, docs[0].Started
	for _, d := range docs {
		total += bytesOf(d)
		if d.WallS > slow.WallS {
			slow = d
		}
		if d.WallS < fast.WallS {
			fast = d
		}
		if d.Started.Before(first) {
			first = d.Started
		}
		if d.Started.After(last) {
			last = d.Started
		}
	}
	im := &schema.RankImbalance{SlowestRank: slow.Rank, SlowestWallS: slow.WallS, FastestWallS: fast.WallS,
		StartSpreadS: last.Sub(first).Seconds()}
	if total > 0 {
		im.SlowestBytesShare = float64(bytesOf(slow)) / float64(total)
	}
	if window > 0 {
		im.SlowestTimeShare = slow.WallS / window.Seconds()
	}
	return im
}

// mergeClosed adds up the closed-loop blocks of the ranks (nil when none
// has one): counts and totals add, users are listed together, and the
// lags of the rows released at their trace times merge exactly (their
// schedule is judged on the merge as on a rank: absent where no rank had
// such rows).
func (m *rankMerger) mergeClosed() (*schema.ClosedLoopStats, error) {
	var (
		out   *schema.ClosedLoopStats
		lags  []schema.Latency
		whose []int // the document of each of lags
	)
	for n, d := range m.docs {
		c := d.ClosedLoop
		if c == nil {
			continue
		}
		if c.ScheduledLag != nil {
			lags, whose = append(lags, *c.ScheduledLag), append(whose, n)
		}
		if out == nil {
			out = &schema.ClosedLoopStats{UserLimit: c.UserLimit, WindowS: c.WindowS, TokensKnown: true}
		}
		out.Users += c.Users
		out.RequestsReleased += c.RequestsReleased
		out.RequestsCompleted += c.RequestsCompleted
		if out.RequestsLeft >= 0 && c.RequestsLeft >= 0 {
			out.RequestsLeft += c.RequestsLeft
		} else {
			out.RequestsLeft = -1
		}
		out.TokensGenerated += c.TokensGenerated
		out.TokensKnown = out.TokensKnown && c.TokensKnown
		out.StorageIOS += c.StorageIOS
		out.PerUser = append(out.PerUser, c.PerUser...)
	}
	if len(lags) > 0 {
		lag := results.NewLatency()
		if err := lag.MergeAll(lags); err != nil {
			return nil, m.whose("closed_loop.scheduled_lag: ", err, func(i int) int { return whose[i] })
		}
		f := lag.Finalize()
		out.ScheduledLag = &f
	}
	return out, nil
}

func appendUnique(s []string, v string) []string {
	if v == "" || slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}
