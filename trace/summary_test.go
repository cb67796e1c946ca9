package trace_test

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// TestSummaryTextUnits: kvtrace inspect gives the data a trace moves in
// GB (10^9 bytes), as every kvbench output does, and object sizes binary,
// as the flags take sizes.
func TestSummaryTextUnits(t *testing.T) {
	z := trace.NewSummarizer()
	const size = 5 << 20 // 5 MiB: 5242880 bytes
	for i, op := range []schema.Op{schema.OpWrite, schema.OpRead, schema.OpRead} {
		z.Add(&schema.Record{Op: op, Size: size, Tier: schema.TierNVMe, Key: []byte("k"), Phase: schema.PhaseDecode, Request: uint64(i + 1)})
	}
	var b strings.Builder
	if err := z.Summary().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"read 2 rows 0.0105 GB, write 1 rows 0.00524 GB", // 10485760 and 5242880 bytes
		"op  tier  phase  rows  GB",
		"Read  Tier-2  Decode     2  0.0105",
		"min 5.00 MiB",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("inspect text lacks %q:\n%s", want, out)
		}
	}
}

// TestSummaryTextNotes: kvtrace inspect shows the sidecar's notes (rows a
// request trace skipped, where the run departs from kv-cache.py), which
// the writer printed once and nothing showed again.
func TestSummaryTextNotes(t *testing.T) {
	s := trace.NewSummarizer().Summary()
	s.Meta = &trace.Meta{Tool: "kvtrace", Notes: []string{"departs from kv-cache.py: x", "3 rows skipped"}}
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"note: departs from kv-cache.py: x\n", "note: 3 rows skipped\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("inspect text lacks %q:\n%s", want, b.String())
		}
	}
}
