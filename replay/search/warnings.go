package search

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Warnings gathers the warnings of a search's probes into its document's
// one list, each kind once. A text that several probes gave is one line,
// as before; texts that differ only in their figures (a closed loop's RAM
// arena, sized within the memory available when each probe starts, is
// another size in every probe) are one line too, each figure that differs
// given as its least to its most, after how many probes gave it: a users
// search had repeated the arena's warning once a probe, word for word but
// for its size. The zero value is ready to use; it is not safe for
// concurrent use.
type Warnings struct {
	kinds  []*warningKind
	probes int // the probes added
}

// warningKind is the texts of one warning, which differ in their figures
// alone: text is the words around the figures (len(figures)+1 pieces),
// variants each distinct text's figures, and probes the probes that gave
// any of them.
type warningKind struct {
	text     []string
	variants [][]figure
	probes   []int
}

// figure is a number in a warning's text, with its byte unit where it has
// one ("95.55 MiB"): as written, and its value to order by.
type figure struct {
	text  string
	value float64
}

// Add records the warnings of probe (counted from 1), in their order.
func (w *Warnings) Add(probe int, texts []string) {
	w.probes = max(w.probes, probe)
	for _, t := range texts {
		words, figs := splitFigures(t)
		hasFigs := func(k *warningKind) bool {
			return slices.ContainsFunc(k.variants, func(v []figure) bool { return slices.Equal(v, figs) })
		}
		// A kind of this probe's holds its texts alike; one text of it
		// that differs in its figures is a warning of its own (two tiers'
		// sizes), which the next probe's pair with in their order. A
		// text goes first to the kind that has it word for word: two
		// probes giving two such texts in another order are two lines of
		// every probe, not one whose figures differ and one of a probe
		// alone.
		i := slices.IndexFunc(w.kinds, func(k *warningKind) bool {
			return slices.Equal(k.text, words) && hasFigs(k)
		})
		if i < 0 {
			i = slices.IndexFunc(w.kinds, func(k *warningKind) bool {
				return slices.Equal(k.text, words) && !slices.Contains(k.probes, probe)
			})
		}
		if i < 0 {
			w.kinds = append(w.kinds, &warningKind{text: words})
			i = len(w.kinds) - 1
		}
		k := w.kinds[i]
		if !hasFigs(k) {
			k.variants = append(k.variants, figs)
		}
		if !slices.Contains(k.probes, probe) {
			k.probes = append(k.probes, probe)
		}
	}
}

// List is the document's warnings, in the order each kind first came: a
// text every probe gave alike as it is, one that only some of the probes
// gave alike after how many ("2 of 5 probes: "), and a kind whose
// figures differ as one line that begins with how many of the probes
// gave it ("4 of 5 probes, their figures least to most: ") and gives each
// figure that differs as "least to most".
func (w *Warnings) List() []string {
	var out []string
	for _, k := range w.kinds {
		if len(k.variants) == 1 {
			line := joinFigures(k.text, k.variants[0])
			if len(k.probes) < w.probes {
				line = fmt.Sprintf("%d of %d probes: ", len(k.probes), w.probes) + line
			}
			out = append(out, line)
			continue
		}
		figs := make([]figure, len(k.variants[0]))
		for i := range figs {
			lo, hi := k.variants[0][i], k.variants[0][i]
			for _, v := range k.variants[1:] {
				if v[i].value < lo.value {
					lo = v[i]
				}
				if v[i].value > hi.value {
					hi = v[i]
				}
			}
			figs[i] = lo
			if lo.text != hi.text {
				figs[i].text = lo.text + " to " + hi.text
			}
		}
		out = append(out, fmt.Sprintf("%d of %d probes, their figures least to most: ", len(k.probes), w.probes)+joinFigures(k.text, figs))
	}
	return out
}

// byteUnits are the units of sizes as kvreplay writes them
// (cli.FormatBytes), which a figure takes with it, so that one size
// written in MiB by a probe and GiB by another is one figure.
var byteUnits = []struct {
	name string
	mult float64
}{{"EiB", 1 << 60}, {"PiB", 1 << 50}, {"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// splitFigures splits a warning into the words around its figures and
// the figures: numbers standing alone (not part of a name such as
// "Tier-2", a path or "1/256"), with a byte unit where one follows.
func splitFigures(s string) (words []string, figs []figure) {
	start := 0 // of the words not yet split off
	for i := 0; i < len(s); {
		if !isDigit(s[i]) || (i > 0 && joins(s[i-1])) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			j++
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		v, err := strconv.ParseFloat(s[i:j], 64)
		if err != nil {
			i = j
			continue
		}
		for _, u := range byteUnits {
			if rest := s[j:]; strings.HasPrefix(rest, " "+u.name) && (len(rest) == len(u.name)+1 || !joins(rest[len(u.name)+1])) {
				v *= u.mult
				j += len(u.name) + 1
				break
			}
		}
		if j < len(s) && joins(s[j]) && s[j] != '.' {
			// "3s", "2-core", "1/4": a number inside a name, or with a unit
			// the words keep (a full stop ends a figure).
			i = j
			continue
		}
		words = append(words, s[start:i])
		figs = append(figs, figure{s[i:j], v})
		start, i = j, j
	}
	return append(words, s[start:]), figs
}

// joinFigures writes words back with figs between them.
func joinFigures(words []string, figs []figure) string {
	var b strings.Builder
	for i, w := range words {
		b.WriteString(w)
		if i < len(figs) {
			b.WriteString(figs[i].text)
		}
	}
	return b.String()
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// joins reports whether c, beside a number, makes it part of a word, a
// name or a path rather than a figure.
func joins(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-' || c == '/' || c == '.'
}
