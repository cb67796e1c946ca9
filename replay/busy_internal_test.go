package replay

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// busyOp is an operation of [from, to) ms, abandoned or not.
type busyOp struct {
	from, to  int
	abandoned bool
}

// runBusy feeds ops to an opBusy in time order: begins at their starts,
// ends at their ends (an end before a begin at the same time).
func runBusy(ops []busyOp) time.Duration {
	type ev struct {
		at  int
		end bool
		op  busyOp
	}
	var evs []ev
	for _, o := range ops {
		evs = append(evs, ev{o.from, false, o}, ev{o.to, true, o})
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].at != evs[j].at {
			return evs[i].at < evs[j].at
		}
		return evs[i].end && !evs[j].end
	})
	t0 := time.Unix(0, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	var b opBusy
	for _, e := range evs {
		if e.end {
			b.end(ms(e.op.from), ms(e.op.to), e.op.abandoned)
		} else {
			b.begin()
		}
	}
	return b.Total()
}

// unionOf is the length of the union of the intervals of the operations
// not abandoned, counted millisecond by millisecond.
func unionOf(ops []busyOp) time.Duration {
	covered := map[int]bool{}
	for _, o := range ops {
		for t := o.from; t < o.to && !o.abandoned; t++ {
			covered[t] = true
		}
	}
	return time.Duration(len(covered)) * time.Millisecond
}

// TestOpBusy: a busy time is the union of the intervals of the operations
// that were not abandoned: one abandoned in flight while the others ran
// adds only the time it alone kept the tier busy, and that is left out.
// Before, an abandoned operation counted as any other (results.Busy).
func TestOpBusy(t *testing.T) {
	for _, tt := range []struct {
		name string
		ops  []busyOp
		want int
	}{
		{"alone, abandoned", []busyOp{{0, 10, true}}, 0},
		{"beside one that finished", []busyOp{{0, 10, false}, {5, 30, true}}, 10},
		{"a gap only it covered", []busyOp{{0, 10, false}, {5, 30, true}, {20, 25, false}}, 15},
		{"inside one that finished", []busyOp{{0, 30, false}, {5, 10, true}}, 30},
		{"none abandoned", []busyOp{{0, 10, false}, {5, 30, false}, {40, 45, false}}, 35},
		{"a long one finished last", []busyOp{{0, 100, false}, {10, 20, false}, {30, 40, true}, {50, 60, false}}, 100},
	} {
		if got, want := runBusy(tt.ops), time.Duration(tt.want)*time.Millisecond; got != want {
			t.Errorf("%s: busy %v, want %v", tt.name, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		ops := make([]busyOp, 1+r.IntN(12))
		for j := range ops {
			from := r.IntN(100)
			ops[j] = busyOp{from, from + 1 + r.IntN(30), r.IntN(4) == 0}
		}
		if got, want := runBusy(ops), unionOf(ops); got != want {
			t.Fatalf("case %d: %v: busy %v, want %v", i, ops, got, want)
		}
	}
}

// TestOpBusySpans: the spans kept while a long operation is in flight
// stay bounded, and the busy time is exact when it finishes.
func TestOpBusySpans(t *testing.T) {
	ops := []busyOp{{0, 3 * maxSpans * 2, false}}
	for i := range 3 * maxSpans {
		ops = append(ops, busyOp{2*i + 1, 2*i + 2, false}) // a gap before each
	}
	t0 := time.Unix(0, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	var b opBusy
	b.begin()
	most := 0
	for _, o := range ops[1:] {
		b.begin()
		b.end(ms(o.from), ms(o.to), false)
		most = max(most, len(b.spans))
	}
	if most > maxSpans+1 {
		t.Errorf("%d spans kept, want at most %d", most, maxSpans+1)
	}
	if b.end(ms(ops[0].from), ms(ops[0].to), false); b.Total() != unionOf(ops) || len(b.spans) != 0 {
		t.Errorf("busy %v, %d spans kept; want %v, none", b.Total(), len(b.spans), unionOf(ops))
	}
}
