package setup

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
)

// oneLine fails t unless msg is one line that starts with prefix.
func oneLine(t *testing.T, what, msg, prefix string) {
	t.Helper()
	if strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, prefix) {
		t.Fatalf("%s: error %q is not one line starting with %q", what, msg, prefix)
	}
}

// FuzzParseGPUs: --gpus against n devices: "" is every device in order;
// otherwise one device a comma-separated item, each the item's number and
// below n; written back as a list the devices read the same; a refusal is
// one line naming the flag.
func FuzzParseGPUs(f *testing.F) {
	for _, s := range []string{"", "0", "0,1", "1, 0", "3", "0,0", "-1", "+1", "x", ",", "0,", " 1 ", "01", "0x1",
		"99999999999999999999", "1\n,x", "\t"} {
		for _, n := range []int{0, 1, 2, 8} {
			f.Add(s, n)
		}
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1024 {
			return // the CUDA runtime's device count
		}
		ids, err := parseGPUs(s, n)
		if err != nil {
			oneLine(t, "parseGPUs("+strconv.Quote(s)+")", err.Error(), "--")
			if s != "" && !strings.HasPrefix(err.Error(), "--gpus ") {
				t.Fatalf("parseGPUs(%q, %d): error %q does not name --gpus", s, n, err)
			}
			return
		}
		if s == "" {
			if len(ids) != n {
				t.Fatalf("parseGPUs(\"\", %d) = %v, want every device", n, ids)
			}
			for i, id := range ids {
				if id != i {
					t.Fatalf("parseGPUs(\"\", %d) = %v, want 0 to %d in order", n, ids, n-1)
				}
			}
			return
		}
		items := strings.Split(s, ",")
		if len(ids) != len(items) {
			t.Fatalf("parseGPUs(%q, %d) = %v: %d devices from %d items", s, n, ids, len(ids), len(items))
		}
		var list []string
		for i, id := range ids {
			want, err := strconv.ParseInt(strings.TrimSpace(items[i]), 10, 64)
			if err != nil || int64(id) != want || id < 0 || id >= n {
				t.Fatalf("parseGPUs(%q, %d) = %v: item %q is %d", s, n, ids, items[i], id)
			}
			list = append(list, strconv.Itoa(id))
		}
		if back, err := parseGPUs(strings.Join(list, ","), n); err != nil || !slices.Equal(back, ids) {
			t.Fatalf("parseGPUs(%q, %d) = %v; written back it reads %v, %v", s, n, ids, back, err)
		}
	})
}

// FuzzMapTiers: --tier-map as kvreplay reads it (cli.KeyValues, then
// MapTiers, the gpu rows left out: they load a CUDA runtime): every pair
// names a tier and a backend of the table and maps it, the tiers not given
// map to nothing, or each pair that does not gets one error, one line that
// names --tier-map.
func FuzzMapTiers(f *testing.F) {
	for _, s := range []string{"Tier-0=ram,Tier-1=ram,Tier-2=nvme", "Tier-3=s3", "Tier-1=null", "Tier-2=NVMe", "tier-0=ram",
		"Tier-4=ram", "Tier-0=disk", "Tier-0=ram,Tier-0=nvme", "Tier-1 = ram", "Tier-0=ram\nx", "x\ny=ram", "Tier-=", "=ram"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kv := cli.NewKeyValues()
		if kv.Set(s) != nil {
			return // FuzzKeyValues's
		}
		pairs := kv.Pairs()
		for _, p := range pairs {
			if p.Value == "gpu" {
				return
			}
		}
		var e Env
		var cfg replay.Config
		cfg.TierMap[0] = "left over"
		errs := e.MapTiers(&cfg, pairs)
		var want [schema.NumTiers]string
		bad := 0
		for _, p := range pairs {
			tier, err := schema.ParseTier(p.Key)
			if err != nil || factory(p.Value) == nil {
				bad++
				continue
			}
			want[tier] = p.Value
		}
		if len(errs) != bad {
			t.Fatalf("MapTiers(%q): %d errors %q, want %d", s, len(errs), errs, bad)
		}
		for _, err := range errs {
			oneLine(t, "MapTiers("+strconv.Quote(s)+")", err.Error(), "--tier-map ")
		}
		if cfg.TierMap != want {
			t.Fatalf("MapTiers(%q): tier map %q, want %q", s, cfg.TierMap, want)
		}
		for i, name := range cfg.TierMap {
			if name != "" && !slices.Contains(Names(), name) {
				t.Fatalf("MapTiers(%q): Tier-%d maps to %q, not a backend", s, i, name)
			}
		}
	})
}
