package export

import (
	"bufio"
	"container/list"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/extent"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// The layouts of FioOptions.Layout.
const (
	LayoutExtent = "extent" // one file per tier, objects placed as extents
	LayoutDir    = "dir"    // one file per object
)

// The speeds of FioOptions.Speed.
const (
	SpeedASAP  = "asap"  // replay_no_stall=1: as fast as iodepth allows, in log order
	SpeedTimed = "timed" // fio waits for each line's timestamp
)

// DefaultAlign is FioOptions.Align's default: the 4096 bytes kvreplay
// aligns to on a file system or device of 4 KiB logical blocks, where it
// finds no larger alignment.
const DefaultAlign = 4096

// maxPath is the longest file name fio's iolog parser reads (its sscanf
// "%256s"); a longer name is split into garbage.
const maxPath = 256

// logEpoch is the iolog timestamp of the trace's first row. fio (3.31 to
// at least 3.41, iolog.c: delay_since_ttime) delays each line by the time
// since the line before it, but never the first line, and takes a
// timestamp of 0 for "no line yet": a line after one stamped 0 waits
// nothing, so a log that started at 0 lost the time up to its first later
// line. So every log starts with a file action at logEpoch, and every
// wait after it is the trace's.
const logEpoch = 1

// maxOpenFiles bounds the files a dir-layout iolog keeps open at once, far
// below the usual limit of 1024 descriptors: the least recently used file is
// closed before another is opened.
const maxOpenFiles = 128

// extentCapacity is the space the extent layout's allocators place objects
// in: far more than any drive, so that placement never fails and the file
// is as long as the trace's peak (its high-water mark), not a set capacity.
const extentCapacity = 1 << 60

// LogKind names one of a tier's iologs.
type LogKind uint8

// The iologs of a tier.
const (
	// ReplayLog is the trace's I/O on the tier.
	ReplayLog LogKind = iota
	// PrepLog writes every object file in full before the replay (dir
	// layout only; the extent layout's prep job needs no log).
	PrepLog
)

// LogName returns the conventional name of a tier's iolog for a trace
// whose name, without extensions, is base: base+".tier2.iolog" for the
// replay log of Tier-2, base+".tier2.prep.iolog" for its prep log.
func LogName(base string, tier schema.Tier, kind LogKind) string {
	s := base + ".tier" + strconv.Itoa(int(tier))
	if kind == PrepLog {
		s += ".prep"
	}
	return s + ".iolog"
}

// ExtentFileName returns the name, in FioOptions.Dir, of the file that
// holds tier's objects in the extent layout: for Tier-2 "kvbench.extent",
// the file kvreplay --layout extent makes in its run directory; for the
// other tiers "kvbench.tier<N>.extent".
func ExtentFileName(tier schema.Tier) string {
	if tier == schema.TierNVMe {
		return "kvbench.extent"
	}
	return "kvbench.tier" + strconv.Itoa(int(tier)) + ".extent"
}

// FioOptions shape Fio's output. The zero value of a field means its
// default (DefaultFioOptions), except Dir, which has none.
type FioOptions struct {
	// BlockSize is the largest I/O an object operation is split into: a
	// power of two between 4 KiB and 1 GiB, as kvreplay's --block-size.
	BlockSize int64
	// Align is the alignment of every object's size and offset, and so of
	// every I/O: the one kvreplay finds on the drive under test and sizes
	// and places objects with (replay/extent, replay/nvme), 4096 or, when
	// larger, the direct-I/O alignment of the file system (statx
	// STATX_DIOALIGN) or the logical block size of a block device. A
	// power of two from 4 KiB up to BlockSize. Every exported tier's files
	// lie in Dir, on that drive, so every tier takes it (kvreplay's RAM
	// tier aligns to 4096).
	Align int64
	// Tiers are the tiers that get an iolog and replay job; each must
	// have rows in the trace (Fio refuses one without, NoRowsError). The
	// rows of the other tiers do no I/O but still move objects: a write
	// there drops the object's copy on an exported tier.
	Tiers []schema.Tier
	// Layout is LayoutExtent or LayoutDir.
	Layout string
	// SizeScale multiplies every object's size, as kvreplay's
	// --size-scale: greater than 0 and at most 1.
	SizeScale float64
	// Dir is the directory fio's data files live in, on the drive under
	// test, as the job file and iologs name it: fio opens relative names
	// from its working directory. It must not hold whitespace, ':' (fio's
	// file name separator) or '$' (fio's variable expansion).
	Dir string
	// Speed is SpeedASAP or SpeedTimed.
	Speed string
	// IODepth is the I/Os each fio job keeps in flight: 1 to 4096.
	IODepth int
	// Engine is fio's ioengine, such as io_uring, libaio or psync.
	Engine string
	// Buffered writes direct=0 instead of direct=1, for file systems
	// without O_DIRECT such as tmpfs.
	Buffered bool
	// IOMem is fio's iomem, where its I/O buffers come from: one of
	// IOMems. The default, malloc, runs anywhere; shmhuge and mmaphuge
	// take huge pages from the pool reserved in /proc/sys/vm/nr_hugepages
	// (the job's header says how many), and fio fails where too few are.
	IOMem string
	// FixedBufs registers fio's buffers with io_uring (fixedbufs=1), as
	// kvreplay's uring engine does where it can: only with Engine
	// io_uring. Off by default: the registered buffers pin iodepth blocks
	// a job, which RLIMIT_MEMLOCK must allow a user without
	// CAP_IPC_LOCK (8 MiB by default since Linux 5.16), else fio fails
	// (ENOMEM), where kvreplay falls back to plain requests.
	FixedBufs bool
	// LogPath returns the name the job file gives a tier's iolog
	// (read_iolog=), which fio opens from its working directory; the
	// default is LogName("kvbench", tier, kind). It must name the file the
	// logs callback of Fio writes.
	LogPath func(tier schema.Tier, kind LogKind) string
	// Source names the trace in the job file's header comment ("-" is
	// stdin).
	Source string
	// NoPrescan says that Cold was left empty for a trace file on purpose
	// (kvtrace export --no-prescan): its cold objects are placed at their
	// first reads, as kvreplay --no-prescan places them, which the job
	// file's kvreplay line (Kvreplay) then gives. A trace on stdin is
	// read once by kvreplay too, and needs no option.
	NoPrescan bool
	// Cold are objects to place, in order, before the first row, as
	// kvreplay writes the cold objects its prescan of a trace file finds
	// before its clock starts (ColdObjects gives them). Without them a
	// cold object is placed at its first read, as kvreplay does with a
	// trace on a pipe. Either way the extents of the objects are those
	// kvreplay's extent layout gives when it applies the rows in order.
	Cold []ColdObject

	// chunkAbove overrides chunkedOps (tests).
	chunkAbove int64
}

// IOMems are the values of fio's iomem that FioOptions.IOMem takes.
var IOMems = []string{"malloc", "shm", "shmhuge", "mmap", "mmaphuge", "mmapshared"}

// DefaultIOMem is FioOptions.IOMem's default: buffers of 4 KiB pages,
// which need no reservation.
const DefaultIOMem = "malloc"

// asyncEngines are the ioengines that keep iodepth I/Os in flight, where
// fio's batching options act (a synchronous engine does one I/O at a
// time, whatever iodepth says).
var asyncEngines = map[string]bool{"io_uring": true, "io_uring_cmd": true, "libaio": true, "posixaio": true}

// hugePage is the huge page size the job's header counts pages of: x86-64's
// (Hugepagesize in /proc/meminfo), fio's default hugepage-size.
const hugePage = 2 << 20

// chunkedOps is the number of I/O lines above which an asap replay job, or
// a prep job, reads its iolog in chunks (read_iolog_chunked=1): fio
// otherwise holds the whole log in memory, about 100 bytes a line. A timed
// job cannot (see writeJob).
const chunkedOps = 1 << 20

// DefaultFioOptions returns the defaults: 1 MiB blocks aligned to 4 KiB,
// Tier-2 only, the extent layout, no scaling, asap, iodepth 32 on
// io_uring, direct I/O. Dir must still be set.
func DefaultFioOptions() FioOptions {
	return FioOptions{
		BlockSize: 1 << 20,
		Align:     DefaultAlign,
		Tiers:     []schema.Tier{schema.TierNVMe},
		Layout:    LayoutExtent,
		SizeScale: 1,
		Speed:     SpeedASAP,
		IODepth:   32,
		Engine:    "io_uring",
		IOMem:     DefaultIOMem,
		LogPath:   func(t schema.Tier, k LogKind) string { return LogName("kvbench", t, k) },
	}
}

// withDefaults returns o with its zero fields set to their defaults.
func (o FioOptions) withDefaults() FioOptions {
	d := DefaultFioOptions()
	if o.BlockSize == 0 {
		o.BlockSize = d.BlockSize
	}
	if o.Align == 0 {
		o.Align = d.Align
	}
	if len(o.Tiers) == 0 {
		o.Tiers = d.Tiers
	}
	if o.Layout == "" {
		o.Layout = d.Layout
	}
	if o.SizeScale == 0 {
		o.SizeScale = d.SizeScale
	}
	if o.Speed == "" {
		o.Speed = d.Speed
	}
	if o.IODepth == 0 {
		o.IODepth = d.IODepth
	}
	if o.Engine == "" {
		o.Engine = d.Engine
	}
	if o.IOMem == "" {
		o.IOMem = d.IOMem
	}
	if o.LogPath == nil {
		o.LogPath = d.LogPath
	}
	return o
}

// Validate reports every problem of o at once, one per line, naming the
// flag of kvtrace export that sets the field. Zero fields take their
// defaults first.
func (o FioOptions) Validate() error {
	o = o.withDefaults()
	var p problems
	blockOK := o.BlockSize >= 4096 && o.BlockSize <= 1<<30 && o.BlockSize&(o.BlockSize-1) == 0
	if !blockOK {
		p.bad("--block-size %d: must be a power of two between 4KiB and 1GiB", o.BlockSize)
	}
	switch {
	case o.Align < DefaultAlign || o.Align > 1<<30 || o.Align&(o.Align-1) != 0:
		p.bad("--align %d: must be a power of two between 4KiB and 1GiB", o.Align)
	case blockOK && o.Align > o.BlockSize:
		p.bad("--align %d: above --block-size %d: the I/Os of an object would not be aligned", o.Align, o.BlockSize)
	}
	p.add(checkTiers(o.Tiers))
	if o.Layout != LayoutExtent && o.Layout != LayoutDir {
		p.bad("--layout %s: want extent or dir", parsemsg.Arg(o.Layout))
	}
	p.add(checkScale(o.SizeScale))
	switch {
	case o.Dir == "":
		p.bad("--dir: required (the directory fio's files live in, on the drive under test)")
	default:
		p.add(fioName("--dir", o.Dir))
	}
	if o.Speed != SpeedASAP && o.Speed != SpeedTimed {
		p.bad("--speed %s: want asap or timed", parsemsg.Arg(o.Speed))
	}
	if o.IODepth < 1 || o.IODepth > 4096 {
		p.bad("--iodepth %d: must be between 1 and 4096", o.IODepth)
	}
	for _, c := range o.Cold {
		if !c.Tier.Valid() || c.Size < 0 || c.Key == "" {
			p.bad("cold object %q on %s of %d bytes: want a key, a tier and a size of 0 or more", c.Key, c.Tier, c.Size)
			break
		}
	}
	if !isWord(o.Engine) {
		p.bad("--engine %q: want the name of a fio ioengine, such as io_uring, libaio or psync", o.Engine)
	}
	if !slices.Contains(IOMems, o.IOMem) {
		p.bad("--iomem %q: want one of fio's %s", o.IOMem, strings.Join(IOMems, ", "))
	}
	if o.FixedBufs && o.Engine != "io_uring" {
		p.bad("--fixedbufs: only with --engine io_uring (fio refuses fixedbufs=1 with ioengine=%s)", o.Engine)
	}
	return p.err()
}

// problems gathers the errors of a Validate, one a line.
type problems []error

func (p *problems) bad(format string, args ...any) { *p = append(*p, fmt.Errorf(format, args...)) }

// add adds err unless it is nil.
func (p *problems) add(err error) {
	if err != nil {
		*p = append(*p, err)
	}
}

func (p problems) err() error { return errors.Join(p...) }

// checkScale reports a --size-scale out of (0, 1].
func checkScale(scale float64) error {
	if !(scale > 0 && scale <= 1) {
		return fmt.Errorf("--size-scale %v: must be greater than 0 and at most 1", scale)
	}
	return nil
}

// checkTiers reports a tier list with an unknown or repeated tier.
func checkTiers(tiers []schema.Tier) error {
	var seen [schema.NumTiers]bool
	for _, t := range tiers {
		if !t.Valid() {
			return fmt.Errorf("--tiers: %s: want %s", t, schema.TierChoices)
		}
		if seen[t] {
			return fmt.Errorf("--tiers: %s given twice", t)
		}
		seen[t] = true
	}
	return nil
}

// CheckFioName reports, as what (the flag or the file), a file name that
// fio's job file or iolog parser would misread (see fioName), so that a
// caller can refuse it before an export writes anything.
func CheckFioName(what, name string) error { return fioName(what, name) }

// fioName reports a file name that fio's job file or iolog parser would
// misread: empty, longer than it reads, with whitespace or control
// characters (the iolog splits on them), ':' (the job file's list
// separator) or '$' (its variable expansion).
func fioName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s: empty file name", what)
	case len(name) > maxPath:
		return fmt.Errorf("%s %q: %d bytes, but fio reads file names of at most %d bytes (shorten the directory)", what, name, len(name), maxPath)
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c <= ' ' || c == 0x7f:
			return fmt.Errorf("%s %q: holds whitespace or a control character, which fio's iolog cannot name", what, name)
		case c == ':' || c == '$':
			return fmt.Errorf("%s %q: holds %q, which fio's job file reads as a separator or a variable", what, name, c)
		}
	}
	return nil
}

// isWord reports whether s is a non-empty run of [a-z0-9_].
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// FioStats is what Fio wrote: per tier, the I/O its replay log moves, so
// that a test can hold fio's reported bytes against it.
type FioStats struct {
	// Rows counts the trace rows read, of all tiers.
	Rows int64
	// Clamped counts rows earlier than the row before them, written with
	// that row's timestamp.
	Clamped int64
	// ColdReads counts the cold objects: those read when on no tier
	// (never written, or deleted), which kvreplay writes untimed before
	// reading them, and which the prep job writes here. All tiers count.
	ColdReads int64
	// Mismatched counts reads of an object on another tier than the row
	// names (an inconsistent trace): the read goes where the object is,
	// as kvreplay reads it.
	Mismatched int64
	// Tier holds the figures of each tier, indexed by schema.Tier.
	Tier [schema.NumTiers]FioTierStats
}

// FioTierStats is what Fio wrote for one tier. Byte counts are physical:
// scaled and aligned, as fio moves them.
type FioTierStats struct {
	// Exported reports that the tier has an iolog.
	Exported bool
	// Rows counts the tier's rows, exported or not: reads, writes and
	// deletes.
	Rows int64
	// ReadOps and WriteOps count the I/O lines of the replay log; Ops is
	// their sum.
	Ops, ReadOps, WriteOps int64
	// ReadBytes and WriteBytes are the bytes of those lines: what fio's
	// replay job reports as read.io_bytes and write.io_bytes.
	ReadBytes, WriteBytes int64
	// ColdReads counts the cold objects placed on the tier.
	ColdReads int64
	// Files counts the data files: 1 in the extent layout, the object
	// files in the dir layout.
	Files int64
	// HighWater is the extent layout's peak: the end of the highest
	// extent ever placed.
	HighWater int64
	// FileSize is the data on disk after the prep job: the tier file
	// (HighWater rounded up to the block size) or all object files.
	FileSize int64
	// PrepBytes is what the prep job writes (FileSize).
	PrepBytes int64
}

// Fio streams the trace once and writes, for every tier of opt.Tiers, an
// iolog through logs (called once per tier with ReplayLog, and with PrepLog
// in the dir layout, before the first row is read), then the job file to
// job. It returns what it wrote, and with an error the figures so far. A
// tier of opt.Tiers on which the trace has no rows is refused, once the
// trace is read, with a *NoRowsError (its job would measure nothing), and
// the job file is not written; a tier with rows but no I/O (only deletes)
// gets an iolog but no job section. Writers that are io.Closers are not
// closed.
func Fio(r *trace.Reader, opt FioOptions, logs func(tier schema.Tier, kind LogKind) (io.Writer, error), job io.Writer) (FioStats, error) {
	st, _, err := fio(r, opt, logs, job, nil)
	return st, err
}

// FioSize is Fio without its output: it returns what Fio would, with the
// same r and opt, and the bytes Fio would write through logs and to job,
// all of them. It counts the iologs' lines without formatting them, so
// that it sizes an export of many terabytes in the time the trace takes
// to read: an object operation's I/O lines are counted at once, whatever
// their number.
func FioSize(r *trace.Reader, opt FioOptions) (FioStats, int64, error) {
	return fio(r, opt, nil, nil, nil)
}

// FioSizeCold is FioSize that also returns the trace's cold objects, as
// ColdObjects does, from the same read. When there are none, its figures
// are also those of the export with opt.Cold set to them (there is
// nothing to place first), so that a trace without cold objects is
// prescanned and sized in one read.
func FioSizeCold(r *trace.Reader, opt FioOptions) (FioStats, int64, []ColdObject, error) {
	scan := &coldScan{seen: map[string]struct{}{}}
	st, n, err := fio(r, opt, nil, nil, scan)
	return st, n, scan.cold, err
}

// fio is Fio, and with no logs FioSize: the bytes of its output are the
// second result. With scan, it gathers the trace's cold objects there.
func fio(r *trace.Reader, opt FioOptions, logs func(tier schema.Tier, kind LogKind) (io.Writer, error), job io.Writer, scan *coldScan) (FioStats, int64, error) {
	opt = opt.withDefaults()
	var st FioStats
	if err := opt.Validate(); err != nil {
		return st, 0, fmt.Errorf("export: %w", err)
	}
	x := &fioExport{opt: opt, st: &st, keys: map[string]keyState{}, count: logs == nil, scan: scan}
	for _, t := range opt.Tiers {
		ft, err := x.openTier(t, logs)
		if err != nil {
			return st, 0, err
		}
		x.tiers[t] = ft
		st.Tier[t].Exported = true
	}
	for _, c := range opt.Cold {
		if _, live := x.keys[c.Key]; !live {
			if err := x.cold([]byte(c.Key), c.Tier, x.physical(c.Size)); err != nil {
				return st, 0, err
			}
		}
	}
	if err := x.run(r); err != nil {
		return st, 0, err
	}
	var rows [schema.NumTiers]int64
	for t := range rows {
		rows[t] = st.Tier[t].Rows
	}
	if err := checkRows(r.Name, "fio job", opt.Tiers, &rows); err != nil {
		return st, 0, err
	}
	var n int64
	for _, ft := range x.tiers {
		if ft == nil {
			continue
		}
		ft.finish()
		if err := ft.flush(); err != nil {
			return st, 0, err
		}
		for _, l := range []*iolog{ft.log, ft.prep} {
			if l != nil {
				n += l.n
			}
		}
	}
	jobBytes := new(counter)
	if job == nil {
		job = io.Discard
	}
	bw := bufio.NewWriter(io.MultiWriter(job, jobBytes))
	x.writeJob(bw)
	if err := bw.Flush(); err != nil {
		return st, 0, fmt.Errorf("export: fio job: %w", err)
	}
	return st, n + int64(*jobBytes), nil
}

// counter counts the bytes written to it.
type counter int64

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}

// iolog is one iolog being written, or, for FioSize, counted.
type iolog struct {
	w       *bufio.Writer // nil: counted only
	n       int64         // the bytes written, or that would be
	started bool          // its first line is written
}

func (l *iolog) write(b []byte) {
	l.n += int64(len(b))
	if l.w != nil {
		l.w.Write(b) // a write error is sticky: flush reports it
	}
}

// fioExport is the state of one Fio call.
type fioExport struct {
	opt   FioOptions
	st    *FioStats
	tiers [schema.NumTiers]*fioTier
	// keys holds every key live on some tier, exported or not.
	keys map[string]keyState
	buf  []byte
	// count: the logs are counted, not written (FioSize).
	count bool
	scan  *coldScan // FioSizeCold
}

// keyState is where a key lives, as kvreplay's engine tracks it: on one
// tier at a time.
type keyState struct {
	tier schema.Tier
	size int64 // physical bytes
}

// fioTier is one exported tier: its logs, its objects, and, in the extent
// layout, its allocator.
type fioTier struct {
	x     *fioExport
	tier  schema.Tier
	st    *FioTierStats
	log   *iolog
	prep  *iolog // dir layout
	file  string // extent layout: the tier file
	alloc *extent.Allocator
	objs  map[string]*object
	// dir layout: the open files of the replay log, least recently used
	// first, and the closes not yet written.
	open     list.List
	closes   []*object
	prepOpen *object // the file the prep log has open
	prepOps  int64   // the I/O lines of the prep log
}

// object is one object of a tier.
type object struct {
	size int64 // physical bytes
	off  int64 // extent layout: where it starts
	live bool  // on the tier: written (or read cold) and not deleted or moved
	// dir layout
	path      string
	added     bool // the replay log has its add line
	elem      *list.Element
	closing   bool // a close is queued
	prepAdded bool
	prepped   int64 // bytes the prep log writes
}

func (x *fioExport) openTier(t schema.Tier, logs func(schema.Tier, LogKind) (io.Writer, error)) (*fioTier, error) {
	ft := &fioTier{x: x, tier: t, st: &x.st.Tier[t], objs: map[string]*object{}}
	for _, kind := range []LogKind{ReplayLog, PrepLog} {
		if kind == PrepLog && x.opt.Layout != LayoutDir {
			break
		}
		name := x.opt.LogPath(t, kind)
		if err := fioName("export: fio: iolog", name); err != nil {
			return nil, err
		}
		l := &iolog{}
		if !x.count {
			w, err := logs(t, kind)
			if err != nil {
				return nil, fmt.Errorf("export: fio: %s iolog: %w", t, err)
			}
			l.w = bufio.NewWriterSize(w, 64<<10)
		}
		l.write([]byte("fio version 3 iolog\n"))
		if kind == ReplayLog {
			ft.log = l
		} else {
			ft.prep = l
		}
	}
	switch x.opt.Layout {
	case LayoutExtent:
		ft.file = path.Join(x.opt.Dir, ExtentFileName(t))
		if err := fioName("export: fio: file", ft.file); err != nil {
			return nil, err
		}
		ft.alloc = extent.New(extentCapacity, x.opt.Align)
		ft.st.Files = 1
		ft.line(ft.log, 0, ft.file, "add")
		ft.line(ft.log, 0, ft.file, "open")
	}
	return ft, nil
}

// physical returns the bytes an object of size occupies: scaled as kvreplay
// scales (trace.ScaledSize), then aligned up to Align, as kvreplay sizes
// it for a backend of that alignment (replay.sizes).
func (x *fioExport) physical(size int64) int64 {
	return alignUp(trace.ScaledSize(size, x.opt.SizeScale), x.opt.Align)
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

func (x *fioExport) run(r *trace.Reader) error {
	var (
		rec        schema.Record
		base, prev time.Duration
		first      = true
	)
	for {
		err := r.Read(&rec)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		x.st.Rows++
		if x.scan != nil {
			x.scan.add(&rec)
		}
		if first {
			base, first = rec.Time, false
		}
		t := rec.Time - base
		if t < prev {
			t = prev
			x.st.Clamped++
		}
		prev = t
		if err := x.row(t.Microseconds(), &rec); err != nil {
			return err
		}
	}
}

// row applies one row at us microseconds, as kvreplay's engine executes it
// (replay/engine.go, execute): a key lives on one tier at a time.
func (x *fioExport) row(us int64, rec *schema.Record) error {
	x.st.Tier[rec.Tier].Rows++
	key := rec.Key
	ks, live := x.keys[string(key)]
	size := x.physical(rec.Size)
	switch rec.Op {
	case schema.OpRead:
		if !live {
			// A cold read: kvreplay writes the object, untimed, first.
			if err := x.cold(key, rec.Tier, size); err != nil {
				return err
			}
			ks = x.keys[string(key)]
		}
		if ks.tier != rec.Tier {
			x.st.Mismatched++
		}
		// kvreplay reads the object where it is, as big as it is.
		if ft := x.tiers[ks.tier]; ft != nil {
			ft.transfer(us, ft.objs[string(key)], false)
		}
	case schema.OpWrite:
		// A rewrite in place frees the old extent first (kvreplay's Open
		// with create); a write elsewhere (a demotion) drops the copy it
		// leaves once the new one is written.
		if live && ks.tier == rec.Tier {
			if err := x.removeFrom(ks.tier, key); err != nil {
				return err
			}
		}
		if err := x.placeOn(rec.Tier, key, size); err != nil {
			return err
		}
		if ft := x.tiers[rec.Tier]; ft != nil {
			ft.transfer(us, ft.objs[string(key)], true)
		}
		if live && ks.tier != rec.Tier {
			if err := x.removeFrom(ks.tier, key); err != nil {
				return err
			}
		}
		x.keys[string(key)] = keyState{tier: rec.Tier, size: size}
	case schema.OpDelete:
		if live {
			delete(x.keys, string(key))
			return x.removeFrom(ks.tier, key)
		}
	default:
		return fmt.Errorf("export: row %s: unknown operation", rec)
	}
	return nil
}

// cold makes key live on tier before its first read, as kvreplay
// materialises a cold object.
func (x *fioExport) cold(key []byte, tier schema.Tier, size int64) error {
	x.st.ColdReads++
	if ft := x.tiers[tier]; ft != nil {
		ft.st.ColdReads++
	}
	x.keys[string(key)] = keyState{tier: tier, size: size}
	return x.placeOn(tier, key, size)
}

// placeOn places key on tier when the tier is exported.
func (x *fioExport) placeOn(tier schema.Tier, key []byte, size int64) error {
	if ft := x.tiers[tier]; ft != nil {
		return ft.place(key, size)
	}
	return nil
}

// removeFrom takes key off tier when the tier is exported.
func (x *fioExport) removeFrom(tier schema.Tier, key []byte) error {
	if ft := x.tiers[tier]; ft != nil {
		return ft.remove(key)
	}
	return nil
}

// transfer writes the I/O lines of a whole-object read or write of o.
func (ft *fioTier) transfer(us int64, o *object, write bool) {
	if o == nil || o.size == 0 {
		return
	}
	act := "read"
	if write {
		act = "write"
	}
	name := ft.file
	if ft.alloc == nil {
		ft.openFile(us, o)
		name = o.path
	}
	bs := ft.x.opt.BlockSize
	if ft.x.count {
		// The lines the loop below writes, counted at once: the closes
		// queued before them first, as writeLine writes them.
		if len(ft.closes) > 0 {
			ft.flushCloses(us)
		}
		lines := ft.countIO(ft.log, us, name, act, o.off, o.off+o.size)
		ft.st.Ops += lines
		if write {
			ft.st.WriteOps += lines
			ft.st.WriteBytes += o.size
		} else {
			ft.st.ReadOps += lines
			ft.st.ReadBytes += o.size
		}
		return
	}
	for off := int64(0); off < o.size; off += bs {
		n := min(bs, o.size-off)
		ft.io(ft.log, us, name, act, o.off+off, n)
		ft.st.Ops++
		if write {
			ft.st.WriteOps++
			ft.st.WriteBytes += n
		} else {
			ft.st.ReadOps++
			ft.st.ReadBytes += n
		}
	}
}

// place makes the object of key live on the tier with size physical
// bytes: an extent of the tier file, or an object file the prep log
// writes.
func (ft *fioTier) place(key []byte, size int64) error {
	o := ft.objs[string(key)]
	if o == nil {
		o = &object{}
		if ft.alloc == nil {
			o.path = path.Join(ft.x.opt.Dir, fileName(ft.tier, string(key)))
			if err := fioName("export: fio: object file", o.path); err != nil {
				return err
			}
		}
		ft.objs[string(key)] = o
	}
	if ft.alloc != nil {
		off, err := ft.alloc.Alloc(size)
		if err != nil {
			return fmt.Errorf("export: fio: %s: place %q: %w", ft.tier, key, err)
		}
		o.off = off
		ft.st.HighWater = max(ft.st.HighWater, off+size)
	} else if size > o.prepped {
		ft.prepare(o, size)
	}
	o.size, o.live = size, true
	return nil
}

// remove takes the object of key off the tier: its extent is freed, its
// file closed.
func (ft *fioTier) remove(key []byte) error {
	o := ft.objs[string(key)]
	if o == nil || !o.live {
		return nil
	}
	o.live = false
	if ft.alloc != nil {
		delete(ft.objs, string(key))
		if err := ft.alloc.Free(o.off, o.size); err != nil {
			return fmt.Errorf("export: fio: %s: free %q: %w", ft.tier, key, err)
		}
		return nil
	}
	if o.elem != nil {
		ft.open.Remove(o.elem)
		o.elem = nil
		o.closing = true
		ft.closes = append(ft.closes, o)
	}
	return nil
}

// openFile makes the replay log open o's file (dir layout), adding it the
// first time and closing the least recently used file when too many are
// open.
func (ft *fioTier) openFile(us int64, o *object) {
	if o.closing {
		// Its close is not written yet: cancel it; the file stays open.
		o.closing = false
		o.elem = ft.open.PushBack(o)
		return
	}
	if o.elem != nil {
		ft.open.MoveToBack(o.elem)
		return
	}
	if ft.open.Len() >= maxOpenFiles {
		lru := ft.open.Remove(ft.open.Front()).(*object)
		lru.elem = nil
		ft.line(ft.log, us, lru.path, "close")
	}
	if !o.added {
		ft.line(ft.log, us, o.path, "add")
		o.added = true
	}
	ft.line(ft.log, us, o.path, "open")
	o.elem = ft.open.PushBack(o)
}

// prepare makes the prep log write o's file up to size bytes (dir layout).
// The prep log closes a file only when it opens the next, so that it never
// ends with a close.
func (ft *fioTier) prepare(o *object, size int64) {
	if ft.prepOpen != o {
		if p := ft.prepOpen; p != nil {
			ft.line(ft.prep, 0, p.path, "close")
		}
		if !o.prepAdded {
			ft.line(ft.prep, 0, o.path, "add")
			o.prepAdded = true
			ft.st.Files++
		}
		ft.line(ft.prep, 0, o.path, "open")
		ft.prepOpen = o
	}
	bs := ft.x.opt.BlockSize
	if ft.x.count {
		ft.prepOps += ft.countIO(ft.prep, 0, o.path, "write", o.prepped, size)
	} else {
		for off := o.prepped; off < size; off += bs {
			n := min(bs, size-off)
			ft.io(ft.prep, 0, o.path, "write", off, n)
			ft.prepOps++
		}
	}
	ft.st.PrepBytes += size - o.prepped
	ft.st.FileSize += size - o.prepped
	o.prepped = size
}

// finish completes the figures of the tier once the trace is read.
func (ft *fioTier) finish() {
	if ft.alloc != nil {
		ft.st.FileSize = alignUp(ft.st.HighWater, ft.x.opt.BlockSize)
		ft.st.PrepBytes = ft.st.FileSize
	}
}

func (ft *fioTier) flush() error {
	for _, l := range []*iolog{ft.log, ft.prep} {
		if l == nil || l.w == nil {
			continue
		}
		if err := l.w.Flush(); err != nil {
			return fmt.Errorf("export: fio: %s iolog: %w", ft.tier, err)
		}
	}
	return nil
}

// flushCloses writes the closes queued by deletes, just before another line
// of the replay log.
func (ft *fioTier) flushCloses(us int64) {
	for _, o := range ft.closes {
		if o.closing {
			o.closing = false
			ft.writeLine(ft.log, us, o.path, "close", -1, 0)
		}
	}
	ft.closes = ft.closes[:0]
}

// line writes a file action line.
func (ft *fioTier) line(w *iolog, us int64, name, act string) {
	ft.writeLine(w, us, name, act, -1, 0)
}

// io writes an I/O line.
func (ft *fioTier) io(w *iolog, us int64, name, act string, off, n int64) {
	ft.writeLine(w, us, name, act, off, n)
}

func (ft *fioTier) writeLine(w *iolog, us int64, name, act string, off, n int64) {
	if w == ft.log && len(ft.closes) > 0 {
		ft.flushCloses(us)
	}
	if !w.started {
		// fio does not delay a log's first line: it is at the first row,
		// so that the lines after it wait as the trace does (logEpoch).
		us, w.started = 0, true
	}
	us += logEpoch
	if ft.x.count {
		// The length of the line below.
		w.n += int64(numLen(us)+len(name)+len(act)) + 3
		if off >= 0 {
			w.n += int64(numLen(off)+numLen(n)) + 2
		}
		return
	}
	b := ft.x.buf[:0]
	b = strconv.AppendInt(b, us, 10)
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, act...)
	if off >= 0 {
		b = append(b, ' ')
		b = strconv.AppendInt(b, off, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, n, 10)
	}
	b = append(b, '\n')
	w.write(b)
	ft.x.buf = b
}

// countIO counts in w, without formatting them, the I/O lines at us that
// move the bytes [off, end) of name in blocks of the block size, as the
// loops of transfer and prepare write them ("us name act off n\n" for
// each block), and returns their number.
func (ft *fioTier) countIO(w *iolog, us int64, name, act string, off, end int64) int64 {
	if end <= off {
		return 0
	}
	bs := ft.x.opt.BlockSize
	lines := (end - off + bs - 1) / bs
	last := end - off - (lines-1)*bs // the last block's length
	fixed := int64(numLen(us+logEpoch)+len(name)+len(act)) + 5
	w.n += lines*fixed + digitsOfRun(off, bs, lines) + (lines-1)*int64(numLen(bs)) + int64(numLen(last))
	return lines
}

// numLen is the length of v in decimal, as strconv.AppendInt writes it.
func numLen(v int64) int {
	n := 1
	if v < 0 {
		n++
		if v == math.MinInt64 {
			return 20
		}
		v = -v
	}
	for ; v >= 10; v /= 10 {
		n++
	}
	return n
}

// digitsOfRun is the sum of the decimal lengths of a, a+step, ...,
// a+(k-1)*step (a >= 0, step > 0, no overflow): each term has one digit,
// and one more for every power of ten 10^j it reaches, so the sum is k
// plus, for each j, the terms at or above 10^j.
func digitsOfRun(a, step, k int64) int64 {
	sum := k
	for p := int64(10); ; p *= 10 {
		below := int64(0) // the terms under p
		if a < p {
			below = min(k, (p-a+step-1)/step)
		}
		if below == k {
			break
		}
		sum += k - below
		if p > math.MaxInt64/10 {
			break
		}
	}
	return sum
}

// writeJob writes the job file.
func (x *fioExport) writeJob(w *bufio.Writer) {
	o := x.opt
	src := o.Source
	switch src {
	case "":
		src = "a trace"
	case "-":
		src = "stdin"
	}
	fmt.Fprintf(w, "; fio job file written by kvtrace export from %s (%d rows).\n", src, x.st.Rows)
	w.WriteString("; It needs fio 3.31 or later (iolog version 3). Run it as\n")
	w.WriteString(";   fio --output-format=json THIS_FILE\n")
	if o.Layout == LayoutDir {
		w.WriteString("; The mkdir job creates the directory, the prep jobs write every object\n")
		w.WriteString("; file in full, then the replay jobs replay the iologs (stonewall).\n")
	} else {
		w.WriteString("; The prep jobs write the tier files in full, then the replay jobs replay\n")
		w.WriteString("; the iologs (stonewall).\n")
	}
	w.WriteString("; Each replay job's io_size is the bytes its iolog moves, so that fio counts\n")
	w.WriteString("; every I/O of it; its read and write io_bytes are the figures below.\n")
	// The anchor is like for like only against the kvreplay run of the
	// same options, several of whose defaults are not the job's.
	w.WriteString("; kvreplay does the same I/O as\n")
	fmt.Fprintf(w, ";   %s\n", o.KvreplayLine())
	_, notes := o.Kvreplay()
	for _, n := range notes {
		fmt.Fprintf(w, ";   - %s\n", n)
	}
	w.WriteString(";\n")
	var jobs []*fioTier
	for _, t := range o.Tiers {
		ft := x.tiers[t]
		s := ft.st
		fmt.Fprintf(w, "; %s (%d rows): %d reads of %d bytes, %d writes of %d bytes; cold reads: %d\n",
			t, s.Rows, s.ReadOps, s.ReadBytes, s.WriteOps, s.WriteBytes, s.ColdReads)
		if ft.alloc != nil {
			fmt.Fprintf(w, ";   data file %s: %d bytes (high-water mark %d)\n", ft.file, s.FileSize, s.HighWater)
		} else {
			fmt.Fprintf(w, ";   object files %s/%d_*: %d, %d bytes\n", o.Dir, t, s.Files, s.FileSize)
		}
		if s.Ops == 0 {
			w.WriteString(";   no I/O: no job\n")
			continue
		}
		jobs = append(jobs, ft)
	}
	o.writeTuningNotes(w, len(jobs))
	w.WriteString("\n[global]\n")
	fmt.Fprintf(w, "ioengine=%s\n", o.Engine)
	if o.Buffered {
		w.WriteString("direct=0\n")
	} else {
		w.WriteString("direct=1\n")
	}
	fmt.Fprintf(w, "iodepth=%d\n", o.IODepth)
	o.writeTuning(w)

	stonewall := func(i int) {
		if i == 0 {
			w.WriteString("stonewall\n")
		}
	}
	limit := int64(chunkedOps)
	if o.chunkAbove > 0 {
		limit = o.chunkAbove
	}
	if o.Layout == LayoutDir {
		if len(jobs) > 0 {
			w.WriteString("\n[mkdir]\n")
			fmt.Fprintf(w, "filename=%s\n", path.Join(o.Dir, ".kvbench-mkdir"))
			w.WriteString("size=4096\nrw=write\ncreate_only=1\nunlink=1\n")
		}
		for i, ft := range jobs {
			fmt.Fprintf(w, "\n[prep-tier%d]\n", ft.tier)
			stonewall(i)
			fmt.Fprintf(w, "read_iolog=%s\n", o.LogPath(ft.tier, PrepLog))
			fmt.Fprintf(w, "io_size=%d\n", ft.st.PrepBytes)
			w.WriteString("replay_no_stall=1\n")
			// An asap log, as big as the replay's can be: read in chunks
			// by the same rule.
			if ft.prepOps > limit {
				w.WriteString("read_iolog_chunked=1\n")
			}
		}
	} else {
		for _, ft := range jobs {
			fmt.Fprintf(w, "\n[prep-tier%d]\n", ft.tier)
			fmt.Fprintf(w, "filename=%s\n", ft.file)
			fmt.Fprintf(w, "size=%d\n", ft.st.FileSize)
			fmt.Fprintf(w, "rw=write\nbs=%d\n", o.BlockSize)
		}
	}
	for i, ft := range jobs {
		fmt.Fprintf(w, "\n[replay-tier%d]\n", ft.tier)
		stonewall(i)
		fmt.Fprintf(w, "read_iolog=%s\n", o.LogPath(ft.tier, ReplayLog))
		fmt.Fprintf(w, "io_size=%d\n", ft.st.ReadBytes+ft.st.WriteBytes)
		if o.Speed == SpeedASAP {
			w.WriteString("replay_no_stall=1\n")
		}
		// fio's chunked reading (iolog.c: iolog_items_to_fetch) fetches
		// as many lines as the job consumed in the last second, less
		// those it still holds: a timed job, whose lines come slower,
		// gets none and ends early, without an error, its I/O part done.
		// So a timed job reads its log whole.
		if ft.st.Ops > limit && o.Speed == SpeedASAP {
			w.WriteString("read_iolog_chunked=1\n")
		}
	}
}

// batchSubmit reports whether the job batches its submissions: on an
// asynchronous engine, in an asap job only. fio waits for a timed line
// (iolog.c: iolog_delay) the line's delay less the time since its last
// submission, which batching holds back: the waits vanish, and a timed
// job of 1 s ran in 72 ms (TestFioRunsTimed fails with them).
func (o *FioOptions) batchSubmit() bool {
	return asyncEngines[o.Engine] && o.Speed == SpeedASAP
}

// writeTuning writes the [global] options that tune fio as its experts
// tune it, where that is safe on any Linux machine with fio 3.x (see
// writeTuningNotes): batched submissions and completions on an
// asynchronous engine, the buffers of IOMem, and FixedBufs where asked.
func (o *FioOptions) writeTuning(w *bufio.Writer) {
	if o.batchSubmit() {
		fmt.Fprintf(w, "iodepth_batch_submit=%d\n", o.IODepth)
	}
	if asyncEngines[o.Engine] {
		// fio reaps one completion a call by default.
		fmt.Fprintf(w, "iodepth_batch_complete_max=%d\n", o.IODepth)
	}
	fmt.Fprintf(w, "iomem=%s\n", o.IOMem)
	if o.FixedBufs {
		w.WriteString("fixedbufs=1\n")
	}
}

// writeTuningNotes writes the header's account of fio's tuning for a job
// of jobs tiers' jobs, which run side by side: what the job sets, and what
// it does not, and why.
func (o *FioOptions) writeTuningNotes(w *bufio.Writer, jobs int) {
	jobs = max(jobs, 1)
	pinned := formatSize(int64(o.IODepth) * o.BlockSize)
	// fio rounds a job's buffers (iodepth blocks and a page) up to huge
	// pages, and shmget a page more (fio's init_io_u_buffers,
	// allocate_io_mem).
	pages := int64(jobs) * ((int64(o.IODepth)*o.BlockSize+4096+hugePage-1)/hugePage + 1)
	var set, unset []string
	switch {
	case o.batchSubmit():
		set = append(set, "submissions and completions batched up to the iodepth (iodepth_batch_submit,\n"+
			"iodepth_batch_complete_max), as kvreplay's uring engine batches them")
	case asyncEngines[o.Engine]:
		set = append(set, "completions reaped up to the iodepth at once (iodepth_batch_complete_max)")
		unset = append(unset, "iodepth_batch_submit (batched submissions): fio times a line's wait from\n"+
			"the last submission, which batching holds back, and so stops waiting (a timed\n"+
			"job of 1 s ran in 72 ms)")
	default:
		unset = append(unset, "iodepth_batch_submit, iodepth_batch_complete_max (batching): ioengine="+o.Engine+"\n"+
			"is not one of fio's asynchronous engines (io_uring, libaio, posixaio)")
	}
	switch o.IOMem {
	case "shmhuge", "mmaphuge":
		at := "1 job"
		if jobs > 1 {
			at = strconv.Itoa(jobs) + " jobs"
		}
		set = append(set, fmt.Sprintf("iomem=%s: huge-page buffers; fio fails without %d free huge pages of 2 MiB\n"+
			"(%s at once, iodepth x %s each), reserved first, as root:\n"+
			"echo %d > /proc/sys/vm/nr_hugepages", o.IOMem, pages, at, formatSize(o.BlockSize), pages))
	default:
		set = append(set, "iomem="+o.IOMem+": buffers of the system's pages, which need no reservation")
		unset = append(unset, fmt.Sprintf("iomem=shmhuge (huge-page buffers, as kvreplay's are where transparent huge\n"+
			"pages are on): fio fails without %d free huge pages of 2 MiB, reserved first, as\n"+
			"root: echo %d > /proc/sys/vm/nr_hugepages; export with --iomem shmhuge", pages, pages))
	}
	switch {
	case o.FixedBufs:
		set = append(set, "fixedbufs=1 (io_uring's registered buffers): they pin "+pinned+" a job, which\n"+
			"RLIMIT_MEMLOCK (ulimit -l, 8 MiB by default since Linux 5.16) must allow a user\n"+
			"without CAP_IPC_LOCK, else fio fails (ENOMEM)")
	case o.Engine == "io_uring":
		unset = append(unset, "fixedbufs=1 (io_uring's registered buffers, kvreplay's where it can): they pin\n"+
			pinned+" a job, which RLIMIT_MEMLOCK (ulimit -l, 8 MiB by default since Linux\n"+
			"5.16) must allow a user without CAP_IPC_LOCK, else fio fails (ENOMEM): export\n"+
			"with --fixedbufs where it does")
	}
	if o.Engine == "io_uring" {
		unset = append(unset, "registerfiles=1, sqthread_poll=1: fio refuses registered files, which\n"+
			"sqthread_poll needs, for a job whose files an iolog opens",
			"hipri=1: polled completions need direct I/O and the drive's poll queues (the\n"+
				"nvme driver's poll_queues, 0 by default)")
	}
	w.WriteString(";\n; fio tuned as its experts tune it, where that is safe on any Linux machine:\n")
	writeItems(w, set)
	if len(unset) > 0 {
		// An asynchronous engine but io_uring, batched, on huge pages
		// leaves nothing out.
		w.WriteString("; Not set, and why:\n")
		writeItems(w, unset)
	}
}

// writeItems writes each item as a list item of the header, its lines
// ("\n" in it) indented under the first.
func writeItems(w *bufio.Writer, items []string) {
	for _, it := range items {
		w.WriteString(";   - " + strings.ReplaceAll(it, "\n", "\n;     ") + "\n")
	}
}

// ColdObject is an object a trace reads before any row puts it on a tier.
type ColdObject struct {
	Key  string
	Tier schema.Tier // the tier of its first read
	Size int64       // bytes, as the trace gives them
}

// ColdObjects reads a trace once and returns its cold objects in the order
// of their first reads, by the rule kvreplay's prescan applies
// (trace.ColdRead): a key whose first row is a Read. A key read after its
// Delete is not one: the replay (and the export's row) writes it again
// when the read comes.
func ColdObjects(r *trace.Reader) ([]ColdObject, error) {
	var rec schema.Record
	scan := coldScan{seen: map[string]struct{}{}}
	for {
		err := r.Read(&rec)
		if err == io.EOF {
			return scan.cold, nil
		}
		if err != nil {
			return scan.cold, fmt.Errorf("export: %w", err)
		}
		scan.add(&rec)
	}
}

// coldScan gathers a trace's cold objects, row by row.
type coldScan struct {
	seen map[string]struct{} // every key so far
	cold []ColdObject
}

func (c *coldScan) add(rec *schema.Record) {
	_, again := c.seen[string(rec.Key)]
	if !again {
		c.seen[string(rec.Key)] = struct{}{}
	}
	if trace.ColdRead(rec.Op, !again) {
		c.cold = append(c.cold, ColdObject{Key: string(rec.Key), Tier: rec.Tier, Size: rec.Size})
	}
}
