package replay

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestModelForgetsDeletedEvicted: a key the capacity eviction took, which
// the trace then deletes, is gone for good: the scheduler drops the state
// of a key neither live nor evicted, and one marked evicted for ever was
// kept for ever (a few hundred bytes per object, until a long replay on a
// bounded tier ran out of memory).
func TestModelForgetsDeletedEvicted(t *testing.T) {
	const P = 4096
	m := newModel([schema.NumTiers]int8{-1, 0, -1}, []int64{P}, []int64{2 * P})
	a, b, c := &keyState{name: "a"}, &keyState{name: "b"}, &keyState{name: "c"}
	for _, ks := range []*keyState{a, b, c} {
		if _, err := m.apply(ks, schema.OpWrite, schema.TierCPU, P); err != nil {
			t.Fatal(err)
		}
	}
	if a.m.exists || !a.m.evicted {
		t.Fatalf("a: exists %v, evicted %v; want evicted for c", a.m.exists, a.m.evicted)
	}
	if _, err := m.apply(a, schema.OpDelete, schema.TierCPU, P); err != nil {
		t.Fatal(err)
	}
	if a.m.exists || a.m.evicted {
		t.Errorf("a deleted: exists %v, evicted %v; want neither, so its state is dropped", a.m.exists, a.m.evicted)
	}
	if m.count[0] != 2 || m.peakCount[0] != 2 || m.live[0] != 2*P {
		t.Errorf("%d objects live (peak %d), %d bytes; want 2, 2, %d", m.count[0], m.peakCount[0], m.live[0], 2*P)
	}
}

// TestPeakAtBounds: the peak bound at a smaller scale holds for random
// traces, planned exactly at each scale.
func TestPeakAtBounds(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	for trial := range 50 {
		n := 1 + rnd.IntN(200)
		sz := make([]int64, n)
		ops := make([]schema.Op, n)
		keys := make([]int, n)
		for i := range n {
			sz[i] = 1 + rnd.Int64N(10<<20)
			keys[i] = rnd.IntN(30)
			ops[i] = []schema.Op{schema.OpWrite, schema.OpWrite, schema.OpRead, schema.OpDelete}[rnd.IntN(4)]
		}
		run := func(scale float64) (peak, objects int64) {
			m := newModel([schema.NumTiers]int8{-1, 0, -1}, []int64{planAlign}, []int64{unbounded})
			ks := map[int]*keyState{}
			size := map[int]int64{}
			for i := range n {
				k := ks[keys[i]]
				if k == nil {
					k = &keyState{}
					ks[keys[i]] = k
					size[keys[i]] = sz[i] // a key keeps its size
					if ops[i] == schema.OpRead {
						_, phys := sizes(size[keys[i]], scale, planAlign)
						m.seenCold(0, phys)
					}
				}
				_, phys := sizes(size[keys[i]], scale, planAlign)
				if _, err := m.apply(k, ops[i], schema.TierCPU, phys); err != nil {
					t.Fatal(err)
				}
			}
			return windowPeak(m, 0), m.peakCount[0] + m.coldCount[0]
		}
		peak1, objects := run(1)
		for _, s := range []float64{0.5, 1.0 / 3, 1.0 / 64, 1.0 / 4096} {
			exact, _ := run(s)
			if bound := peakAt(peak1, objects, 1, s); exact > bound {
				t.Fatalf("trial %d: at %g the peak is %d, above the bound %d", trial, s, exact, bound)
			}
		}
	}
}

// TestProfile: points hold the state at the end of each step, coarsen
// keeping the later of each pair, and profiles add pointwise.
func TestProfile(t *testing.T) {
	m := newModel([schema.NumTiers]int8{-1, 0, -1}, []int64{planAlign}, []int64{unbounded})
	ts := &traceScan{wr: []int64{0}, rd: []int64{0}, ops: []int64{0}}
	pr := newProfile()
	var last time.Duration
	for i := range 3000 { // one row each 7 ms: 21 s, past 1024 points of 10 ms
		at := time.Duration(i) * 7 * time.Millisecond
		pr.advance(at, m, ts)
		ks := &keyState{}
		if _, err := m.apply(ks, schema.OpWrite, schema.TierCPU, planAlign); err != nil {
			t.Fatal(err)
		}
		ts.wr[0] += planAlign
		ts.ops[0]++
		last = at
	}
	pr.close(last, m, ts)
	if pr.step != 40*time.Millisecond || len(pr.peak) != int(last/pr.step)+1 {
		t.Fatalf("step %v, %d points; want 40ms and %d", pr.step, len(pr.peak), int(last/pr.step)+1)
	}
	for i := range pr.peak {
		end := time.Duration(i+1) * pr.step
		rows := min(int64((end+7*time.Millisecond-1)/(7*time.Millisecond)), 3000) // rows before end
		if pr.peak[i][0] != rows*planAlign || pr.bytes[i][0] != rows*planAlign || pr.ops[i][0] != rows {
			t.Fatalf("point %d (to %v): peak %d, bytes %d, ops %d; want %d rows' %d", i, end, pr.peak[i][0], pr.bytes[i][0], pr.ops[i][0], rows, rows*planAlign)
		}
	}
	// short ends at 30 ms with 3: its one point of 40 ms.
	short := &profile{step: 10 * time.Millisecond, peak: [][]int64{{1}, {2}, {3}}, bytes: [][]int64{{1}, {2}, {3}}, ops: [][]int64{{1}, {2}, {3}}}
	sum := pr.add(short)
	if sum.step != 40*time.Millisecond || sum.peak[0][0] != pr.peak[0][0]+3 || sum.peak[5][0] != pr.peak[5][0]+3 ||
		sum.ops[0][0] != pr.ops[0][0]+3 || sum.ops[5][0] != pr.ops[5][0]+3 {
		t.Errorf("sum: step %v, points %v %v, ops %v %v", sum.step, sum.peak[0], sum.peak[5], sum.ops[0], sum.ops[5])
	}
}
