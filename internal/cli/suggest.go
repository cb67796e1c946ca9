package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// aliasGroups are the names other tools give the options of kvbench's
// tools: fio's job options (iodepth, bs, ioengine, numjobs, runtime,
// directory, filename), kv-cache.py's (--num-users, --cache-dir,
// --storage-capacity-gb), and kvbench's own across its tools (kvtrace
// export takes fio's names, kvreplay its own). An unknown option of a group
// is offered the group's names its flag set defines. Names are in the
// normalised form of suggestName: lower case, '-' for '_'.
func aliasGroups() [][]string {
	return [][]string{
		{"queue-depth", "iodepth", "io-depth", "qd"},
		{"block-size", "bs", "blocksize"},
		{"engine", "ioengine", "io-engine"},
		{"workers", "numjobs", "num-jobs", "jobs", "threads"},
		{"duration", "runtime", "run-time", "time"},
		{"dir", "directory", "cache-dir"},
		{"device", "filename"},
		{"users", "num-users", "numusers"},
		{"capacity", "storage-capacity-gb"},
		{"ram-budget", "cpu-mem-gb"},
		{"size-scale", "scale"},
		{"seed", "randseed", "random-seed"},
		{"tensor-parallel", "tp"},
		{"format", "output-format"},
		{"output", "out", "output-file"},
		{"quiet", "silent"},
		{"io-trace-log", "trace-log"},
	}
}

// aliasNotes answer options that have no counterpart but a different
// default: each applies where its flag set defines the option it names.
func aliasNotes() map[string]struct{ needs, note string } {
	return map[string]struct{ needs, note string }{
		"direct": {"buffered", "direct I/O (O_DIRECT) is the default; --buffered turns it off"},
	}
}

// suggestName normalises an option name typed by a user of another tool:
// lower case, '-' for '_' (fio's io_size, Python's --num_users).
func suggestName(name string) string {
	return strings.ReplaceAll(strings.ToLower(name), "_", "-")
}

// Suggest returns what an unknown long option name (without dashes) most
// likely meant, among the options fs defines and does not hide: the same
// name with '-' for '_', the names other tools give fs's options
// (aliasGroups), the options it is a prefix of, and the names within a
// small edit distance (Damerau-Levenshtein: a typo, a swapped pair). It
// returns "" when nothing is close, else a phrase such as "did you mean
// --queue-depth?".
func Suggest(fs *pflag.FlagSet, name string) string {
	norm := suggestName(name)
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	defined := func(n string) bool { return slices.Contains(names, n) }
	var out []string
	add := func(n string) {
		if n != name && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if defined(norm) {
		add(norm)
	}
	for _, g := range aliasGroups() {
		if slices.Contains(g, norm) {
			for _, n := range g {
				if defined(n) {
					add(n)
				}
			}
		}
	}
	if note, ok := aliasNotes()[norm]; ok && defined(note.needs) && len(out) == 0 {
		return note.note
	}
	if len(out) == 0 && len(norm) >= 3 {
		for _, n := range names {
			if strings.HasPrefix(n, norm) {
				add(n)
			}
		}
	}
	if len(out) == 0 {
		best := maxEdits(norm) + 1
		for _, n := range names {
			switch d := editDistance(norm, n); {
			case d < best:
				best, out = d, []string{n}
			case d == best:
				out = append(out, n)
			}
		}
	}
	if len(out) == 0 {
		return ""
	}
	if len(out) > 3 {
		out = out[:3]
	}
	for i, n := range out {
		out[i] = "--" + n
	}
	switch len(out) {
	case 1:
		return "did you mean " + out[0] + "?"
	default:
		return "did you mean " + strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1] + "?"
	}
}

// maxEdits is how many edits a name may be from an option to be offered
// it: few for short names, where a few edits make any name another.
func maxEdits(name string) int {
	switch n := len(name); {
	case n <= 2:
		return 0
	case n <= 4:
		return 1
	case n <= 9:
		return 2
	}
	return 3
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and transpositions of adjacent
// bytes (Damerau 1964; the restricted form of Boytsov 2011).
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// unknownFlag adds a suggestion to pflag's error for an unknown option:
// "unknown flag: --iodepth (did you mean --queue-depth?)". A long option
// typed with one dash (-iodepth, which pflag reads as the shorthands i, o,
// d, ...) is looked up by its whole name. Other errors are returned as
// they are.
func unknownFlag(fs *pflag.FlagSet, err error) error {
	ne, ok := errors.AsType[*pflag.NotExistError](err)
	if !ok {
		return err
	}
	name := ne.GetSpecifiedName()
	if group := ne.GetSpecifiedShortnames(); len(group) > 1 {
		name, _, _ = strings.Cut(group, "=")
		if fs.Lookup(name) != nil {
			return fmt.Errorf("%w (long options take two dashes: --%s)", err, name)
		}
	}
	if s := Suggest(fs, name); s != "" {
		return fmt.Errorf("%w (%s)", err, s)
	}
	return err
}

// PrefixPreferred is the annotation (pflag.FlagSet.SetAnnotation) of an
// option that ExpandPrefixes takes for a prefix it shares with options not
// so marked.
const PrefixPreferred = "cli_prefix_preferred"

// ExpandPrefixes rewrites the long options of args that are unique
// prefixes of an option fs defines into that option, as Python's argparse
// accepts them (allow_abbrev): --num-user 10 is --num-users 10, and
// --gpu-mem=4 is --gpu-mem-gb=4. An exact name always wins; a prefix of
// several options is a usage error naming them ("ambiguous option: --num
// could match --num-users, --num-gpus"); a prefix of none is left for
// ParseFlags to refuse. A prefix of several options of which exactly one
// is marked PrefixPreferred is that one: the options a tool takes from
// another (kvtrace's from kv-cache.py) keep the prefixes that are unique
// there. Values of options, and everything after "--", are left as they
// are. kvtrace applies it, so that kv-cache.py's command lines run
// unchanged.
func ExpandPrefixes(fs *pflag.FlagSet, args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	takesValue := func(f *pflag.Flag) bool { return f != nil && f.NoOptDefVal == "" }
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		switch {
		case a == "--":
			return append(out, args[i+1:]...), nil
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, value, hasValue := strings.Cut(a[2:], "=")
			f := fs.Lookup(name)
			if f == nil {
				var match []string
				fs.VisitAll(func(g *pflag.Flag) {
					if !g.Hidden && strings.HasPrefix(g.Name, name) {
						match = append(match, g.Name)
					}
				})
				if len(match) > 1 {
					var preferred []string
					for _, m := range match {
						if _, ok := fs.Lookup(m).Annotations[PrefixPreferred]; ok {
							preferred = append(preferred, m)
						}
					}
					if len(preferred) == 1 {
						match = preferred
					}
				}
				switch len(match) {
				case 0:
					continue // ParseFlags refuses it, with a suggestion
				case 1:
					f = fs.Lookup(match[0])
					out[len(out)-1] = "--" + match[0]
					if hasValue {
						out[len(out)-1] += "=" + value
					}
				default:
					return nil, Usagef("ambiguous option: --%s could match --%s", name, strings.Join(match, ", --"))
				}
			}
			if !hasValue && takesValue(f) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		case strings.HasPrefix(a, "-") && len(a) >= 2:
			// Shorthands, alone or run together as pflag reads them (-vo
			// FILE): the first that takes a value takes the rest of the
			// argument, or the next argument when it is last.
			for j := 1; j < len(a); j++ {
				f := fs.ShorthandLookup(a[j : j+1])
				if f == nil || !takesValue(f) {
					continue
				}
				if j == len(a)-1 && i+1 < len(args) {
					i++
					out = append(out, args[i])
				}
				break
			}
		}
	}
	return out, nil
}
