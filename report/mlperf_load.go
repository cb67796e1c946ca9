package report

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// LoadMLPerf reads the per-rank documents of a run for AggregateMLPerf.
// Each path is a directory (walked for .../trial_<T>/rank_<N>/*.json, under
// option_<O> directories or not; each rank directory holds the rank's one
// result, and two are an error: see loadRankDir), a file, a glob, or "-"
// for documents on stdin. A document's
// Option, trial and rank come from its path's option_<O>, trial_<T> and
// rank_<N> directories, else from the document (kvreplay --trial and
// --rank; the Option from a label that names one, such as option_1, else
// from the trace's sidecar, else the label); a kvreplay document in an
// option_<O> directory whose label or trace names another Option, or in a
// rank_<N> directory while it says it is another rank of a run of several,
// or in a trial_<T> directory while it says it is another trial (kvreplay
// --trial), is an error (ErrIncompatible). A kvcache_run_summary
// document is kept to be compared beside. In a walked directory a result
// file that cannot be read is recorded as missing (mlpstorage's rule); a
// file named on the command line that cannot be read is an error.
//
// Files are opened with open (os.Open when nil: kvreport's waits for a
// named pipe's writer under its signal context). LoadMLPerf checks ctx
// before each file and directory it reads, and returns ctx's error,
// wrapped, once it is done: a run of thousands of rank results stops at
// a signal.
func LoadMLPerf(ctx context.Context, paths []string, stdin io.Reader, open func(name string) (io.ReadCloser, error)) (*MLPerfRun, error) {
	if open == nil {
		open = func(name string) (io.ReadCloser, error) { return os.Open(name) }
	}
	rd := fileReader{ctx: ctx, open: open}
	run := newMLPerfRun()
	for _, p := range paths {
		if err := run.loadPath(rd, p, stdin); err != nil {
			return nil, err
		}
	}
	if len(run.Ranks) == 0 && len(run.Summaries) == 0 && len(run.Unreadable) == 0 && len(run.TrialDirs) == 0 {
		return nil, errors.New("report: no per-rank result document and no kvcache_run_summary given")
	}
	return run, nil
}

// fileReader reads LoadMLPerf's files through its open, each once ctx
// is checked.
type fileReader struct {
	ctx  context.Context
	open func(name string) (io.ReadCloser, error)
}

// done is ctx's error, wrapped, once it is done; nil before.
func (rd fileReader) done() error {
	if err := rd.ctx.Err(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// read reads the file name whole. Its error is done's once ctx is done,
// which callers tell from a file that cannot be read with errors.Is.
func (rd fileReader) read(name string) ([]byte, error) {
	if err := rd.done(); err != nil {
		return nil, err
	}
	f, err := rd.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f) // a file's error names it
}

// stopped reports whether err is ctx's: a signal, not a file that cannot
// be read.
func stopped(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// loadPath reads what one of LoadMLPerf's paths names into run: "-"
// (stdin), or each file or directory the path or glob gives.
func (run *MLPerfRun) loadPath(rd fileReader, p string, stdin io.Reader) error {
	if err := rd.done(); err != nil {
		return err
	}
	if p == "-" {
		if stdin == nil {
			return errors.New("report: -: no standard input")
		}
		raw, err := io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("report: -: %w", err)
		}
		return run.add("-", raw, false)
	}
	names, err := Expand(p)
	if err != nil {
		return err
	}
	for _, name := range names {
		st, err := os.Stat(name)
		if err != nil {
			return fmt.Errorf("report: %w", cli.FileError(err))
		}
		if st.IsDir() {
			err = run.loadDir(rd, name)
		} else {
			err = run.loadFile(rd, name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// loadFile reads a file named on the command line: one that cannot be
// read is an error, not a missing rank.
func (run *MLPerfRun) loadFile(rd fileReader, name string) error {
	raw, err := rd.read(name)
	if stopped(err) {
		return err
	}
	if err != nil {
		return fmt.Errorf("report: %w", cli.FileError(err))
	}
	return run.add(name, raw, false)
}

// loadDir walks a run's directory: each trial_<T> directory is a trial
// (whether a rank of it left a result or not), each rank_<N> directory
// holds the rank's one result (loadRankDir), and a JSON file at the top
// may be the run's kvcache_run_summary. It is an error when the walk finds
// none of these, so that a wrong directory is not a run with no ranks.
func (run *MLPerfRun) loadDir(rd fileReader, name string) error {
	found := 0
	err := filepath.WalkDir(name, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := rd.done(); err != nil {
			return err
		}
		if !e.IsDir() {
			if filepath.Dir(path) == filepath.Clean(name) && strings.HasSuffix(path, ".json") {
				return run.addTopSummary(rd, path)
			}
			return nil
		}
		base := filepath.Base(path)
		if m := optionDir.FindStringSubmatch(base); m != nil {
			run.optionDirs[m[1]] = parsemsg.Printable(path)
			return nil
		}
		if trialDir.MatchString(base) {
			o, t, _ := placeOf(path)
			if err := checkTrial(path, t); err != nil {
				return err
			}
			addTrialDir(run, o, t, parsemsg.Printable(path))
			return nil
		}
		if !rankDir.MatchString(base) {
			return nil
		}
		ok, err := run.loadRankDir(rd, path)
		if err != nil {
			return err
		}
		if ok {
			found++
		}
		return filepath.SkipDir
	})
	if err != nil {
		if strings.HasPrefix(err.Error(), "report: ") {
			return err // a document's own error, which names its file, or ctx's
		}
		return fmt.Errorf("report: %s: %w", parsemsg.Printable(name), cli.FileError(err))
	}
	if found == 0 && len(run.TrialDirs) == 0 && len(run.Summaries) == 0 {
		return fmt.Errorf("report: %s: no .../trial_<T>/rank_<N>/*.json result and no kvcache_run_summary in it", parsemsg.Printable(name))
	}
	return run.ranksPastSummary(name)
}

// ranksPastSummary refuses a rank directory of a rank that the run's
// kvcache_run_summary says it did not have (rank_4 of a run of 4 ranks):
// mlpstorage's aggregation never reads it (its ranks are its
// configuration's), and counting it would add a rank that this run did
// not run, another run's copied in.
func (run *MLPerfRun) ranksPastSummary(name string) error {
	ranks := 0
	for _, s := range run.Summaries {
		if s.TotalRanks > 0 && s.TotalRanks <= maxMLPerfRanks {
			ranks = max(ranks, s.TotalRanks)
		}
	}
	if ranks == 0 {
		return nil
	}
	past := func(rank int, path string) error {
		if rank < ranks {
			return nil
		}
		return fmt.Errorf("report: %s: rank %d's result, but the run's kvcache_run_summary says %d ranks (rank_0 to rank_%d): "+
			"mlpstorage never reads it, and it is no rank of this run; move it out of the run's directory", path, rank, ranks, ranks-1)
	}
	for _, rk := range run.Ranks {
		if err := past(rk.Rank, rk.Path); err != nil {
			return err
		}
	}
	for _, u := range run.Unreadable {
		if err := past(u.Rank, u.Path); err != nil {
			return err
		}
	}
	return nil
}

// addTopSummary keeps a file at the top of a run's directory when it is
// a kvcache_run_summary; any other file there, or a summary that does not
// decode, is not the run's and is left alone. The run's own summary says
// how many ranks and trials it had (mlpstorage's, from its configuration):
// ranks or trials none of whose results reached the directory (a remote
// host's, on a results directory that is not shared, Rules.md 6.3.3.4)
// are missing, not a smaller run.
func (run *MLPerfRun) addTopSummary(rd fileReader, path string) error {
	raw, err := rd.read(path)
	if err != nil {
		return err
	}
	if s, ok, err := decodeRunSummary(raw); ok && err == nil {
		run.Summaries[parsemsg.Printable(path)] = s
		if s.TotalRanks > 0 && s.TotalRanks <= maxMLPerfRanks {
			run.TotalRanks, run.rankDirs = max(run.TotalRanks, s.TotalRanks), max(run.rankDirs, s.TotalRanks)
		}
		if s.TrialsPerOption > 0 && s.TrialsPerOption <= maxMLPerfTrials {
			run.expectTrials = max(run.expectTrials, s.TrialsPerOption)
		}
	}
	return nil
}

// loadRankDir reads a rank_<N> directory, which holds the rank's one
// result: its one JSON file that may be a result (mayBeResult) and that
// mlpstorage would read (mlpstorageNamed: a kv-cache.py document by
// another name is passed over, and alone it leaves the rank missing, as
// mlpstorage leaves it), and found says there was one. One that does not decode is recorded as missing
// (mlpstorage's rule); one that cannot be read at all is recorded as
// missing too, with found false. Two such files are an error naming them:
// which one the aggregate took would decide the run's figures (mlpstorage
// takes whichever its glob lists first).
func (run *MLPerfRun) loadRankDir(rd fileReader, path string) (found bool, err error) {
	o, t, r := placeOf(path)
	if t >= 0 {
		if err := checkTrial(path, t); err != nil {
			return false, err
		}
		addTrialDir(run, o, t, parsemsg.Printable(filepath.Dir(path)))
	}
	run.TotalRanks = max(run.TotalRanks, r+1)
	run.rankDirs = max(run.rankDirs, r+1)
	files, _ := filepath.Glob(filepath.Join(path, "*.json"))
	slices.Sort(files)
	var results []rankFile
	var unnamed string // a kv-cache.py document mlpstorage's glob passes over
	for _, f := range files {
		raw, err := rd.read(f)
		if stopped(err) {
			return false, err
		}
		keys := keysOf(raw)
		if err == nil && !mayBeResult(raw, keys) {
			continue
		}
		if err == nil && !mlpstorageNamed(f, keys) {
			unnamed = cmp.Or(unnamed, f)
			continue
		}
		results = append(results, rankFile{path: f, raw: raw, err: err})
	}
	switch {
	case len(results) == 0 && unnamed != "":
		run.Unreadable = append(run.Unreadable, MLPerfUnreadable{Option: o, Trial: t, Rank: r, Path: parsemsg.Printable(path),
			Err: fmt.Errorf("%s is a kv-cache.py document not named %s, the only name mlpstorage's aggregation reads in a "+
				"rank's directory (rename it kvcache_results_<ts>.json, as mlpstorage's wrapper names it)", parsemsg.Printable(unnamed), mlpstorageResultGlob)})
		return false, nil
	case len(results) == 0:
		return false, nil
	case len(results) > 1:
		return false, twoResults(path, results)
	}
	f := results[0]
	if f.err != nil {
		run.Unreadable = append(run.Unreadable, MLPerfUnreadable{Option: o, Trial: t, Rank: r, Path: parsemsg.Printable(f.path), Err: cli.UnwrapPath(f.err)})
		return false, nil
	}
	n := len(run.Ranks) + len(run.Unreadable)
	if err := run.add(f.path, f.raw, true); err != nil {
		return false, err
	}
	return len(run.Ranks)+len(run.Unreadable) > n, nil
}

// mlpstorageResultGlob is the name mlpstorage's aggregation globs a
// rank's directory for (mlperf_wrapper.py writes kvcache_results_<ts>.json).
const mlpstorageResultGlob = "kvcache_results_*.json"

// mlpstorageNamed reports whether a rank directory's file, raw, is one
// that mlpstorage's aggregation would read: any file but a kv-cache.py
// document (kvbench's results, kvtrace's statistics, which are refused,
// and files cut short are kvbench's to read), and a kv-cache.py document
// named as mlpstorageResultGlob says. Another kv-cache.py document there
// mlpstorage passes over: the rank is missing.
func mlpstorageNamed(name string, keys *rankKeys) bool {
	if keys == nil || keys.Format != nil || keys.Kvbench != nil {
		return true
	}
	ok, _ := filepath.Match(mlpstorageResultGlob, filepath.Base(name))
	return ok
}

// rankKeys are the top-level members that say what a rank directory's
// JSON file is, found in any case: a result with a key in another case
// is one decode refuses (schema.CheckKeys), not a file to pass over.
type rankKeys struct {
	Format            json.RawMessage `json:"format"`
	Summary           json.RawMessage `json:"summary"`
	RequestsCompleted json.RawMessage `json:"requests_completed"`
	Kvbench           json.RawMessage `json:"kvbench"`
}

// keysOf reads raw's rankKeys, once for mayBeResult and mlpstorageNamed;
// nil when raw is not whole JSON.
func keysOf(raw []byte) *rankKeys {
	var k rankKeys
	if json.Unmarshal(raw, &k) != nil {
		return nil
	}
	return &k
}

// rankFile is a file of a rank directory that may be the rank's result:
// its bytes, or why they could not be read.
type rankFile struct {
	path string
	raw  []byte
	err  error
}

// mayBeResult reports whether a JSON file of a rank directory, raw with
// its keys (keysOf), may be the rank's result: a kvreplay result or a
// kv-cache.py document, or a file that is not whole JSON (a result cut
// short). A kvcache_run_summary, or JSON of any other kind (notes, a
// harness's metadata, which mlpstorage's aggregation never reads either),
// is not.
func mayBeResult(raw []byte, keys *rankKeys) bool {
	if keys == nil {
		return true
	}
	if _, ok, _ := decodeRunSummary(raw); ok {
		return false
	}
	return keys.Format != nil || keys.Summary != nil && keys.RequestsCompleted != nil
}

// twoResults is the error for a rank directory with several files that
// may be its result, naming each (and why one does not read).
func twoResults(dir string, files []rankFile) error {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = parsemsg.Printable(filepath.Base(f.path))
		switch {
		case f.err != nil:
			names[i] += " (" + cli.UnwrapPath(f.err).Error() + ")"
		case !json.Valid(f.raw):
			names[i] += " (not whole JSON: cut short?)"
		}
	}
	return fmt.Errorf("%s: %d result files, %s: a rank directory holds its rank's one result, and which one the aggregate took "+
		"would decide the run's figures: keep the rank's result there and move the others out", parsemsg.Printable(dir), len(files), strings.Join(names, " and "))
}

// add reads one file's documents into run: a kvcache_run_summary is kept
// to be compared, each result document is a rank (addRank). A file that
// does not decode is recorded as missing when walked is set (a file found
// in a run's directory, mlpstorage's rule), else it is an error.
func (run *MLPerfRun) add(name string, raw []byte, walked bool) error {
	if s, ok, err := decodeRunSummary(raw); ok {
		if err != nil {
			return fmt.Errorf("report: %s: %w", parsemsg.Printable(name), err)
		}
		run.Summaries[parsemsg.Printable(name)] = s
		return nil
	}
	docs, err := decodeStream(name, strings.NewReader(string(raw)))
	if err == nil {
		for _, d := range docs {
			if k := nullSection(d); k != "" {
				err = fmt.Errorf("report: %s: %s is null: no kv-cache.py run wrote it (a damaged document?); "+
					"mlpstorage counts such a rank's result missing", parsemsg.Printable(name), k)
			}
		}
	}
	if err != nil {
		if walked {
			o, t, r := placeOf(name)
			run.Unreadable = append(run.Unreadable, MLPerfUnreadable{Option: o, Trial: t, Rank: r, Path: parsemsg.Printable(name), Err: err})
			return nil
		}
		return err
	}
	for _, d := range docs {
		if err := run.addRank(name, d); err != nil {
			return err
		}
	}
	return nil
}

// nullSection is the section of a kv-cache.py document that the rule
// reads and that is null ("summary", "summary.cache_stats"); "" when
// none is. mlpstorage reads each with .get(), which a null fails: the
// rank's result is counted missing (missing_files, partial_failure), not
// added as zeros, as a document without the section is.
func nullSection(d *Doc) string {
	if d.Kind != KindReference {
		return ""
	}
	s, ok := d.Reference["summary"]
	if ok && s == nil {
		return "summary"
	}
	sm, _ := s.(map[string]any)
	if cs, ok := sm["cache_stats"]; ok && cs == nil {
		return "summary.cache_stats"
	}
	return ""
}

// addRank places a document read from the file name as a rank: its
// Option, trial and rank from the file's path, else from the document.
// Its errors name the document as d.Path does, printable.
func (run *MLPerfRun) addRank(name string, d *Doc) error {
	rk, err := rankFigures(d)
	if err != nil {
		return err
	}
	o, t, r := placeOf(name)
	shown := parsemsg.Printable(name)
	if o == "" {
		o = docOption(d)
	} else {
		// The rule would score one Option's workload as another's.
		own, from := ownOptions(d)
		for i := range own {
			if !sameOption(own[i], o) {
				return fmt.Errorf("report: %s: %w: it is in an option_%s directory, but %s names Option %s: "+
					"each Option's results go in its own option_<O> directory", shown, ErrIncompatible, o, from[i], own[i])
			}
		}
	}
	if t < 0 {
		t = d.Trial
	} else if own, ok := ownTrial(d); ok && own != t {
		// A trial says which it is (kvreplay --trial): in another
		// trial's directory it stands in for that trial (a result
		// copied or written to the wrong place), and the rule would
		// average it as that trial's.
		return fmt.Errorf("report: %s: %w: it is in a trial_%d directory, but it is trial %d (kvreplay --trial %d): "+
			"each trial's results go in its own trial_<T> directory", shown, ErrIncompatible, t, own, own)
	}
	if err := checkTrial(name, t); err != nil {
		return err
	}
	if r < 0 {
		r = d.Rank
	} else if d.Kind == KindKVReplay && d.Result != nil && d.Result.Ranks > 1 && len(d.Result.MergedRanks) == 0 && d.Result.Rank != r {
		// A rank of a run of several says which it is (kvreplay --rank,
		// or its launcher's): in another rank's directory it stands in
		// for that rank (another trial's result filling a missing one),
		// and the rule would add it as that rank's.
		return fmt.Errorf("report: %s: %w: it is in a rank_%d directory, but it is rank %d of its run of %d (kvreplay --rank): "+
			"each rank's result goes in its own rank_<N> directory", shown, ErrIncompatible, r, d.Result.Rank, d.Result.Ranks)
	}
	rk.Option, rk.Trial, rk.Rank = o, t, r
	// The rule takes one document a rank (of each kind, which aggregate
	// apart): another would be dropped without a word (two systems' runs
	// given together). One file reached twice (a directory and a file in
	// it) is read once.
	if i := slices.IndexFunc(run.Ranks, func(x MLPerfRank) bool { return x.Option == o && x.Trial == t && x.Rank == r && x.Kind == rk.Kind }); i >= 0 {
		if samePathFile(run.Ranks[i].Path, rk.Path) {
			return nil
		}
		return fmt.Errorf("report: %s and %s: %w: both are rank %d of trial %d of Option %q: aggregate one run at a time, "+
			"its documents in option_<O>/trial_<T>/rank_<N>/ or told apart by kvreplay --trial and --rank", run.Ranks[i].Path, rk.Path, ErrIncompatible, r, t, o)
	}
	// One rank's result of one run at two places (copied into another
	// trial's or rank's directory) would count twice.
	if i := slices.IndexFunc(run.Ranks, func(x MLPerfRank) bool {
		return x.result != nil && rk.result != nil && x.result.Rank == rk.result.Rank && sameRun(x.result, rk.result)
	}); i >= 0 {
		x := run.Ranks[i]
		return fmt.Errorf("report: %s and %s: %w: both are the result of rank %d of one run (on %s, started %s), placed as trial %d rank %d and trial %d rank %d: "+
			"a copy would count it twice; keep the one where its run wrote it", x.Path, rk.Path, ErrIncompatible, x.result.Rank, x.Host,
			x.when.Format(time.RFC3339Nano), x.Trial, x.Rank, t, r)
	}
	if rk.when.IsZero() && name != "-" {
		if st, err := os.Stat(name); err == nil {
			rk.when = st.ModTime()
		}
	}
	if name != "-" {
		rk.runDatetime = runDatetime(name)
	}
	run.Ranks = append(run.Ranks, rk)
	addTrialDir(run, o, t, "")
	if d.Result != nil && d.Kind == KindKVReplay {
		run.TotalRanks = max(run.TotalRanks, d.Result.Ranks)
	}
	run.TotalRanks = max(run.TotalRanks, r+1)
	return nil
}

// checkTrial refuses a trial number, of the document or directory at
// path, that no run has: below 0 or from maxMLPerfTrials, whose trials
// missingTrials would name one by one (a document of trial 50000000
// took 22 GB).
func checkTrial(path string, t int) error {
	if t < 0 || t >= maxMLPerfTrials {
		return fmt.Errorf("report: %s: trial %d: want 0 to %d (a run's trials are numbered from 0 or 1: kvreplay --trial, trial_<T>)",
			parsemsg.Printable(path), t, maxMLPerfTrials-1)
	}
	return nil
}

// ownTrial is the trial a kvreplay document says it is (kvreplay
// --trial), and whether it says: a trial other than 0, or 0 given on its
// command line (a document without --trial holds 0 too, and says
// nothing). Other documents say nothing.
func ownTrial(d *Doc) (int, bool) {
	if d.Kind != KindKVReplay || d.Result == nil {
		return 0, false
	}
	r := d.Result
	if r.Trial != 0 {
		return r.Trial, true
	}
	for _, a := range r.CommandLine {
		if a == "--" {
			break // operands follow
		}
		if a == "--trial" || strings.HasPrefix(a, "--trial=") {
			return 0, true
		}
	}
	return 0, false
}

// samePathFile reports whether paths a and b name one file ("-", stdin,
// is never the same as another).
func samePathFile(a, b string) bool {
	if a == "-" || b == "-" {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// docOption is the Option a document names itself, for one whose path has
// no option_<O> directory: a label that names one (option_1), else the
// Option its trace was made for, else its label, else "unknown".
func docOption(d *Doc) string {
	if o := labelOption(d.Label); o != d.Label {
		return o
	}
	if d.Result != nil {
		if o := traceOption(d.Result); o != "" {
			return o
		}
	}
	if d.Label != "" {
		return d.Label
	}
	return "unknown"
}

// ownOptions are the Options a kvreplay document names itself, each
// with what names it: its label, when it names one (mlperf-option.sh's
// --label option_O), and its trace's sidecar (traceOption); none for a
// document that names no Option, or of another kind.
func ownOptions(d *Doc) (options, from []string) {
	if d.Kind != KindKVReplay || d.Result == nil {
		return nil, nil
	}
	if o := labelOption(d.Label); o != d.Label {
		options, from = append(options, o), append(from, fmt.Sprintf("its label %q", d.Label))
	}
	if o := traceOption(d.Result); o != "" {
		options, from = append(options, o), append(from, "its trace's sidecar (kvtrace --mlperf-option, or Table KVCache-1's parameters)")
	}
	return options, from
}

// sameOption reports whether two Options' names are one Option: equal
// numbers (option_01 is Option 1), else equal names.
func sameOption(a, b string) bool {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return x == y
	}
	return a == b
}

// optionDir, trialDir and rankDir name the directories of the layout
// mlpstorage and kvbench's Option runner write.
var (
	optionDir = regexp.MustCompile(`^option_?(\d{1,6})$`)
	trialDir  = regexp.MustCompile(`^trial_?(\d{1,6})$`)
	rankDir   = regexp.MustCompile(`^rank_?(\d{1,6})$`)
)

// IsRankDir reports whether a directory's name is a rank's, rank_<N>, in
// which the MLPerf aggregation reads each .json file as the rank's
// result (loadRankDir).
func IsRankDir(name string) bool { return rankDir.MatchString(name) }

// placeOf reads the option_<O>, trial_<T> and rank_<N> directories of a
// path, the layout mlpstorage and kvbench's Option runner write
// (.../option_<O>/trial_<T>/rank_<N>/result.json); -1 for what is absent.
func placeOf(path string) (option string, trial, rank int) {
	trial, rank = -1, -1
	for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(path)), "/") {
		part = strings.TrimSuffix(part, ".json") // trial_0/rank_1.json too
		if m := optionDir.FindStringSubmatch(part); m != nil {
			option = m[1]
		} else if m := trialDir.FindStringSubmatch(part); m != nil {
			trial, _ = strconv.Atoi(m[1])
		} else if m := rankDir.FindStringSubmatch(part); m != nil {
			rank, _ = strconv.Atoi(m[1])
		}
	}
	return option, trial, rank
}

// datedRunDir matches a run directory named by its run's date and time,
// as mlpstorage names its runs (.../run/20260704_140000) and
// bench/mlperf-option.sh its own (kvbench_mlperf_20260704_140000).
var datedRunDir = regexp.MustCompile(`(?:^|_)(\d{8}_\d{6})$`)

// runDatetime is the date and time (mlperfTimeLayout) its run directory
// names for a result file: the directory above its option_<O> (else its
// trial_<T>) directory, when that is named by a valid one; "" otherwise.
func runDatetime(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(abs), "/")
	i := slices.IndexFunc(parts, optionDir.MatchString)
	if i < 0 {
		i = slices.IndexFunc(parts, trialDir.MatchString)
	}
	if i < 1 {
		return ""
	}
	m := datedRunDir.FindStringSubmatch(parts[i-1])
	if m == nil {
		return ""
	}
	if _, err := time.Parse(mlperfTimeLayout, m[1]); err != nil {
		return ""
	}
	return m[1]
}

// labelOption is the Option a label names ("option_1", "option-2",
// "opt3"), else the label itself.
func labelOption(label string) string {
	l := strings.ToLower(label)
	for _, p := range []string{"option", "opt"} {
		if rest, ok := strings.CutPrefix(l, p); ok {
			rest = strings.TrimLeft(rest, "_- ")
			if _, err := strconv.Atoi(rest); err == nil && rest != "" {
				return rest
			}
		}
	}
	return label
}

// decodeRunSummary decodes an mlpstorage kvcache_run_summary document; ok
// is false for any other document.
func decodeRunSummary(raw []byte) (s *MLPerfRunSummary, ok bool, err error) {
	var probe struct {
		SchemaVersion *string         `json:"schema_version"`
		Options       json.RawMessage `json:"options"`
	}
	if json.Unmarshal(raw, &probe) != nil || probe.SchemaVersion == nil || probe.Options == nil {
		return nil, false, nil
	}
	s = &MLPerfRunSummary{}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, true, fmt.Errorf("a kvcache_run_summary document: %w", err)
	}
	if err := schema.CheckKeys(raw, s); err != nil {
		return nil, true, fmt.Errorf("a kvcache_run_summary document: %w", err)
	}
	if major, _, _ := strings.Cut(s.SchemaVersion, "."); major != "1" {
		return nil, true, fmt.Errorf("a kvcache_run_summary of schema_version %q: this kvreport reads 1.x", s.SchemaVersion)
	}
	if err := checkRunSummary(s); err != nil {
		return nil, true, fmt.Errorf("a kvcache_run_summary: %w", err)
	}
	return s, true, nil
}

// checkRunSummary refuses a run summary whose counts or figures no run
// gives: a count below 0, an Option that is null, an Option's bandwidth,
// throughput or device p95 that is not a number from 0 to maxFigure
// (ruleFigure). The first found, the Options in order.
func checkRunSummary(s *MLPerfRunSummary) error {
	count := func(name string, v int) error {
		if v < 0 {
			return fmt.Errorf("%s is %d: want 0 or more", name, v)
		}
		return nil
	}
	errs := []error{count("total_ranks", s.TotalRanks), count("host_count", s.HostCount), count("npernode", s.Npernode),
		count("trials_per_option", s.TrialsPerOption)}
	for _, k := range optionKeys(s.Options) {
		o := s.Options[k]
		if o == nil {
			errs = append(errs, fmt.Errorf("options.%s is null: want an Option's figures", k))
			continue
		}
		at := "options." + k + "."
		errs = append(errs, ruleFigure(at+"aggregated_read_bandwidth_gbps", o.AggregatedReadBandwidthGBps),
			ruleFigure(at+"aggregated_write_bandwidth_gbps", o.AggregatedWriteBandwidthGBps),
			ruleFigure(at+"aggregated_avg_throughput_tokens_per_sec", o.AggregatedAvgThroughputTokensPerSec),
			ruleFigure(at+"aggregated_storage_throughput_tokens_per_sec", o.AggregatedStorageThroughputTokensPerSec),
			count(at+"rank_count", o.RankCount), count(at+"trial_count", o.TrialCount))
		if v := o.AggregatedDeviceReadP95MS; v != nil {
			errs = append(errs, ruleFigure(at+"aggregated_device_read_p95_ms", *v))
		}
		if v := o.AggregatedDeviceWriteP95MS; v != nil {
			errs = append(errs, ruleFigure(at+"aggregated_device_write_p95_ms", *v))
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// rankFigures takes from a document what the rule reads: for a
// kv-cache.py document, mlpstorage's keys (referenceFigures); for a
// kvreplay document, its summary's figures of the same names
// (kvreplayFigures). Any other document is not a measurement.
func rankFigures(d *Doc) (MLPerfRank, error) {
	rk := MLPerfRank{Path: d.Path, Kind: d.Kind, ranks: 1}
	switch d.Kind {
	case KindReference:
		if err := referenceFigures(&rk, d.Reference); err != nil {
			return rk, fmt.Errorf("report: %s: %w", d.Path, err)
		}
	case KindKVReplay:
		if err := kvreplayFigures(&rk, d.Result); err != nil {
			return rk, fmt.Errorf("report: %s: %w", d.Path, err)
		}
	default:
		return rk, fmt.Errorf("report: %s: a %s document is a simulation, not a measurement: the MLPerf aggregation takes kvreplay results and kv-cache.py --output documents", d.Path, d.Kind)
	}
	return rk, nil
}

// referenceFigures sets rk from a kv-cache.py document by mlpstorage's
// keys (summary.cache_stats.tier_storage_{read,write}_bandwidth_gbps,
// storage_{read,write}_device_p95_ms and storage_entries;
// summary.avg_throughput_tokens_per_sec and
// storage_throughput_tokens_per_sec), a missing key as 0.0 as mlpstorage
// reads it. storage_entries 0 marks a rank that never reached storage. A
// key present that holds no number from 0 to maxFigure is an error: the
// rule would sum it (a negative) or mlpstorage fail on it (not a number).
func referenceFigures(rk *MLPerfRank, doc map[string]any) error {
	s, _ := doc["summary"].(map[string]any)
	cs, _ := s["cache_stats"].(map[string]any)
	var err error
	f := func(m map[string]any, where, k string) float64 {
		x, ok := m[k]
		if !ok || err != nil {
			return 0
		}
		v, isNum := x.(float64)
		if !isNum {
			err = fmt.Errorf("%s%s is %s: want a number (a damaged document?)", where, k, jsonText(x))
			return 0
		}
		err = ruleFigure(where+k, v)
		return v
	}
	rk.ReadBandwidthGBps = f(cs, "summary.cache_stats.", "tier_storage_read_bandwidth_gbps")
	rk.WriteBandwidthGBps = f(cs, "summary.cache_stats.", "tier_storage_write_bandwidth_gbps")
	rk.AvgThroughputTokensPerSec = f(s, "summary.", "avg_throughput_tokens_per_sec")
	rk.StorageThroughputTokensPerSec = f(s, "summary.", "storage_throughput_tokens_per_sec")
	rk.DeviceReadP95MS = f(cs, "summary.cache_stats.", "storage_read_device_p95_ms")
	rk.DeviceWriteP95MS = f(cs, "summary.cache_stats.", "storage_write_device_p95_ms")
	if l, ok := s["storage_io_latency_ms"].(map[string]any); ok {
		rk.RequestP95MS = f(l, "summary.storage_io_latency_ms.", "p95")
	}
	if v, ok := cs["storage_entries"].(float64); ok && v == 0 {
		rk.CPUTier = true
	}
	for _, k := range []struct {
		key string
		bw  float64
	}{{"storage_read_device_p95_ms", rk.ReadBandwidthGBps}, {"storage_write_device_p95_ms", rk.WriteBandwidthGBps}} {
		if _, ok := cs[k.key]; !ok && k.bw > 0 {
			rk.noDevice = append(rk.noDevice, k.key)
		}
	}
	return err
}

// jsonText is a JSON value as the document has it, for a message,
// printable (JSON holds U+202E, U+2028 as they are).
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return parsemsg.Printable(fmt.Sprint(v))
	}
	return parsemsg.Printable(string(b))
}

// ruleFigure checks a figure the rule reads (a bandwidth in GB/s or
// GiB/s, a throughput in tokens/s, a latency in ms): a number from 0 to
// maxFigure, as the figures kvreport reads from a kv-cache.py document
// are. Any other is no run's: the rule would sum a negative, or a
// damaged document's billions, without a word.
func ruleFigure(name string, v float64) error { return boundedFigure(name, v, maxFigure) }

// checkSummary refuses a kvreplay result whose figures the rule reads
// are not a run's (ruleFigure), or, of format 3, whose summary's Tier-2
// bandwidths are not its own Tier-2 bytes over its run (its tiers'
// offered loads, from which kvreplay computes them): a damaged or edited
// document, whose views would differ without a word. Formats 1 and 2
// wrote them in GiB/s for a while (storageOffered).
func checkSummary(r *schema.Result) error {
	s := r.Summary
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"tier_storage_read_bandwidth_gbps", s.TierStorageReadBandwidthGBps},
		{"tier_storage_write_bandwidth_gbps", s.TierStorageWriteBandwidthGBps},
		{"storage_throughput_tokens_per_sec", s.StorageThroughputTokensPerSec},
		{"storage_read_device_p95_ms", s.StorageReadDeviceP95MS},
		{"storage_write_device_p95_ms", s.StorageWriteDeviceP95MS},
		{"storage_io_latency_ms.p95", s.StorageIOLatencyMS.P95},
	} {
		if err := ruleFigure("summary."+f.name, f.v); err != nil {
			return err
		}
	}
	if r.FormatVersion < 3 {
		return nil
	}
	read, write := storageOffered(r)
	for _, f := range []struct {
		name, op, key string
		got, want     float64
	}{
		{"tier_storage_read_bandwidth_gbps", "read", "read_offered_bytes_per_s", s.TierStorageReadBandwidthGBps, read},
		{"tier_storage_write_bandwidth_gbps", "wrote", "write_offered_bytes_per_s", s.TierStorageWriteBandwidthGBps, write},
	} {
		if math.Abs(f.got-f.want) > 1e-9*math.Max(f.got, f.want)+1e-12 {
			return fmt.Errorf("summary.%s is %g, but its Tier-2 %s %g GB/s over its run (tiers[].%s): "+
				"a summary that is not its document's data (a damaged or edited document?)", f.name, f.got, f.op, f.want, f.key)
		}
	}
	return nil
}

// storageOffered is a kvreplay result's Tier-2 read and write offered
// loads, its Tier-2 bytes over its run, in GB/s: the figures its
// summary's tier_storage_{read,write}_bandwidth_gbps give, in the one
// unit of every format. Documents of format 1, and of format 2 until
// kvbench 3fa26f6, wrote those in GiB/s (kv-cache.py's unit), which the
// rule would add as GB/s, 6.9 % low.
func storageOffered(r *schema.Result) (read, write float64) {
	for _, t := range r.Tiers {
		if t.Tier == schema.TierNVMe.String() {
			read, write = t.ReadOfferedBps/results.GB, t.WriteOfferedBps/results.GB
		}
	}
	return read, write
}

// kvreplayFigures sets rk from a kvreplay result: its summary's figures
// of mlpstorage's names (its storage bandwidths from its Tier-2 data in
// decimal GB/s: storageOffered), zeros for a rank that kept its
// working set in memory, and the device p95s recomputed by today's rule
// from its Tier-2 cells and device latency (tier2Latency), whatever
// version wrote it. A merged document of several ranks is
// refused. kvreplay documents have no
// avg_throughput_tokens_per_sec (0, as a missing key).
func kvreplayFigures(rk *MLPerfRank, r *schema.Result) error {
	if len(r.MergedRanks) > 1 {
		// Its figures are its ranks' together, over their common window:
		// counted as one rank, the rule would take them for one client's
		// and count the others missing.
		return fmt.Errorf("%w: a merged document of %s (kvreport merge): the rule sums each rank's own figures: "+
			"aggregate the ranks' own documents", ErrIncompatible, rankList(r.MergedRanks))
	}
	if err := checkSummary(r); err != nil {
		return err
	}
	s := r.Summary
	rk.result, rk.when, rk.Host, rk.ranks = r, r.Started, r.Host.Hostname, r.Ranks
	rk.ReadBandwidthGBps, rk.WriteBandwidthGBps = storageOffered(r)
	rk.StorageThroughputTokensPerSec = s.StorageThroughputTokensPerSec
	// The device p95s by today's rule, as the summary takes them (of the
	// reference's phases; the cells' latency from submission where the
	// document has no device latency), so that a document written before
	// a change of the rule is scored as a new one is.
	rl, wl, err := tier2Latency(r.Cells, r.Device)
	if err != nil {
		return err
	}
	rk.DeviceReadP95MS, rk.DeviceWriteP95MS = rl.P95US/1000, wl.P95US/1000
	rk.RequestP95MS = s.StorageIOLatencyMS.P95
	rk.CPUTier = keptInMemory(r)
	if rk.CPUTier {
		rk.ReadBandwidthGBps, rk.WriteBandwidthGBps, rk.DeviceReadP95MS, rk.DeviceWriteP95MS = 0, 0, 0, 0
	}
	return nil
}

// keptInMemory reports whether a kvreplay rank kept its working set in
// RAM: its Tier-2 ran in memory (kvreplay --tier-map Tier-2=ram, or
// --fit's), or a whole run never used it. It reached no storage, and its
// storage figures are zeros.
func keptInMemory(r *schema.Result) bool {
	var storageOps int64
	tier2, inMemory := false, true
	for _, t := range r.Tiers {
		if t.Tier == schema.TierNVMe.String() {
			tier2 = true
			storageOps += t.ReadOps + t.WriteOps
			for _, b := range strings.Split(t.Backend, ",") {
				inMemory = inMemory && memoryBackend(b)
			}
		}
	}
	if tier2 && inMemory {
		return true
	}
	// No Tier-2 operation: a whole run's working set stayed in memory,
	// but a run cut short (one stopped before its clock, writing its cold
	// objects, has no tier at all) measured nothing, and is an incomplete
	// rank, not a CPU-tier one.
	return storageOps == 0 && r.Complete
}

// memoryBackend reports whether a kvreplay backend is memory, not
// storage: a Tier-2 on it keeps the working set in memory.
func memoryBackend(name string) bool {
	switch name {
	case "ram", "gpu", "null":
		return true
	}
	return false
}

// IsRunSummary reports whether r holds an mlpstorage kvcache_run_summary
// document (its first megabyte, decoded).
func IsRunSummary(r io.Reader) bool {
	raw, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return false
	}
	_, ok, _ := decodeRunSummary(raw)
	return ok
}

// traceOption is the MLPerf Option a kvreplay result's trace was made
// for, from the trace's sidecar: kvtrace's --mlperf-option N on its
// command line, else the one Option whose model, GPU and CPU tiers and
// --max-concurrent-allocs its configuration has (users and duration may
// be scaled); "" when neither says.
func traceOption(r *schema.Result) string {
	found := ""
	for _, t := range r.Traces {
		var meta struct {
			CommandLine []string `json:"command_line"`
			Config      struct {
				Model               string  `json:"model"`
				GPUMemGB            float64 `json:"gpu_mem_gb"`
				CPUMemGB            float64 `json:"cpu_mem_gb"`
				MaxConcurrentAllocs int     `json:"max_concurrent_allocs"`
			} `json:"config"`
		}
		if len(t.Meta) == 0 || json.Unmarshal(t.Meta, &meta) != nil {
			return ""
		}
		o := ""
		for i, a := range meta.CommandLine {
			if v, ok := strings.CutPrefix(a, "--mlperf-option="); ok {
				o = v
			} else if a == "--mlperf-option" && i+1 < len(meta.CommandLine) {
				o = meta.CommandLine[i+1]
			}
		}
		if o == "" {
			c := meta.Config
			for _, x := range schema.MLPerfOptions() {
				if c.Model == x.Model && c.GPUMemGB == x.GPUMemGB && c.CPUMemGB == x.CPUMemGB && c.MaxConcurrentAllocs == x.MaxConcurrentAllocs {
					o = strconv.Itoa(x.Number)
				}
			}
		}
		if o == "" || found != "" && o != found {
			return ""
		}
		found = o
	}
	return found
}
