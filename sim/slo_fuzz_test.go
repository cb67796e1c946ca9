package sim

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/results"
)

// FuzzParseSLO: kvtrace's --slo-ms reads as kvreplay's does (results.
// ParseSLO) with the default QoS profiles, whose names are the trace's
// classes: the same values accepted, the same targets, class by class; with
// the profiles renamed, the same flag with the classes renamed reads the
// same; a refusal is one line that starts with the flag and names the
// value.
func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{
		"500", "0.5", "interactive=50,batch=2000", "500, responsive=100", "responsive=1,responsive=2",
		"0", "-5", "NaN", "Inf", "1e9", "1e10", "1e-7", "fast=10", "interactive=", "=5", "chatbot=5",
		"batch=5\n", "5\nx=1", "",
	} {
		f.Add(s)
	}
	def := DefaultConfig().QoS
	renamed := def
	renamed[0].Name, renamed[1].Name, renamed[2].Name = "gold", "silver", "bronze"
	rename := strings.NewReplacer("interactive=", "gold=", "responsive=", "silver=", "batch=", "bronze=")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSLO(s, def)
		want, werr := results.ParseSLO(s)
		if (err == nil) != (werr == nil) {
			t.Fatalf("ParseSLO(%q) = %+v, %v; kvreplay's reading: %+v, %v", s, got, err, want, werr)
		}
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "--slo-ms ") {
				t.Fatalf("ParseSLO(%q): error %q is not one line starting with the flag", s, msg)
			}
			if !strings.Contains(msg, s) && !strings.Contains(msg, strconv.Quote(s)) {
				t.Fatalf("ParseSLO(%q): error %q does not name the value", s, msg)
			}
			return
		}
		if got.All != want.All || got.ByQoS[0] != want.ByQoS[1] || got.ByQoS[1] != want.ByQoS[2] || got.ByQoS[2] != want.ByQoS[3] {
			t.Fatalf("ParseSLO(%q) = %+v; kvreplay's reading: %+v", s, got, want)
		}
		if !got.Set() {
			t.Fatalf("ParseSLO(%q) = %+v accepted with no target", s, got)
		}
		if strings.Contains(s, "gold") || strings.Contains(s, "silver") || strings.Contains(s, "bronze") {
			return
		}
		r := rename.Replace(s)
		if again, err := ParseSLO(r, renamed); err != nil || again != got {
			t.Fatalf("ParseSLO(%q) = %+v, but %q with the classes renamed reads %+v, %v", s, got, r, again, err)
		}
	})
}
