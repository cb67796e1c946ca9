package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/report"
	"github.com/kvbench/kvbench/schema"
)

// runSearch renders search documents (kvreplay --search), each answer
// compared with the first's (--baseline's, when given). A search read
// from stdin that a probe stopped (its answer a lower bound: kvreplay
// exited 1) is rendered, then answered with exit status 1: its answer is
// not a measurement. One that ran out of probes (--search-probes, done
// false, its answer said unsettled) is not: every probe of it measured,
// and kvreplay exited 0 for it. The report's options for
// results (--label, --group-by, --metrics) are refused.
func runSearch(ctx context.Context, c *config, stdin io.Reader, stdout io.Writer) error {
	if !slices.Contains(report.SearchFormats, c.format) {
		return cli.Input(fmt.Errorf("--format %s: search documents render as %s", c.format, strings.Join(report.SearchFormats, ", ")))
	}
	// The report's options for results would be ignored: refused.
	if unused := c.given("--label", "--group-by", "--metrics"); len(unused) > 0 {
		return cli.Input(fmt.Errorf("%s: options of a report on results: search documents are named by their system, label or file and shown whole",
			strings.Join(unused, ", ")))
	}
	docs, names, err := report.LoadSearches(ctx, c.paths, stdin, opener(ctx))
	if err != nil {
		return loadError(err)
	}
	if c.baseline != "" {
		// The baseline first: every answer is compared with the first's.
		i, err := report.BaselineSearch(docs, names, c.baseline)
		if err != nil {
			return cli.Input(err)
		}
		docs = append([]*schema.SearchResult{docs[i]}, append(docs[:i:i], docs[i+1:]...)...)
		names = append([]string{names[i]}, append(names[:i:i], names[i+1:]...)...)
	}
	err = writeOutput(ctx, c.output, stdout, func(w io.Writer) error { return report.RenderSearches(w, docs, names, c.format) })
	if err != nil {
		return err
	}
	for i, d := range docs {
		if strings.HasPrefix(names[i], "-#") && d.AnswerIsLowerBound {
			return fmt.Errorf("%s: the search did not finish (%s): rendered, but its answer is not a measurement (did the command before kvreport fail?)", stdinName(names[i]), d.Reason)
		}
	}
	return nil
}

// stdinName names a document of stdin for people: "stdin", or "stdin
// document N" when it is not the first.
func stdinName(name string) string {
	if name == "-#1" {
		return "stdin"
	}
	return "stdin document " + strings.TrimPrefix(name, "-#")
}

// anySearch reports whether any of paths (globs expanded, as Load
// expands them) is a search document (kvreplay --search), reading each
// file only as far as its format. Stdin, when given, is read whole and
// handed back re-readable.
func anySearch(paths []string, stdin io.Reader) (bool, io.Reader, error) {
	for _, p := range paths {
		if p == "-" {
			raw, err := io.ReadAll(stdin)
			if err != nil {
				return false, stdin, fmt.Errorf("stdin: %w", err)
			}
			stdin = bytes.NewReader(raw)
			if report.IsSearch(bytes.NewReader(raw)) {
				return true, stdin, nil
			}
			continue
		}
		if anyRegular(p, report.IsSearch) {
			return true, stdin, nil
		}
	}
	return false, stdin, nil
}
