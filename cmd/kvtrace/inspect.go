package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/trace"
)

const inspectUsage = `kvtrace inspect: summarise traces, kvbench's or the reference kv-cache.py's.

Usage:
  kvtrace inspect [--json] TRACE...

TRACE is a file, plain or zstd (detected by content), or "-" for stdin. The
sidecar TRACE.meta.json is shown when present.

--json writes one JSON object per trace, in order, with these stable keys:
  file, compressed, columns, time_base ("epoch" or "virtual"), epoch_start,
  rows, start_s, end_s, span_s, out_of_order (rows earlier than the row
  before them), objects (distinct keys), requests (distinct Request values),
  totals {read_rows, write_rows, delete_rows, read_bytes, write_bytes},
  by_op_tier_phase [{op, tier, phase, rows, bytes}] (cells that occur),
  object_size_bytes {min, p50, p95, max, mean} (over distinct keys),
  cold_reads and cold_read_keys (reads of keys never written before them),
  size_mismatch_keys, evict {pairs, adjacent, non_adjacent, unpaired_reads,
  unpaired_writes, moves {"Tier-0->Tier-1": n, ...}}, meta (the sidecar).

Examples:
  kvtrace inspect run.csv.zst
  kvtrace inspect --json a.csv b.csv.zst | jq -r '[.file, .rows] | @tsv'
  kvtrace --num-users 10 --duration 30 -o - | kvtrace inspect -
`

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("kvtrace inspect", inspectUsage, stderr)
	cli.AddStandard(fs)
	asJSON := fs.Bool("json", false, "write JSON (one object per trace) instead of text")
	files, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return cli.Usagef("inspect: no trace given (want one or more files, or - for stdin)")
	}
	for i, name := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		s, err := inspect(ctx, name)
		if err != nil {
			return err
		}
		short := shortOfSidecar(s)
		if short != "" {
			fmt.Fprintf(stderr, "kvtrace: warning: %s: %s\n", name, short)
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			err = enc.Encode(s)
		} else {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			err = s.WriteText(stdout)
			if err == nil && short != "" {
				_, err = fmt.Fprintf(stdout, "INCOMPLETE: %s\n", short)
			}
		}
		if err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
	}
	return nil
}

// inspect summarises one trace and attaches its sidecar. A named pipe
// with no writer waits until ctx is done, not in open(2).
func inspect(ctx context.Context, name string) (*trace.Summary, error) {
	in, err := cli.OpenInput(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer in.Close()
	r := trace.NewReader(in)
	r.Name = name
	defer r.Close()
	s, err := trace.Summarize(r)
	if err != nil {
		var pe *trace.ParseError
		if errors.As(err, &pe) {
			return nil, cli.Input(err)
		}
		return nil, err
	}
	if name != "-" {
		m, err := trace.ReadMeta(name)
		switch {
		case err == nil:
			s.Meta = m
		case !errors.Is(err, os.ErrNotExist):
			return nil, cli.Input(err)
		}
	}
	return s, nil
}

// shortOfSidecar says how the rows of s differ from its sidecar's count,
// as kvreplay reports a trace that ended early ("" when they agree or the
// sidecar gives none): a trace cut short is not the trace its sidecar
// describes.
func shortOfSidecar(s *trace.Summary) string {
	if s.Meta == nil || s.Meta.Counts.Rows <= 0 || s.Rows == s.Meta.Counts.Rows {
		return ""
	}
	if s.Rows < s.Meta.Counts.Rows {
		return fmt.Sprintf("%d of %d rows: the trace ended before its sidecar's count", s.Rows, s.Meta.Counts.Rows)
	}
	return fmt.Sprintf("%d rows, %d more than its sidecar's count of %d: not the trace the sidecar describes", s.Rows, s.Rows-s.Meta.Counts.Rows, s.Meta.Counts.Rows)
}
