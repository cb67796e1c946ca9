package replay

import (
	"errors"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestModelEffects checks what each kind of row reserves and releases, in
// the model's trace order, and the peak it reaches.
func TestModelEffects(t *testing.T) {
	const P = 4096
	type row struct {
		op         schema.Op
		tier       schema.Tier
		key        string
		phys       int64
		need, rel  int64
		needB      int8
		relB       int8
		create     bool
		cold       bool
		victims    []string
		live0      int64 // backend 0 (Tier-0 and Tier-1), after the row
		live1      int64 // backend 1 (Tier-2)
		wantTooBig bool
	}
	// Tier-0 and Tier-1 share backend 0, unbounded; Tier-2 is backend 1,
	// bounded at 4 pages.
	tests := []row{
		{op: schema.OpWrite, tier: schema.TierGPU, key: "a", phys: 2 * P, need: 2 * P, needB: 0, relB: -1, create: true, live0: 2 * P},
		// A demotion to a tier of the same backend: both copies live until
		// the old one is freed.
		{op: schema.OpWrite, tier: schema.TierCPU, key: "a", phys: 2 * P, need: 2 * P, needB: 0, rel: 2 * P, relB: 0, create: true, live0: 2 * P},
		// A rewrite in place, smaller: it only releases.
		{op: schema.OpWrite, tier: schema.TierCPU, key: "a", phys: P, rel: P, needB: -1, relB: 0, create: true, live0: P},
		// A read of an object that exists: nothing.
		{op: schema.OpRead, tier: schema.TierCPU, key: "a", phys: P, needB: -1, relB: -1, live0: P},
		// A cold read creates.
		{op: schema.OpRead, tier: schema.TierNVMe, key: "c", phys: 2 * P, need: 2 * P, needB: 1, relB: -1, create: true, cold: true, live0: P, live1: 2 * P},
		{op: schema.OpWrite, tier: schema.TierNVMe, key: "d", phys: 2 * P, need: 2 * P, needB: 1, relB: -1, create: true, live0: P, live1: 4 * P},
		// Touch c: d is now the least recently used, and is evicted for e.
		{op: schema.OpRead, tier: schema.TierNVMe, key: "c", phys: 2 * P, needB: -1, relB: -1, live0: P, live1: 4 * P},
		{op: schema.OpWrite, tier: schema.TierNVMe, key: "e", phys: P, need: P, needB: 1, relB: -1, create: true, victims: []string{"d"}, live0: P, live1: 3 * P},
		// A demotion of a into the bounded backend evicts nothing: it fits.
		{op: schema.OpWrite, tier: schema.TierNVMe, key: "a", phys: P, need: P, needB: 1, rel: P, relB: 0, create: true, live0: 0, live1: 4 * P},
		{op: schema.OpDelete, tier: schema.TierNVMe, key: "c", phys: 2 * P, rel: 2 * P, needB: -1, relB: 1, live1: 2 * P},
		// Larger than the backend: no eviction helps.
		{op: schema.OpWrite, tier: schema.TierNVMe, key: "huge", phys: 5 * P, needB: -1, relB: -1, wantTooBig: true},
	}
	m := newModel([schema.NumTiers]int8{0, 0, 1}, []int64{P, P}, []int64{unbounded, 4 * P})
	keys := map[string]*keyState{}
	for i, r := range tests {
		ks := keys[r.key]
		if ks == nil {
			ks = &keyState{name: r.key}
			keys[r.key] = ks
		}
		ef, err := m.apply(ks, r.op, r.tier, r.phys)
		if r.wantTooBig {
			if !errors.Is(err, ErrTooBig) {
				t.Errorf("row %d: error %v, want ErrTooBig", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		var victims []string
		for _, v := range ef.victims {
			victims = append(victims, v.name)
		}
		if ef.need != r.need || ef.rel != r.rel || (r.need > 0 && ef.needB != r.needB) || (r.rel > 0 && ef.relB != r.relB) ||
			ef.create != r.create || ef.cold != r.cold || len(victims) != len(r.victims) || (len(victims) > 0 && victims[0] != r.victims[0]) {
			t.Errorf("row %d %s %s %s: effect %+v victims %v, want need %d on %d, release %d on %d, create %v, cold %v, victims %v",
				i, r.op, r.tier, r.key, ef, victims, r.need, r.needB, r.rel, r.relB, r.create, r.cold, r.victims)
		}
		if m.live[0] != r.live0 || m.live[1] != r.live1 {
			t.Errorf("row %d: live %d and %d, want %d and %d", i, m.live[0], m.live[1], r.live0, r.live1)
		}
	}
	// Backend 0 peaks during the demotion of a (both copies), backend 1 at
	// its limit.
	if m.peak[0] != 4*P || m.peak[1] != 4*P {
		t.Errorf("peaks %d and %d, want %d and %d", m.peak[0], m.peak[1], 4*P, 4*P)
	}
}
