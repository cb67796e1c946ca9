package export

import (
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/schema"
)

// NoRowsError is the error of an export asked for a tier on which the
// trace has no rows: its output would measure nothing there (a fio job
// with no I/O on the tier, an op-log without its operations), so Fio and
// Sai3 refuse it once the trace is read, rather than write it. It wraps
// nothing: it is the user's choice of tiers that does not fit the trace.
type NoRowsError struct {
	// Trace names the trace (its reader's Name; "-" is stdin).
	Trace string
	// Output names what would have done no I/O there: "fio job", "op-log".
	Output string
	// Empty are the tiers asked for that have no rows, in the order given.
	Empty []schema.Tier
	// Rows counts the trace's rows on each tier.
	Rows [schema.NumTiers]int64
}

func (e *NoRowsError) Error() string {
	var b strings.Builder
	empty := tierList(e.Empty)
	fmt.Fprintf(&b, "export: --tiers %s: %s has no %s rows, so its %s would do no I/O there", empty, traceName(e.Trace), strings.ReplaceAll(empty, ",", " or "), e.Output)
	var have []schema.Tier
	var counts []string
	for t, n := range e.Rows {
		if n > 0 {
			have = append(have, schema.Tier(t))
			counts = append(counts, fmt.Sprintf("%s (%d rows)", schema.Tier(t), n))
		}
	}
	if len(have) == 0 {
		b.WriteString("; the trace has no rows at all")
		return b.String()
	}
	fmt.Fprintf(&b, "; its rows are on %s: export those (--tiers %s)", strings.Join(counts, ", "), tierList(have))
	return b.String()
}

// checkRows returns a *NoRowsError when a tier of tiers has no rows among
// rows, the trace's rows by tier; nil otherwise.
func checkRows(trace, output string, tiers []schema.Tier, rows *[schema.NumTiers]int64) error {
	var empty []schema.Tier
	for _, t := range tiers {
		if rows[t] == 0 {
			empty = append(empty, t)
		}
	}
	if len(empty) == 0 {
		return nil
	}
	return &NoRowsError{Trace: trace, Output: output, Empty: empty, Rows: *rows}
}

// tierList renders tiers as --tiers takes them: "Tier-1,Tier-2".
func tierList(tiers []schema.Tier) string {
	s := make([]string, len(tiers))
	for i, t := range tiers {
		s[i] = t.String()
	}
	return strings.Join(s, ",")
}

// traceName names a trace in a message: by its file name, or as the one
// on stdin.
func traceName(name string) string {
	switch name {
	case "":
		return "the trace"
	case "-":
		return "the trace on stdin"
	}
	return "trace " + name
}
