package search_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay/search"
)

// arena is the closed loop's RAM arena warning as replay/setup writes it,
// of an arena of size.
func arena(size string) string {
	return "the RAM tier's arena of a closed loop, " + size + ", holds every object its users put there (a closed loop's order is not the trace's, " +
		"and can keep more live than the trace's peak); its first 250.25 MiB, the trace's peak, were prefaulted, the rest is committed as objects first use it"
}

// TestWarningsOneLineAKind: a users search's document had the closed
// loop's arena warning once a probe, word for word but for the arena's
// size (sized within the memory available as each probe starts); it is
// one line, with the sizes' range and how many probes gave it. A text
// every probe gave alike stays as it is, once; one only some probes gave
// alike says how many did, as a kind whose figures differ does; and texts
// that differ in their words stay apart.
func TestWarningsOneLineAKind(t *testing.T) {
	const scaled = "SCALED RUN: every object is 0.00390625 of its trace size (--size-scale 1/256); not a full-size measurement"
	var w search.Warnings
	w.Add(1, []string{scaled, arena("5.96 GiB")})
	w.Add(2, []string{scaled, arena("6.10 GiB")})
	w.Add(3, []string{scaled, arena("1023.50 MiB"), "--closed-loop: 3 rows ran before an earlier row of their object"})
	w.Add(4, []string{scaled, arena("5.96 GiB"), "--closed-loop: 7 rows ran before an earlier row of their object", "cleanup: kvreplay-12-ab left behind"})
	w.Add(5, []string{scaled, "--users 4 of 9: the sample leaves out 3 objects"})
	w.Add(6, []string{scaled, "--users 4 of 9: the sample leaves out 3 objects"})
	got := w.List()
	want := []string{
		scaled,
		"4 of 6 probes, their figures least to most: " + arena("1023.50 MiB to 6.10 GiB"),
		"2 of 6 probes, their figures least to most: --closed-loop: 3 to 7 rows ran before an earlier row of their object",
		"1 of 6 probes: cleanup: kvreplay-12-ab left behind",
		"2 of 6 probes: --users 4 of 9: the sample leaves out 3 objects",
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A probe without warnings counts among the probes.
	var z search.Warnings
	z.Add(1, []string{"x"})
	z.Add(2, nil)
	if got, want := z.List(), []string{"1 of 2 probes: x"}; !slices.Equal(got, want) {
		t.Errorf("a warning of one probe of 2: %q, want %q", got, want)
	}
	// Two texts of one kind (two tiers' sizes) that both probes gave, in
	// another order, are each every probe's, word for word: not one line
	// of figures 5 to 7 and one of a probe alone.
	var o search.Warnings
	o.Add(1, []string{"a tier of 5 MiB is full", "a tier of 7 MiB is full"})
	o.Add(2, []string{"a tier of 7 MiB is full", "a tier of 5 MiB is full"})
	if got, want := o.List(), []string{"a tier of 5 MiB is full", "a tier of 7 MiB is full"}; !slices.Equal(got, want) {
		t.Errorf("two probes' texts in another order: %q, want %q", got, want)
	}
	// Names, paths and scales are words, not figures: these are three
	// kinds, not one with "1 to 2".
	var n search.Warnings
	n.Add(1, []string{"Tier-1 is slow", "Tier-2 is slow", "kvreplay-1/x is left", "kvreplay-2/x is left", "at 1/4 of its size", "at 1/8 of its size"})
	if got := n.List(); len(got) != 6 {
		t.Errorf("names taken for figures: %q", got)
	}
	if got := (&search.Warnings{}).List(); len(got) != 0 {
		t.Errorf("no probe: %q", got)
	}
}

// FuzzWarnings: a probe's warnings come back as they were, each once and
// in order, whatever their text (splitting a text at its figures and
// joining it again gives it back); two probes' give one line for each
// kind.
func FuzzWarnings(f *testing.F) {
	f.Add(arena("5.96 GiB"), arena("6.10 GiB"))
	f.Add("3 rows, 1.5 B, 2-core, 1/4, v1.2.3, 10.", "4 rows, 1.5 B, 2-core, 1/4, v1.2.3, 11.")
	f.Add("", "0")
	f.Fuzz(func(t *testing.T, a, b string) {
		var w search.Warnings
		w.Add(1, []string{a, b, a})
		want := []string{a}
		if b != a {
			want = append(want, b)
		}
		if got := w.List(); !slices.Equal(got, want) {
			t.Fatalf("one probe's %q: %q", want, got)
		}
		w.Add(2, []string{b})
		if got := w.List(); len(got) > 2 || len(got) == 0 {
			t.Fatalf("two probes' %q, %q: %q", a, b, got)
		}
	})
}
