package report

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/schema"
)

// Doc is one input document with its labels.
type Doc struct {
	// Path is where it was read from ("-" for stdin, with an index),
	// made printable (parsemsg.Printable) as the document's text is: it names the
	// document in errors and reports, and is not for opening.
	Path string
	// Kind is "kvreplay" for a kvreplay result, "kv-cache.py" for the
	// reference's --output JSON, "kvtrace" for kvtrace's simulated
	// statistics (its --output, in the reference's dialect).
	Kind string
	// Label names the group the document belongs to (a system and
	// configuration); Trial and Rank place it within the group.
	Label  string
	System string
	Config string
	Trial  int
	Rank   int
	// Result is the document (a reference document is mapped onto the
	// fields that mean the same; see Metrics for what is missing).
	Result *schema.Result
	// Reference holds a kv-cache.py document as it was read.
	Reference map[string]any
	// Values are the metrics a kv-cache.py document has (metric name ->
	// value); nil for kvreplay documents, whose metrics come from their
	// merged trial.
	Values map[string]float64
}

// Metric is a figure reports compare: its name, unit, and which way is
// better.
type Metric struct {
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Better string `json:"better"` // "higher" or "lower"
}

// Stats summarise a metric across the trials of a group.
type Stats struct {
	N      int
	Median float64
	Mean   float64
	Min    float64
	Max    float64
	StdDev float64
	CV     float64 // StdDev / Mean
	P95    float64
}

// Group is the documents of one label: the ranks of each trial merged
// exactly, and each metric's value per trial with its statistics. A metric
// a document does not have is absent from Values, never zero.
type Group struct {
	Label  string
	Docs   []*Doc
	Trials []*schema.Result // one merged document per trial
	// TrialIDs are the trial numbers of Trials; TrialValues the metrics of
	// each (metric name -> value, missing metrics absent), index for index.
	TrialIDs    []int
	TrialValues []map[string]float64
	Values      map[string][]float64 // metric name -> value per trial that has it
	Stats       map[string]Stats     // metric name -> statistics over trials
	Health      []string             // storage_health overall status per trial
	// Warnings are what the group's results warn of (a scaled run,
	// buffered I/O, a trial stopped early, other traces than the
	// baseline's); the Report's Warnings carry each too, naming the group.
	Warnings []string
	// Simulated is set for a group of kvtrace's statistics: a simulation,
	// not a measurement, which every format marks and no comparison with
	// a measured group uses.
	Simulated bool
	// NotMeasured holds, by trial number, why a trial of kvreplay's is
	// not a measurement (results.NotAMeasurement: cut short, or
	// operations failed): every format marks the group so, and no ratio
	// or win rate is computed against it, nor against it as a baseline.
	NotMeasured map[int]string
}

// note is what every format adds to g's label when its figures are not a
// measurement: kvtrace's simulation ("simulated (kvtrace): not a
// measurement"), or trials of a run cut short or with failed operations
// ("not a measurement: trial 2"); "" when they are one.
func (g *Group) note() string {
	switch {
	case g.Simulated:
		return simulatedNote
	case len(g.NotMeasured) > 0:
		ids := slices.Sorted(maps.Keys(g.NotMeasured))
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = strconv.Itoa(id)
		}
		what := "trial "
		if len(ids) > 1 {
			what = "trials "
		}
		return notMeasurementNote + ": " + what + strings.Join(s, ", ")
	}
	return ""
}

// notMeasurementNote marks a group of a run that is not a measurement.
const notMeasurementNote = "not a measurement"

// labelNoted is g's label with its note, if any: "sysA (not a
// measurement: trial 1)".
func (g *Group) labelNoted() string {
	if n := g.note(); n != "" {
		return g.Label + " (" + n + ")"
	}
	return g.Label
}

// measurement reports whether g's figures are a measurement: neither
// simulated nor of a trial that is not one (the default baseline is one).
func (g *Group) measurement() bool { return !g.Simulated && !g.cutShort() }

// cutShort reports whether a trial of g is not a measurement (cut short,
// or with failed operations: Group.NotMeasured): such a group is
// compared with no other.
func (g *Group) cutShort() bool { return len(g.NotMeasured) > 0 }

// TrialID is the trial number of g.Trials[i]: its TrialIDs entry, or i+1
// where a group was built without them.
func (g *Group) TrialID(i int) int {
	if i < len(g.TrialIDs) {
		return g.TrialIDs[i]
	}
	return i + 1
}

// Comparison is the ratio of each metric of every group to the baseline
// group's, with the win rate over matched trials.
type Comparison struct {
	Baseline string
	Rows     []ComparisonRow
}

// ComparisonRow is one metric compared across groups.
type ComparisonRow struct {
	Metric   Metric
	Baseline float64            // the baseline's median; NaN when missing
	Medians  map[string]float64 // group label -> median; missing groups absent
	Ratios   map[string]float64 // group label -> median / baseline median
	WinRate  map[string]float64 // group label -> share of matched trials better than the baseline
}

// Report is what the renderers render. Warnings are every warning of the
// report, each naming the group it belongs to; every renderer shows them.
type Report struct {
	Metrics    []Metric
	Groups     []*Group
	Comparison *Comparison
	Warnings   []string
}
