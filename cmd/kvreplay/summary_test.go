package main

import (
	"io"

	"github.com/kvbench/kvbench/report"
	"github.com/kvbench/kvbench/schema"
)

// writeSummary is kvreplay's terminal summary, as the tests here check it.
func writeSummary(w io.Writer, r *schema.Result) { report.WriteReplaySummary(w, r) }
