package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// refParseSLO is --slo-ms as its help states it, written plainly: items
// split on commas, each MS or CLASS=MS with MS a number of milliseconds
// above 0 and at most 1e9 that is at least a nanosecond, CLASS one of
// interactive, responsive, batch; a later item for a target replaces an
// earlier one.
func refParseSLO(s string) (SLO, bool) {
	var slo SLO
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		class, ms := "", item
		named := false
		if i := strings.IndexByte(item, '='); i >= 0 {
			class, ms, named = item[:i], item[i+1:], true
		}
		if key := fmt.Sprint(named, class); seen[key] {
			return SLO{}, false // one target a class, one for every request
		} else {
			seen[key] = true
		}
		v, err := strconv.ParseFloat(ms, 64)
		if err != nil || math.IsNaN(v) || v <= 0 || v > 1e9 {
			return SLO{}, false
		}
		d := time.Duration(math.Round(v * 1e6))
		if d <= 0 {
			return SLO{}, false
		}
		if !named {
			slo.All = d
			continue
		}
		switch class {
		case "interactive":
			slo.ByQoS[schema.QoSInteractive] = d
		case "responsive":
			slo.ByQoS[schema.QoSResponsive] = d
		case "batch":
			slo.ByQoS[schema.QoSBatch] = d
		default:
			return SLO{}, false
		}
	}
	return slo, true
}

// formatSLO renders slo as --slo-ms, each target as an exact decimal of
// milliseconds.
func formatSLO(slo SLO) string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%d.%06d", d/time.Millisecond, d%time.Millisecond) }
	var items []string
	if slo.All > 0 {
		items = append(items, ms(slo.All))
	}
	for q := schema.QoSInteractive; q < schema.NumQoS; q++ {
		if d := slo.ByQoS[q]; d > 0 {
			items = append(items, q.String()+"="+ms(d))
		}
	}
	return strings.Join(items, ",")
}

// FuzzParseSLO: ParseSLO agrees with the plain reading of the flag
// (refParseSLO) on what it accepts and on every target; an accepted SLO
// has targets only in (0, 1e9 ms], at least one, and reads back the same
// from its exact rendering; a refusal is one line that starts with the
// flag and names the value.
func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{
		"500", "0.5", "interactive=50,batch=2000", "500,interactive=50", "500, responsive = 100",
		"interactive=50,interactive=60", "500,600", "1e9", "1000000000.0001", "1e-6", "1e-7", "0.0000005",
		"4.35", "1.001", "0.3", "0x1p3", "1_000", "Inf", "NaN", "-5", "0", "", ",", "500,", "=3", "fast=3",
		"Interactive=5", "batch=", "batch==5", "interactive=5=6", "500\n,batch=3", "\xff=1", " 500 ",
		"responsive=1e-300", "999999999.9999999", "5\nx", "batch=\t", "a b=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSLO(s)
		want, ok := refParseSLO(s)
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "--slo-ms ") {
				t.Fatalf("ParseSLO(%q): error %q is not one line starting with the flag", s, msg)
			}
			if !strings.Contains(msg, s) && !strings.Contains(msg, strconv.Quote(s)) {
				t.Fatalf("ParseSLO(%q): error %q does not name the value", s, msg)
			}
			if ok {
				t.Fatalf("ParseSLO(%q) refused (%v); the flag's reading gives %+v", s, err, want)
			}
			return
		}
		if !ok {
			t.Fatalf("ParseSLO(%q) = %+v; the flag's reading refuses it", s, got)
		}
		if got != want {
			t.Fatalf("ParseSLO(%q) = %+v, want %+v", s, got, want)
		}
		if !got.Set() {
			t.Fatalf("ParseSLO(%q) = %+v accepted with no target", s, got)
		}
		for _, d := range append([]time.Duration{got.All}, got.ByQoS[:]...) {
			if d < 0 || d > 1e9*time.Millisecond {
				t.Fatalf("ParseSLO(%q): target %v out of range", s, d)
			}
		}
		if got.ByQoS[schema.QoSNone] != 0 {
			t.Fatalf("ParseSLO(%q) sets a target for requests without a class: %+v", s, got)
		}
		back, err := ParseSLO(formatSLO(got))
		if err != nil || back != got {
			t.Fatalf("ParseSLO(%q) = %+v renders as %q, which reads %+v, %v", s, got, formatSLO(got), back, err)
		}
	})
}
