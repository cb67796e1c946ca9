package trace_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/trace"
)

// sidecarDir holds real sidecars, as kvtrace wrote them (README.md).
const sidecarDir = "testdata/sidecars"

// realSidecars returns the paths of the traces whose sidecars sidecarDir
// holds (the traces themselves are not there: ReadMeta needs none).
func realSidecars(tb testing.TB) []string {
	tb.Helper()
	m, err := filepath.Glob(filepath.Join(sidecarDir, "*"+trace.MetaSuffix))
	if err != nil || len(m) == 0 {
		tb.Fatalf("no sidecars in %s: %v", sidecarDir, err)
	}
	for i := range m {
		m[i] = strings.TrimSuffix(m[i], trace.MetaSuffix)
	}
	return m
}

// TestReadMetaRealSidecars: every sidecar kvtrace writes passes ReadMeta's
// checks: bounded tiers, the mlperf dialect's peaks without its deletes
// (past Tier-2's capacity), four tiers, tensor parallelism, a decode-only
// trace.
func TestReadMetaRealSidecars(t *testing.T) {
	for _, tr := range realSidecars(t) {
		m, err := trace.ReadMeta(tr)
		if err != nil {
			t.Errorf("%s: %v", tr, err)
			continue
		}
		if m.Tool != "kvtrace" || m.Counts.Rows == 0 || len(m.PeakLiveBytes) == 0 || m.BytesPerToken == 0 {
			t.Errorf("%s: read as %+v", tr, m)
		}
	}
}

// TestReadMetaDamaged: a sidecar whose figures no writer writes, or whose
// keys a Python reader reads otherwise than encoding/json (a key in
// another case, a key given twice), is refused with one line that names
// the sidecar and the field; ReadMeta took each of them before, and
// kvreplay --no-prescan sized its arenas, set its measured window and
// counted its users from them.
func TestReadMetaDamaged(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(sidecarDir, "bounded_precond_mlperf.csv"+trace.MetaSuffix))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"a key in another case", `"peak_live_bytes":`, `"Peak_Live_Bytes":`, `key "Peak_Live_Bytes": want "peak_live_bytes"`},
		{"a nested key in another case", `"rows": 1063`, `"Rows": 1063`, `key "counts.Rows": want "rows"`},
		{"a key given twice", `"rows": 1063,`, `"rows": 1063, "rows": 5,`, `key "counts.rows": given twice`},
		{"a tier given twice", `"Tier-0": 497156096,`, `"Tier-0": 497156096, "Tier-0": 1,`, `key "peak_live_bytes.Tier-0": given twice`},
		{"a tier in another case", `"Tier-2": 49409163264`, `"tier-2": 49409163264`, `peak_live_bytes "tier-2": not a tier`},
		{"a capacity of no tier", `"Tier-2": 1073741824`, `"Tier-9": 1073741824`, `tier_capacity_bytes "Tier-9": not a tier`},
		{"peaks past the bytes written", `"write_bytes": 81929306112`, `"write_bytes": 1000000000`, `peak_live_bytes "Tier-2" 49409163264: the peaks add up to more than counts.write_bytes 1000000000`},
		{"a huge peak", `"Tier-2": 49409163264`, `"Tier-2": 9223372036854775807`, `peak_live_bytes "Tier-2" 9223372036854775807: the peaks add up to more than counts.write_bytes`},
		{"more objects than rows", `"objects": 109`, `"objects": 100000`, `counts.objects 100000: more than counts.rows 1063`},
		{"more requests than rows", `"requests": 101`, `"requests": 2000`, `counts.requests 2000: more than counts.rows 1063`},
		{"more users than rows", `"requests": 101,`, `"requests": 101, "users": 9000000000,`, `counts.users 9000000000: more than counts.rows 1063`},
		{"measured from past any trace", `"measured_from_s": 0.001`, `"measured_from_s": 1e12`, `measured_from_s 1e+12: past the end of any trace`},
		{"an epoch past any trace", `"epoch_base": 1767225600`, `"epoch_base": 1e300`, `epoch_base 1e+300: past the end of any trace`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(string(good), tc.old, tc.new, 1)
			if doc == string(good) {
				t.Fatalf("%q is not in the sidecar", tc.old)
			}
			tr := filepath.Join(t.TempDir(), "t.csv")
			if err := os.WriteFile(trace.MetaPath(tr), []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := trace.ReadMeta(tr)
			if err == nil {
				t.Fatalf("ReadMeta = %+v, want an error", m)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "trace: meta: "+trace.MetaPath(tr)+": ") || !strings.Contains(msg, tc.want) ||
				!strings.Contains(msg, "a damaged sidecar") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming the sidecar and %q", msg, tc.want)
			}
			if errors.Is(err, os.ErrNotExist) {
				t.Errorf("a damaged sidecar reported as missing: %v", err)
			}
		})
	}
}
