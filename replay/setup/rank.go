package setup

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/internal/launch"
	"github.com/kvbench/kvbench/schema"
)

// ForRank makes the paths of o and output (-o) this rank's: {rank} in -o,
// --dir and --device (launch.Template), and in the S3 prefix, below which
// each run has a prefix of its own (run-ID), so that ranks may share one
// or name theirs with {rank}. Several ranks writing their results into
// one stdout are refused.
func (o *Options) ForRank(r launch.Rank, output *string) []error {
	var errs []error
	for _, t := range []struct {
		flag string
		path *string
	}{{"-o", output}, {"--dir", &o.Dir}, {"--device", &o.Device}} {
		if p, err := launch.Template(t.flag, *t.path, r); err != nil {
			errs = append(errs, err)
		} else {
			*t.path = p
		}
	}
	o.S3.Prefix = strings.ReplaceAll(o.S3.Prefix, "{rank}", strconv.Itoa(r.Rank))
	if r.Ranks > 1 && (*output == "" || *output == "-") {
		errs = append(errs, fmt.Errorf("%d ranks would write their results into one stdout: give -o with {rank} (e.g. -o out.{rank}.json)", r.Ranks))
	}
	return errs
}

// CheckNames refuses a command line without a trace, and a file or
// directory named "" on it (given says which flags were), rather than
// taking it for stdin, stdout or the option left out: a trace, -o, --dir
// or barrier (--start-barrier).
func (o Options) CheckNames(traces []string, output, barrier string, given func(flag string) bool) []error {
	var errs []error
	if len(traces) == 0 {
		errs = append(errs, errors.New("no trace given (want one or more files, or - for stdin)"))
	}
	if slices.Contains(traces, "") {
		errs = append(errs, errors.New(`trace "": empty file name (want a file, or - for stdin)`))
	}
	if given("output") && output == "" {
		errs = append(errs, errors.New(`-o "": empty file name (want a file, or - for stdout)`))
	}
	// An empty --dir or --start-barrier is most often a variable that was
	// not set ("--dir $NVME"): taken as not given, the replay would
	// benchmark the system temp dir's disk, or ranks would start apart.
	if given("dir") && o.Dir == "" {
		errs = append(errs, errors.New(`--dir "": empty directory name (want a directory; leave --dir out for the system temp dir)`))
	}
	if given("start-barrier") && barrier == "" {
		errs = append(errs, errors.New(`--start-barrier "": empty directory name (want a directory the ranks share; leave --start-barrier out to start at once)`))
	}
	return errs
}

// CheckTrial refuses a trial number (--trial) that is negative, or that
// kvreport refuses in a result (schema.MaxTrial).
func CheckTrial(trial int) error {
	if trial < 0 {
		return fmt.Errorf("--trial %d: must not be negative (a trial number, 1, 2, ...)", trial)
	}
	if trial >= schema.MaxTrial {
		return fmt.Errorf("--trial %d: must be below %d (a trial number, 1, 2, ...; kvreport --aggregate mlperf reads trials 0 to %d)", trial, schema.MaxTrial, schema.MaxTrial-1)
	}
	return nil
}
