package sim

import (
	"slices"
	"testing"
)

// The expected values were printed by CPython 3.11's random module, e.g.
// random.seed(42); [random.getrandbits(32) for _ in range(3)].
func TestPyRandMatchesCPython(t *testing.T) {
	r := newPyRand(42)
	if got := []uint32{r.uint32(), r.uint32(), r.uint32()}; !slices.Equal(got, []uint32{2746317213, 478163327, 107420369}) {
		t.Errorf("getrandbits(32) after seed(42): %v", got)
	}
	r = newPyRand(42)
	if a, b := r.Float64(), r.Float64(); a != 0.6394267984578837 || b != 0.025010755222666936 {
		t.Errorf("random() after seed(42): %v %v", a, b)
	}
	r = newPyRand(42)
	var ints []int
	for range 5 {
		ints = append(ints, r.randint(512, 4096))
	}
	if !slices.Equal(ints, []int{3131, 968, 614, 3549, 1638}) {
		t.Errorf("randint(512, 4096) x5: %v", ints)
	}
	if c := r.IntN(3); c != 0 {
		t.Errorf("choice of 3: index %d, want 0", c)
	}
	if u := r.uniform(0.1, 0.5); u != 0.1892842952595291 {
		t.Errorf("uniform(0.1, 0.5): %v", u)
	}
	if v := newPyRand(1<<40 + 7).uint32(); v != 2635837658 {
		t.Errorf("seed(2**40+7): %d", v)
	}
	if v := newPyRand(-5).uint32(); v != 2675342405 {
		t.Errorf("seed(-5): %d", v)
	}
	r = newPyRand(7)
	l := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	r.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	if !slices.Equal(l, []int{8, 3, 1, 4, 7, 0, 9, 6, 2, 5}) {
		t.Errorf("shuffle after seed(7): %v", l)
	}
}
