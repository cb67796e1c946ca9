package setup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/replay"
)

// TestSearchRefusalSuggestsSearchOptions: a search whose trace does not
// fit this machine's memory (32 objects of an eighth of it each on the
// RAM tier, live at once) is refused before any I/O, and so is a probe
// that does not fit: the options they suggest are those a search can
// take, a smaller --size-scale (with a --capacity or a --ram-budget),
// never a --duration, which is the probes' window (a shorter one that
// fits, a few seconds here, is no probe worth running), nor the
// --closed-loop or --speed a search sets itself. Before, a users search's
// refusal offered "--duration 3s (replays the first 3s of the trace (at
// --speed 1), which fit as they are)", a capacity search's --closed-loop
// and --speed 0.398. A replay's refusal still offers --duration.
func TestSearchRefusalSuggestsSearchOptions(t *testing.T) {
	_, total := host.Memory()
	if total <= 0 {
		t.Skip("this machine's memory is unknown")
	}
	size := (total/8 + 4095) &^ 4095
	var b strings.Builder
	b.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase,Request,QoS,User\n")
	for i := range 32 {
		fmt.Fprintf(&b, "%d.0,Write,%d,Tier-1,k%d,Prefill,%d,batch,%d\n", i, size, i, i+1, i%2+1)
	}
	for i := range 32 {
		fmt.Fprintf(&b, "40.%02d,Read,%d,Tier-1,k%d,Decode,%d,batch,%d\n", i, size, i, i+1, i%2+1)
	}
	tr := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(tr, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	notForSearch := []string{"--duration", "--closed-loop", "--speed"}
	for _, kind := range []string{"users", "capacity", ""} {
		t.Run(kind, func(t *testing.T) {
			cfg := replay.DefaultConfig()
			so := SearchOptions{Kind: kind, Probes: 12, Repeats: 2}
			if errs := so.Check(&cfg); len(errs) != 0 {
				t.Fatal(errs)
			}
			if kind == "" {
				cfg.ClosedLoop = true // a replay of the same loop
			}
			_, plan, err := Prescan(context.Background(), []string{tr}, "", &cfg, Fitting{WholeTrace: kind == "capacity"})
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Stderr: &strings.Builder{}}
			if kind == "" {
				err = CheckFits(&cfg, plan, &opts)
				if err == nil || !strings.Contains(err.Error(), "use --size-scale 1/") || !strings.Contains(err.Error(), "or --duration ") {
					t.Errorf("the replay's refusal: %v; want it to offer --size-scale and --duration", err)
				}
				return
			}
			w, err := SearchFits(kind, &cfg, plan, &opts)
			if err == nil || w != "" || !strings.Contains(err.Error(), "does not fit this machine: memory: ") || !strings.Contains(err.Error(), "use --size-scale 1/") {
				t.Fatalf("SearchFits: %q, %v; want a refusal for memory that offers a --size-scale", w, err)
			}
			for _, flag := range notForSearch {
				if strings.Contains(err.Error(), flag) {
					t.Errorf("the search's refusal offers %s: %v", flag, err)
				}
			}
			// A probe that does not fit (the search's plan did not, as
			// SearchFits found, but a probe is checked on its own).
			probe := cfg
			if kind == "users" {
				probe.Users = 2
			}
			err = probeFits(&probe, plan, &opts)
			if !errors.Is(err, ErrProbeNotRun) || !strings.Contains(err.Error(), "--size-scale") {
				t.Fatalf("the probe: %v; want it not run, offering a --size-scale", err)
			}
			for _, flag := range notForSearch {
				if strings.Contains(err.Error(), flag) {
					t.Errorf("the probe's refusal offers %s: %v", flag, err)
				}
			}
		})
	}
}
