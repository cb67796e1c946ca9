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

// TestPyRandOneChoiceDraws: CPython's randint(a, a) and a choice among one
// draw from the stream (getrandbits(1) until it is 0), so the draws after
// them depend on it; kvtrace's did not draw, and every user after a
// config.yaml template with a one-value range differed from kv-cache.py's.
// The expected values were printed by CPython 3.11.
func TestPyRandOneChoiceDraws(t *testing.T) {
	for _, tt := range []struct {
		name string
		draw func(r *pyRand) int
		want int
	}{
		{"randint(5, 5)", func(r *pyRand) int { return r.randint(5, 5) }, 5},
		{"choice(['a'])", func(r *pyRand) int { return r.IntN(1) }, 0},
	} {
		r := newPyRand(42)
		if got := tt.draw(r); got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, got, tt.want)
		}
		// random.seed(42); <draw>; random(): the second random() of seed 42.
		if got := r.Float64(); got != 0.025010755222666936 {
			t.Errorf("random() after seed(42) and %s: %v, want 0.025010755222666936", tt.name, got)
		}
	}
}

// TestUsersOneValueRange: the synthetic users of a config whose chatbot
// context_range is [1000, 1000] are kv-cache.py's for the same seed: type,
// QoS, context, generation and think time as CPython 3.11 drew them with
// UserSimulator.generate_mixed_users' order of draws after random.seed(42).
func TestUsersOneValueRange(t *testing.T) {
	e, _ := scriptedEngine(t, func(c *Config) {
		c.NumUsers = 6
		c.UserTemplates[0].ContextMin, c.UserTemplates[0].ContextMax = 1000, 1000
	})
	e.rng = newPyRand(42)
	e.makeUsers()
	want := []struct {
		template, qos, context, gen int
		think                       float64
	}{
		{2, QoSInteractive, 16245, 481, 0.5938702245641714},
		{0, QoSBatch, 1000, 158, 0.11271307179271345},
		{0, QoSResponsive, 1000, 193, 0.1795350602746594},
		{2, QoSBatch, 10969, 425, 0.8390508555406242},
		{1, QoSBatch, 4308, 488, 0.8446554014662464},
		{2, QoSResponsive, 8648, 359, 0.5583765145291065},
	}
	for i, w := range want {
		u := e.users[i]
		if u.template != w.template || u.qos != w.qos || u.context != w.context || u.gen != w.gen || u.think != w.think {
			t.Errorf("user %d: template %d qos %d context %d gen %d think %v, want %d %d %d %d %v",
				i, u.template, u.qos, u.context, u.gen, u.think, w.template, w.qos, w.context, w.gen, w.think)
		}
	}
}
