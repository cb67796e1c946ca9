package replay

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

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
	// Stored, when set, opens the trace's bytes as stored (a file, or
	// stdin), and is used instead of Open: the bytes are hashed as they
	// are read, for the result's trace identity (schema.TraceInfo.SHA256).
	Stored func() (io.ReadCloser, error)

	// maxSize bounds the Object_Size_Bytes of the readers Stored opens
	// (bounded sets it; Open is wrapped instead).
	maxSize int64
}

// planAlign is the alignment sizes are planned with: the largest any
// backend declares, so a plan never underestimates.
const planAlign = 4096

// Plan is what a prescan of the traces found: what the run needs before it
// starts.
type Plan struct {
	// Scanned reports that the traces were read; otherwise the plan only
	// holds what the sidecars said (FromMeta), or nothing.
	Scanned  bool
	FromMeta bool
	Rows     int64
	// Objects counts the distinct keys of the traces.
	Objects int64
	// Cold are the objects read before any write in the trace: the run
	// writes them untimed before its clock starts. Under a closed loop's
	// --users N they include the objects prepared for the sample
	// (ColdObject.LeftOut), which LeftOut and LeftOutBytes count (their
	// logical bytes), Demoted and DemotedBytes those of them a demotion
	// reads first (ColdObject.Demoted).
	Cold                  []ColdObject
	LeftOut, LeftOutBytes int64
	Demoted, DemotedBytes int64
	// Peak is the most physical bytes live at once on each backend, by
	// name (the tiers mapped to it together), in the trace's order, with
	// the cold objects live from the start but those a demotion reads
	// first (ColdObject.Demoted), made when read: a backend of Peak bytes
	// holds the trace without eviction.
	Peak map[string]int64
	// PeakLeftOut, PeakSample and PeakLazy are each backend's peak, as
	// Peak before --capacity bounds it, with the objects prepared for a
	// --users sample (LeftOut) written before the clock; with those a
	// demotion reads first made when read instead (Peak's); and with
	// none of them written before the clock. Run writes those a replayed
	// row reads before its clock on a backend that holds PeakSample (any
	// that is not bounded), and those a demotion reads on a bounded one
	// that holds PeakLeftOut beside them (a RAM arena, --capacity):
	// Peak, which sizes the tiers, leaves them out. The others are made
	// when first read. Nil when there are none.
	PeakLeftOut, PeakSample, PeakLazy map[string]int64
	// MaxObject is the largest physical object size; MaxObjectOf the
	// largest on each backend, by name.
	MaxObject   int64
	MaxObjectOf map[string]int64
	// Used reports which trace tiers have rows.
	Used [schema.NumTiers]bool
	// UsedRows counts the rows of each trace tier.
	UsedRows [schema.NumTiers]int64
	// UserRequests counts each user's requests (rows with a User and a
	// Request), for a closed loop to say how many it left; nil when the
	// traces name no users.
	UserRequests map[userKey]int64
	// Users are the traces' users (this rank's, under a shard) in the
	// order they first appear, each with the QoS class of its first
	// request: a closed loop's --users N takes its users from them by
	// SelectUsers. Nil when the traces were not scanned or name no users.
	Users []User
	// Traces are each trace's provenance and identity as the prescan
	// read it (its rows, its digest when Source.Stored is set), so that
	// a run stopped early still says what it replayed; nil when the
	// traces were not scanned.
	Traces []schema.TraceInfo

	// Window is the trace time, from the first row the run replays of all
	// the traces merged by time (this rank's, of the users a --users
	// sample replays: the pace's origin, one for every trace), that the
	// plan's objects, peaks, cold objects and bytes cover (WindowOf), 0
	// for the whole trace. A trace that starts later than another is
	// planned from that origin too, as the run releases it: one whose
	// first row is past the window has none in it. Rows, Used, Users and
	// Traces always count the whole trace; WindowRows the rows modelled.
	Window time.Duration
	// WindowRows counts the rows the plan models: those of the mapped
	// tiers within Window that the run replays (this rank's, a --users
	// sample's). An open loop that keeps the trace's pace releases exactly
	// these; a closed loop at most these (its requests start no earlier
	// than in the trace, and the plan keeps each request that starts in
	// the window whole).
	WindowRows int64
	// TraceRows are each trace's rows the run replays (this rank's, a
	// --users sample's) and those of them WindowRows counts, in the order
	// of the traces; nil when they were not scanned. A trace whose rows
	// all come after the window has none there (Run says so).
	TraceRows []TraceRows
	// Span is the trace time the modelled rows cover, from the origin
	// (Window's) to the last of them, whichever trace's: the replay's wall
	// time is Span / Speed.
	Span time.Duration
	// Written and Read are the logical (scaled) bytes the modelled rows
	// write and read on each backend, by name. Ops counts the operations
	// they make of each: on the s3 tier its requests at the plan's size
	// scale (s3Requests: a multipart upload's create, part PUTs and
	// complete, a GET of each part, the DELETE of a copy a move drops),
	// which a size scale changes above Config.S3PartSize; on the others
	// the rows (reads, writes and deletes), which none does.
	Written, Read, Ops map[string]int64
	// PeakObjects bounds the objects live at once on each backend, cold
	// ones included but, as in Peak, those a demotion reads first
	// (ColdObject.Demoted): with Peak it bounds the peak at a smaller
	// size scale (Plan.peakAt), each object rounding up by at most
	// planAlign.
	PeakObjects map[string]int64
	// Reach is the most physical bytes that can be live at once on each
	// backend, by name, in any order of the rows: every object the
	// modelled rows put on it, once for each of its tiers there. A closed
	// loop releases the users' requests in another order than the
	// trace's (each user waits for its own storage), so it may keep more
	// live at once than Peak, never more than Reach. ReachObjects counts
	// those objects (copies), to bound Reach at a smaller size scale.
	Reach, ReachObjects map[string]int64
	// UserLimit is the closed loop's --users N whose users the plan
	// models (their requests' rows, and the rows outside requests, as the
	// run replays them); 0 when it models every user's. UserRows counts
	// the rows of the whole trace that it replays.
	UserLimit int
	UserRows  int64
	// SetupRows counts the rows of Rows (this rank's) before the traces'
	// measured window (setupFrom): Run runs them as setup, before its
	// clock, and counts them in no figure (RowsDone included).
	SetupRows int64

	// profile is the peaks and bytes by trace time, so that a window
	// that fits can be found without another prescan.
	profile *profile
}

// TraceRows are a trace's rows in a plan: those the run replays of the
// whole trace, and those of them in the plan's window.
type TraceRows struct {
	Replayed, Window int64
}

// WindowOf is the trace time a replay with cfg can reach, from the first
// row it replays of all its traces (merged by time, they share one pace),
// or 0 when it may reach the whole trace. With
// --duration D at --speed S, an open loop releases the rows due before
// D, those whose timestamps lie within D×S of the first (a row after one
// past the window is never released, whatever its own timestamp). A
// closed loop releases each user's next request when the previous one
// completed plus its think time, so its requests start no earlier than
// they do in the trace (storage that took no time would issue them at
// their trace times): it releases at most the requests that start within
// D×S, each with all its rows. At --speed max, or without --duration,
// nothing bounds the reach.
func WindowOf(cfg *Config) time.Duration {
	if cfg.Duration <= 0 || cfg.Speed <= 0 {
		return 0
	}
	w := float64(cfg.Duration) * cfg.Speed
	if w >= math.MaxInt64 {
		return 0
	}
	return max(time.Duration(w), 1)
}

// windowPeak is the peak of backend b so far: the most bytes live at once,
// or, when the cold objects found so far are written before the clock
// starts, the most beside them.
func windowPeak(m *model, b int) int64 {
	return max(m.peak[b], m.coldPeak[b]+m.coldSeen[b])
}

// lazyPeak is windowPeak with the objects prepared for a --users sample
// (ColdObject.LeftOut) made when first read, not before the clock.
func lazyPeak(m *model, b int) int64 {
	return max(m.peak[b], m.leftPeak[b]+m.coldSeen[b]-m.leftSeen[b])
}

// samplePeak is windowPeak with those of them a demotion reads first
// (ColdObject.Demoted) made when read.
func samplePeak(m *model, b int) int64 {
	return max(m.peak[b], m.demPeak[b]+m.coldSeen[b]-m.demSeen[b])
}

// ColdObject is an object read before it is written.
type ColdObject struct {
	Key     string
	Tier    schema.Tier
	Logical int64
	// LeftOut says that the trace writes the object, in rows of users a
	// closed loop's --users N leaves out, before a row it replays reads
	// it: it is cold for the sample of users. Written before the clock,
	// as the trace's cold objects are, it is no untimed write inside the
	// measured window, sharing the device with the timed operations and
	// inflating their latency.
	LeftOut bool
	// Demoted says that the first replayed row to read a LeftOut object
	// is a demotion's (an Evict read: a replayed request carrying the
	// trace's LRU moving it on). Such an object was live on its tier only
	// until then, and written before the clock every one of them is live
	// there at once (on kvtrace's MLPerf 8B trace at 1/4096, --users 10:
	// 19,543 objects, 3.08 GiB on a RAM tier whose peak is 824 KiB):
	// Peak leaves them out, and Run writes them before its clock only on
	// a bounded tier that holds them (Plan.PeakLeftOut).
	Demoted bool
}

// MaxObjectBytes bounds an object's size after SizeScale: sizes are
// rounded up to blocks and added up in int64 (a size near 2^63 overflowed
// to a negative one), and no tier holds more. A trace row above it is a
// *trace.ParseError (trace.ErrSizeTooLarge) at its line and column.
const MaxObjectBytes = 1 << 50

// bounded returns srcs with their readers bounded to the Object_Size_Bytes
// that scale to at most MaxObjectBytes.
func bounded(cfg *Config, srcs []Source) []Source {
	limit := int64(math.MaxInt64)
	if m := MaxObjectBytes / cfg.SizeScale; m < math.MaxInt64/2 {
		limit = int64(m)
	}
	out := make([]Source, len(srcs))
	for i, s := range srcs {
		if open := s.Open; open != nil {
			s.Open = func() (*trace.Reader, error) {
				r, err := open()
				if r != nil {
					r.MaxSize = limit
				}
				return r, err
			}
		}
		s.maxSize = limit
		out[i] = s
	}
	return out
}

// sizes returns an object's logical (scaled, by trace.ScaledSize) and
// physical (aligned) size.
func sizes(size int64, scale float64, align int64) (logical, physical int64) {
	logical = trace.ScaledSize(size, scale)
	physical = (logical + align - 1) / align * align
	return logical, physical
}

// sourceKey namespaces a key by its trace when several are replayed.
func sourceKey(src int, nsrc int, key []byte) string {
	if nsrc == 1 {
		return string(key)
	}
	return string(appendSourceKey(nil, src, key))
}

// appendSourceKey appends key of trace src, namespaced as sourceKey
// does for several traces, to dst.
func appendSourceKey(dst []byte, src int, key []byte) []byte {
	dst = append(strconv.AppendInt(dst, int64(src), 10), ':')
	return append(dst, key...)
}

// backendIndex numbers the distinct backends of cfg.TierMap in tier
// order: tierB maps a tier to its backend's index (-1 when unmapped).
func backendIndex(cfg *Config) (tierB [schema.NumTiers]int8, names []string) {
	for t, name := range cfg.TierMap {
		tierB[t] = -1
		if name == "" {
			continue
		}
		i := slices.Index(names, name)
		if i < 0 {
			i = len(names)
			names = append(names, name)
		}
		tierB[t] = int8(i)
	}
	return tierB, names
}

// Prepare reads the traces once (when they can be read twice and
// cfg.Prescan is set) to find cold objects, per-backend peak bytes and the
// largest object, by running the trace through the same model of live
// bytes the run uses, with unbounded backends; otherwise it plans from the
// sidecars. Malformed traces stop here, before any I/O.
//
// A closed loop of --users N replays some of the users, which only the
// whole trace names: the traces are then read a second time, to model
// only the rows the run replays (closedUsers).
func Prepare(ctx context.Context, cfg *Config, srcs []Source) (*Plan, error) {
	scan := cfg.Prescan
	for _, s := range srcs {
		scan = scan && s.Rescan
	}
	if !scan {
		p := &Plan{Peak: map[string]int64{}, MaxObjectOf: map[string]int64{}, PeakObjects: map[string]int64{}}
		p.fromMeta(cfg, bounded(cfg, srcs))
		return p, nil
	}
	p, err := prepareScan(ctx, cfg, bounded(cfg, srcs), nil)
	if err != nil {
		return nil, err
	}
	return SamplePlan(ctx, cfg, srcs, p)
}

// SamplePlan is the plan of a closed loop of --users N (cfg.Users) of the
// users of whole, the plan of every user: the traces read again, modelling
// only the rows the sample replays, so that its cold objects (those users
// left out wrote and the sample reads) are made before the clock and its
// peaks are the sample's. It is whole itself when cfg replays every user,
// whole was not read from the traces, or whole is already that sample's
// plan (Prepare's). A users search plans the whole trace once and each
// probe's sample with it.
func SamplePlan(ctx context.Context, cfg *Config, srcs []Source, whole *Plan) (*Plan, error) {
	if !whole.Scanned || whole.UserLimit == cfg.Users {
		return whole, nil
	}
	chosen := closedUsers(cfg, whole)
	if chosen == nil {
		return whole, nil
	}
	p, err := prepareScan(ctx, cfg, bounded(cfg, srcs), chosen)
	if err != nil {
		return nil, err
	}
	p.UserLimit = cfg.Users
	return p, nil
}

// WindowPlan is the plan of the replay of cfg from whole, a plan of the
// same traces for another window (a capacity search plans the whole
// trace once, and each probe, whose --speed sets how far its --duration
// reaches, its own window here): the traces read again up to the window
// cfg reaches (WindowOf), so that a probe writes only the cold objects
// its window reads, and its peaks, the tiers' sizes and the space it is
// checked against (setup) are its window's. It is whole itself when whole
// was not read from the traces, is already that window's, or its rows all
// lie within it.
func WindowPlan(ctx context.Context, cfg *Config, srcs []Source, whole *Plan) (*Plan, error) {
	w := WindowOf(cfg)
	if !whole.Scanned || whole.Window == w || (whole.Window == 0 && w > whole.Span) {
		return whole, nil
	}
	return Prepare(ctx, cfg, srcs)
}

// closedUsers are the users a closed loop of --users N replays
// (SelectUsers of the plan's), nil when it replays every user.
func closedUsers(cfg *Config, p *Plan) map[userKey]bool {
	if !cfg.ClosedLoop || cfg.Users <= 0 || cfg.Users >= len(p.Users) {
		return nil
	}
	return chooseUsers(p.Users, cfg.Users)
}

// chooseUsers is the set of the n users of users SelectUsers picks: the
// one rule for the plan and the closed loop.
func chooseUsers(users []User, n int) map[userKey]bool {
	chosen := map[userKey]bool{}
	for _, u := range SelectUsers(users, n) {
		chosen[userKey{int32(u.Trace), u.ID}] = true
	}
	return chosen
}

// prepareScan reads the traces through and plans their replay, modelling
// the rows of the users chosen replays (all when nil).
func prepareScan(ctx context.Context, cfg *Config, srcs []Source, chosen map[userKey]bool) (*Plan, error) {
	p, names, scans := newScans(cfg, srcs, chosen)
	if err := scanMerged(ctx, srcs, scans, newSharder(cfg, len(srcs))); err != nil {
		return nil, err
	}
	if err := sidecarCounts(srcs, p.Traces); err != nil {
		return nil, err
	}
	// Traces replay side by side, merged by time: each is modelled on its
	// own and their peaks add up (a bound: their peaks may not coincide).
	n := len(names)
	tot := &planTotals{peak: make([]int64, n), peakN: make([]int64, n), sample: make([]int64, n), lazy: make([]int64, n),
		written: make([]int64, n), read: make([]int64, n), ops: make([]int64, n), reach: make([]int64, n), reachN: make([]int64, n)}
	for _, ts := range scans {
		ts.addTo(tot)
	}
	p.finish(cfg, names, tot)
	return p, nil
}

// newScans returns the plan of srcs for cfg before they are read, the
// backends' names (backendIndex) and the scan of each trace, which models
// the rows of the users chosen replays (all when nil) on unbounded
// backends.
func newScans(cfg *Config, srcs []Source, chosen map[userKey]bool) (*Plan, []string, []*traceScan) {
	p := &Plan{Peak: map[string]int64{}, MaxObjectOf: map[string]int64{}}
	p.Scanned = true
	p.Window = WindowOf(cfg)
	p.Written, p.Read, p.Ops, p.PeakObjects = map[string]int64{}, map[string]int64{}, map[string]int64{}, map[string]int64{}
	p.Reach, p.ReachObjects = map[string]int64{}, map[string]int64{}
	p.Traces = make([]schema.TraceInfo, len(srcs))
	tierB, names := backendIndex(cfg)
	n := len(names)
	align, limit := make([]int64, n), make([]int64, n)
	for i := range names {
		// Unbounded: traceScan.ks relies on it (no LRU list, no eviction).
		align[i], limit[i] = planAlign, unbounded
	}
	org := &origin{}
	setupAt, _ := setupFrom(srcs)
	if setupAt > 0 {
		// The run paces from where the measured window starts (its setup
		// rows before it, run before the clock, are all modelled: their
		// space counts), and so does the plan's window.
		org.seen, org.first = true, setupAt
	}
	scans := make([]*traceScan, len(srcs))
	for i := range srcs {
		scans[i] = &traceScan{p: p, cfg: cfg, name: srcs[i].Name, src: i, nsrc: len(srcs), names: names, s3: int8(slices.Index(names, "s3")),
			tierB: tierB, org: org, setupAt: setupAt,
			m: newModel(tierB, align, limit), keys: newScanKeys(), prof: newProfile(), chosen: chosen,
			wr: make([]int64, n), rd: make([]int64, n), ops: make([]int64, n), reach: make([]int64, n), reachN: make([]int64, n), demoted: make([]int64, n)}
	}
	return p, names, scans
}

// scanMerged reads the traces side by side, merged by time in the order
// the run reads them (rowReader.run: the earliest row first, the earlier
// trace's on a tie), each row to its trace's scan, those sh gives this
// rank modelled. The run paces every trace from the first row it replays
// of them all (one origin, pace): read in the run's order, the plan's
// window starts at the same row, and a trace that starts later than
// another is planned as late in the window as the run releases it.
func scanMerged(ctx context.Context, srcs []Source, scans []*traceScan, sh *sharder) error {
	var h sourceHeap
	defer func() {
		for _, s := range h {
			s.close()
		}
	}()
	next := func(src *source) error {
		err := src.r.Read(&src.rec)
		if err == nil {
			return nil
		}
		if !errors.Is(err, io.EOF) {
			src.close()
			return err
		}
		s := srcs[src.idx]
		scans[src.idx].p.Traces[src.idx] = readInfo(s.Name, src.r, src.dig)
		if err := src.close(); err != nil {
			return fmt.Errorf("replay: %s: %w", s.Name, err)
		}
		return io.EOF
	}
	for i, s := range srcs {
		r, dig, closeTrace, err := openSource(s)
		if err != nil {
			return err
		}
		src := &source{idx: i, r: r, dig: dig, close: closeTrace}
		switch err := next(src); {
		case err == nil:
			heap.Push(&h, src)
		case !errors.Is(err, io.EOF):
			return err
		}
	}
	for n := 0; len(h) > 0; n++ {
		if n&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		src := h[0]
		if err := scans[src.idx].take(src, sh); err != nil {
			return err
		}
		switch err := next(src); {
		case err == nil:
			heap.Fix(&h, 0)
		case errors.Is(err, io.EOF):
			heap.Pop(&h)
		default:
			heap.Pop(&h)
			return err
		}
	}
	return nil
}

// fromMeta is the plan of traces not read before the replay: their
// sidecars' peaks, scaled as one sum, with a bound of the objects in each
// (PeakObjects: each rounds up by less than planAlign, which the sum does
// not count), where every trace has a sidecar. Where one
// has none, nothing says how much it keeps live, and the plan is empty,
// as a pipe's: a plan of the others' peaks alone sized the RAM arena for
// them, and the run stopped at the first object of the trace without one
// larger than that (a sidecar's trace and a kv-cache.py trace,
// --no-prescan). A sidecar without peaks (no peak_live_bytes) says no
// more than none.
func (p *Plan) fromMeta(cfg *Config, srcs []Source) {
	for _, s := range srcs {
		if s.Meta == nil || s.Meta.PeakLiveBytes == nil {
			return
		}
	}
	for _, s := range srcs {
		p.FromMeta = true
		p.Objects += s.Meta.Counts.Objects
		for t := range schema.Tier(schema.NumTiers) {
			if b := cfg.TierMap[t]; b != "" {
				peak := s.Meta.PeakLiveBytes[t.String()]
				_, phys := sizes(peak, cfg.SizeScale, planAlign)
				p.Peak[b] += phys
				p.PeakObjects[b] += metaLive(s.Meta, peak)
			}
		}
	}
}

// metaLive bounds the objects live at once in peak bytes of the trace m
// describes: its objects, and no more than peak holds of objects of one
// token at least (an object of 0 bytes takes no space).
func metaLive(m *trace.Meta, peak int64) int64 {
	n := m.Counts.Objects
	if tok := m.BytesPerToken / int64(max(1, m.TensorParallel)); tok > 0 {
		n = min(n, (peak+tok-1)/tok)
	}
	return max(0, n)
}

// planTotals are the backends' figures summed over the traces.
type planTotals struct {
	peak, peakN, sample, lazy, written, read, ops, reach, reachN []int64
}

// finish sets the plan's per-backend figures from the totals.
func (p *Plan) finish(cfg *Config, names []string, tot *planTotals) {
	if p.LeftOut > 0 {
		p.PeakLeftOut, p.PeakSample, p.PeakLazy = map[string]int64{}, map[string]int64{}, map[string]int64{}
	}
	for b, name := range names {
		if p.LeftOut > 0 {
			p.PeakLeftOut[name], p.PeakSample[name], p.PeakLazy[name] = tot.peak[b], tot.sample[b], tot.lazy[b]
		}
		p.Peak[name] = tot.sample[b]
		p.PeakObjects[name] = tot.peakN[b]
		p.Written[name], p.Read[name], p.Ops[name] = tot.written[b], tot.read[b], tot.ops[b]
		p.Reach[name], p.ReachObjects[name] = max(tot.reach[b], tot.sample[b]), tot.reachN[b]
	}
	if p.profile != nil {
		p.profile.names = names
	}
	if cfg.Capacity > 0 {
		if b := cfg.TierMap[schema.TierNVMe]; b != "" {
			p.Peak[b] = min(p.Peak[b], cfg.Capacity)
			p.Reach[b] = min(p.Reach[b], cfg.Capacity)
		}
	}
}

// traceScan is the prescan of one trace (source src of nsrc): the space
// model of its rows, its keys, its bytes and its profile.
type traceScan struct {
	p         *Plan
	cfg       *Config
	name      string
	src, nsrc int
	names     []string
	s3        int8 // the s3 tier's backend index, -1 for none
	tierB     [schema.NumTiers]int8
	m         *model
	keys      *scanKeys
	// objects counts the keys modelled rows touched (Plan.Objects).
	objects int64
	// ks is the key the model applies a row to, its state loaded from
	// and stored back in the key's scanKey: the prescan's backends are
	// unbounded, so the model uses no other part of a keyState (no LRU
	// list, no eviction, no name for an error).
	ks   keyState
	prof *profile
	// wr, rd and ops are each backend's bytes written and read and
	// operations so far (Plan.Written, Read, Ops).
	wr, rd, ops []int64
	lastReq     uint64
	checked     bool
	// reach and reachN are each backend's Plan.Reach and ReachObjects.
	reach, reachN []int64
	// demoted counts each backend's cold objects a demotion reads first
	// (ColdObject.Demoted), which Plan.PeakObjects leaves out as Peak does.
	demoted []int64
	// chosen are the users a closed loop's --users N replays (nil: all),
	// and skipReq the request of a user left out that the last row was in
	// (closedUsers); the keys their rows touched so far and those rows
	// left out wrote are marked in keys (scanKey.own, left).
	chosen  map[userKey]bool
	skipReq uint64
	// setupAt is where the measured window starts (setupFrom), 0 for
	// none: the rows before it are setup rows (Plan.SetupRows).
	setupAt time.Duration
	// The window (p.Window), from the traces' origin: whether a row of
	// this trace was modelled, the last one's time, whether a row was
	// beyond it, and the request of the last row modelled, whose rows all
	// are.
	org          *origin
	last         time.Duration
	seen, beyond bool
	winReq       uint64
	// users, cold and rows are Plan.Users, Plan.Cold and Plan.TraceRows
	// of this trace, which the plan lists trace by trace.
	users []User
	cold  []ColdObject
	rows  TraceRows
}

// origin is the time of the first row the run replays of all the traces
// (the pace's origin), from which the plan's window and profile count.
type origin struct {
	seen  bool
	first time.Duration
}

// take models src's row when sh gives it to this rank.
func (ts *traceScan) take(src *source, sh *sharder) error {
	if !ts.checked {
		ts.checked = true
		if ts.cfg.ClosedLoop && !src.r.HasUser() {
			return noUsers(ts.name)
		}
	}
	if sh != nil && !ts.org.seen {
		// A rank's window starts at the traces' first row, whichever
		// rank's it is, as the run's pace (rowReader.origin).
		ts.org.seen, ts.org.first = true, src.rec.Time
	}
	if !sh.mine(&src.rec, ts.src) {
		return nil
	}
	return ts.row(&src.rec)
}

// countUser counts rec's request for its user, the first row of each.
func (ts *traceScan) countUser(rec *schema.Record) {
	p := ts.p
	if rec.Request != 0 && rec.User != 0 && rec.Request != ts.lastReq {
		if p.UserRequests == nil {
			p.UserRequests = map[userKey]int64{}
		}
		k := userKey{int32(ts.src), rec.User}
		if p.UserRequests[k] == 0 {
			ts.users = append(ts.users, User{Trace: ts.src, ID: rec.User, QoS: rec.QoS})
		}
		p.UserRequests[k]++
	}
	ts.lastReq = rec.Request
}

// inWindow reports whether rec lies within the plan's window (all rows
// do without one); the rest is read for the trace's identity and counts.
func (ts *traceScan) inWindow(rec *schema.Record) bool {
	if !ts.org.seen {
		ts.org.seen, ts.org.first = true, rec.Time
	}
	ts.seen = true
	// A closed loop plans each request that starts in the window whole;
	// an open loop releases no row past it, of a request or not.
	if ts.p.Window > 0 && !(ts.cfg.ClosedLoop && rec.Request != 0 && rec.Request == ts.winReq) {
		ts.beyond = ts.beyond || rec.Time-ts.org.first >= ts.p.Window
		if ts.beyond {
			return false
		}
		ts.winReq = rec.Request
	}
	return true
}

// replayed reports whether a closed loop of --users N replays rec, as
// the run's closed loop decides (closed.go): the rows of the chosen users'
// requests and the rows outside users' requests are replayed; of a left-out
// user's request, only the Evict and Delete rows of objects a chosen
// user's rows touched before (the trace's LRU demoting them during that
// request), as rows outside requests.
func (ts *traceScan) replayed(rec *schema.Record) bool {
	if ts.chosen == nil {
		return true
	}
	userReq := rec.User != 0 && rec.Request != 0
	if (rec.Request != 0 && rec.Request == ts.skipReq) || (userReq && !ts.chosen[userKey{int32(ts.src), rec.User}]) {
		ts.skipReq = rec.Request
		if rec.Phase == schema.PhaseEvict || rec.Op == schema.OpDelete {
			if sk := ts.keys.get(rec.Key); sk != nil && sk.own {
				return true
			}
		}
		if rec.Op == schema.OpWrite { // a lookup allocates no key; add, on first sight only
			ts.keys.add(rec.Key).left = true
		}
		return false
	}
	ts.skipReq = 0
	if userReq {
		if sk := ts.keys.get(rec.Key); sk == nil || !sk.own {
			ts.keys.add(rec.Key).own = true
		}
	}
	return true
}

// row models one of this rank's rows.
func (ts *traceScan) row(rec *schema.Record) error {
	p := ts.p
	ts.countUser(rec)
	p.Rows++
	if rec.Time < ts.setupAt {
		p.SetupRows++
	}
	p.Used[rec.Tier] = true
	p.UsedRows[rec.Tier]++
	b := ts.tierB[rec.Tier]
	if !ts.replayed(rec) {
		return nil
	}
	p.UserRows++
	ts.rows.Replayed++
	if b < 0 || !ts.inWindow(rec) {
		return nil // an unmapped tier: Run stops on it, naming the flag
	}
	p.WindowRows++
	ts.rows.Window++
	ts.last = max(ts.last, rec.Time)
	ts.prof.advance(rec.Time-ts.org.first, ts.m, ts)
	logical, phys := sizes(rec.Size, ts.cfg.SizeScale, planAlign)
	switch rec.Op {
	case schema.OpRead:
		ts.rd[b] += logical
	case schema.OpWrite:
		ts.wr[b] += logical
	}
	p.MaxObject = max(p.MaxObject, phys)
	p.MaxObjectOf[ts.names[b]] = max(p.MaxObjectOf[ts.names[b]], phys)
	sk := ts.keys.add(rec.Key)
	first, leftOut := !sk.modelled, false
	if first {
		// An object a left-out user wrote and a replayed row reads first
		// is cold for the sample (ColdObject.LeftOut); Demoted when that
		// row is a demotion's read.
		leftOut = sk.left
		sk.modelled = true
		ts.objects++
	}
	if on := &sk.onTier[rec.Tier]; phys > *on {
		if *on == 0 {
			ts.reachN[b]++
		}
		ts.reach[b] += phys - *on
		*on = phys
	}
	if trace.ColdRead(rec.Op, first) {
		// Prepared before the run; a key read again after its Delete is
		// written again lazily, when the read comes.
		demoted := leftOut && rec.Phase == schema.PhaseEvict
		ts.cold = append(ts.cold, ColdObject{Key: sourceKey(ts.src, ts.nsrc, rec.Key), Tier: rec.Tier, Logical: logical, LeftOut: leftOut, Demoted: demoted})
		if leftOut {
			p.LeftOut++
			p.LeftOutBytes += logical
			if demoted {
				p.Demoted++
				p.DemotedBytes += logical
				ts.demoted[b]++
			}
			ts.m.seenLeftOut(b, phys, demoted)
		} else {
			ts.m.seenCold(b, phys)
		}
	}
	sk.load(&ts.ks)
	ts.countOps(rec, b, phys, trace.ColdRead(rec.Op, first))
	_, err := ts.m.apply(&ts.ks, rec.Op, rec.Tier, phys)
	sk.store(&ts.ks)
	return err
}

// countOps counts the operations rec's row, on backend b with phys bytes,
// makes (Plan.Ops), by the model's state before it (ts.ks): one of b, but
// of the s3 tier the requests it makes (s3Row). prepared says that the
// row reads a cold object written before the clock.
func (ts *traceScan) countOps(rec *schema.Record, b int8, phys int64, prepared bool) {
	s3 := ts.s3
	if b != s3 {
		ts.ops[b]++
	}
	if s3 >= 0 {
		ts.ops[s3] += ts.s3Row(rec, b, s3, phys, prepared)
	}
}

// s3Row is the requests the s3 tier, backend s3, makes for rec's row on
// backend b, as the run makes them (exec.go): a read reads the object
// where it is, one on no tier written first unless it was prepared before
// the clock; a write writes b's copy and a move then deletes the copy it
// leaves; a delete deletes the object where it is.
func (ts *traceScan) s3Row(rec *schema.Record, b, s3 int8, phys int64, prepared bool) int64 {
	s, part := &ts.ks.m, ts.cfg.S3PartSize
	switch rec.Op {
	case schema.OpRead:
		switch {
		case s.exists && s.b == s3:
			return s3Requests(false, s.phys, part)
		case s.exists || b != s3:
		case prepared:
			return s3Requests(false, phys, part)
		default:
			return s3Requests(true, phys, part) + s3Requests(false, phys, part)
		}
	case schema.OpWrite:
		var n int64
		if b == s3 {
			n = s3Requests(true, phys, part)
		}
		if s.exists && s.tier != rec.Tier && s.b == s3 {
			n++ // the DELETE of the copy the move leaves
		}
		return n
	case schema.OpDelete:
		if s.exists && s.b == s3 {
			return 1
		}
	}
	return 0
}

// s3Requests is the requests the s3 tier (replay/s3) makes to write, or to
// read whole, an object of size bytes in parts of part bytes: a write is
// one PUT up to part bytes (an empty object's too) and above a multipart
// upload (its create, a PUT of each part, its complete); a read is a GET
// of each part, none for an empty object. Sizes are planned rounded up to
// planAlign, which crosses no part boundary where part is a multiple of
// it (the default, 8 MiB, is); otherwise a count may be one part over. A
// part of 0 (unknown) counts one request.
func s3Requests(write bool, size, part int64) int64 {
	if part <= 0 {
		return 1
	}
	n := (size + part - 1) / part
	if write && n > 1 {
		return n + 2
	}
	if write {
		return 1
	}
	return n
}

// addTo adds the trace's figures to the totals, and its profile and span
// to the plan's.
func (ts *traceScan) addTo(tot *planTotals) {
	p := ts.p
	for b := range ts.names {
		tot.peak[b] += windowPeak(ts.m, b)
		tot.sample[b] += samplePeak(ts.m, b)
		tot.lazy[b] += lazyPeak(ts.m, b)
		tot.peakN[b] += ts.m.peakCount[b] + ts.m.coldCount[b] - ts.demoted[b]
		tot.written[b] += ts.wr[b]
		tot.read[b] += ts.rd[b]
		tot.ops[b] += ts.ops[b]
		tot.reach[b] += ts.reach[b]
		tot.reachN[b] += ts.reachN[b]
	}
	if ts.seen {
		ts.prof.close(ts.last-ts.org.first, ts.m, ts)
		p.profile = p.profile.add(ts.prof)
		p.Span = max(p.Span, ts.last-ts.org.first)
	}
	p.Objects += ts.objects
	p.Users = append(p.Users, ts.users...)
	p.Cold = append(p.Cold, ts.cold...)
	p.TraceRows = append(p.TraceRows, ts.rows)
}
