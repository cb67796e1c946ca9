package sim

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestWindowedGenerationDeparts: a BurstGPT request whose response takes
// longer than --duration to generate has its generation, and its decode
// reads, bounded by the run, and the run says so as a departure from
// kv-cache.py (whose trace has all 1 + ceil(3000/32) = 95 of them). It
// was bounded without a word. A request that fits says nothing.
func TestWindowedGenerationDeparts(t *testing.T) {
	for _, tc := range []struct {
		name        string
		context     int
		response    int
		decodeReads int
		said        string
	}{
		// 30 s at 30 ms a token holds 1000 tokens: 1 + 32 reads, 62 fewer.
		{"longer than the run", 1000, 3000, 33, "1 of the trace's requests generate more tokens than --duration 30 s holds at --generation-mode realistic: each generated 1000 tokens at most, and its decode reads stopped there (up to 62 reads fewer in all)"},
		{"within the run", 1000, 200, 1 + 7, ""},
		// 10,000 tokens of context: prefill-only by kv-cache.py's rule, no
		// decode reads to leave out, but its generation is bounded all the
		// same.
		{"prefill-only by the rule", 10000, 3000, 0, "1 of the trace's requests generate more tokens than --duration 30 s holds at --generation-mode realistic: each generated 1000 tokens at most, and its decode reads stopped there; kv-cache.py"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "b.csv")
			body := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,a," + strconv.Itoa(tc.context) + "," +
				strconv.Itoa(tc.response) + "," + strconv.Itoa(tc.context+tc.response) + ",x\n"
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig()
			cfg.UseBurstTrace, cfg.BurstTracePath, cfg.ReplayCycles = true, path, 1
			cfg.NumUsers, cfg.Duration, cfg.GPUMemGB = 1, 30*time.Second, 0
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			reads := 0
			res, err := Run(context.Background(), &cfg, func(r *schema.Record) error {
				if r.Phase == schema.PhaseDecode {
					reads++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if reads != tc.decodeReads {
				t.Errorf("%d decode reads, want %d", reads, tc.decodeReads)
			}
			deps := strings.Join(res.Kvbench.Departures, "\n")
			if tc.said == "" {
				if deps != "" {
					t.Errorf("departures %q, want none", deps)
				}
				return
			}
			if !strings.Contains(deps, DeparturePrefix+tc.said) {
				t.Errorf("departures %q, want one saying %q", deps, tc.said)
			}
		})
	}
}
