package examples

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// An example runs as written, on a machine of 2 cores, 24 GiB and a few GiB
// of free disk, in a few minutes at most: a command that would not is made
// to fit by its own options (--size-scale, --fit), not by the test. The
// test substitutes paths only, with one exception:
//
//   - "go run ./cmd/X" is the X built by the test, on PATH;
//   - paths under /mnt/ are under a temporary directory;
//   - "kvtrace ..." (elided options) is a small simulation;
//   - a simulation (which runs in virtual time, in a second at full size)
//     writes its trace file under the name full-NAME, so that the commands
//     after it read the inputs made for the examples;
//   - the exception, until kvreplay's full-size examples say --fit: a
//     kvreplay without --size-scale or --fit gets --speed max (but a
//     capacity search, which doubles its own --speed), --size-scale 1/4096,
//     and, with --duration or --search, a window of 1 s (3 probes);
//   - without KVBENCH_LONG=1 (CI sets it), a kvreplay --fit whose
//     replay goes at the disk's speed, a closed loop or a search, gets
//     --size-scale 1/64, which --fit keeps: as written, --fit scales
//     them for space alone (1/2 of the examples' trace here, objects of
//     a gigabyte), and these few examples read some 70 GB from the disk
//     and wrote 25 GB, so that the suite's time followed the disk's,
//     from 2m40s to 3m50s on one machine;
//   - the inputs the examples name (run.csv.zst, config.yaml, sysA-t1.json,
//     ...) are made first: a small simulation, kvreplay results of it, and
//     kv-cache.py's files from testdata; a search reads a longer
//     simulation than run.csv.zst's 5 s (search.csv.zst, 60 s), since a
//     probe whose trace runs out before its --duration is not a
//     measurement.
//
// Examples of tools not installed (fio, jq, benchstat, sai3-bench), and those
// that read their output, are skipped and logged; so are go test and
// bench/vs-fio.sh (a disk benchmark).

// long is KVBENCH_LONG=1: the examples run as written but for paths.
var long = os.Getenv("KVBENCH_LONG") == "1"

// example is one command line of the documentation.
type example struct {
	where string // README.md:LINE or "kvtrace export --help"
	line  string
}

func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the tools and runs every example; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain on PATH to build the tools")
	}
	root := filepath.Join("..", "..")
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(os.PathSeparator), "./cmd/kvtrace", "./cmd/kvreplay", "./cmd/kvreport")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	groups := [][]example{}
	for _, b := range readmeBlocks(string(readme)) {
		groups = append(groups, b)
	}
	for _, cmd := range [][]string{
		{"kvtrace", "--help"}, {"kvtrace", "inspect", "--help"}, {"kvtrace", "models", "--help"},
		{"kvtrace", "export", "--help"}, {"kvreplay", "--help"}, {"kvreport", "--help"}, {"kvreport", "merge", "--help"},
	} {
		c := exec.Command(filepath.Join(bin, cmd[0]), cmd[1:]...)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%s: %v", strings.Join(cmd, " "), err)
		}
		groups = append(groups, helpExamples(strings.Join(cmd, " "), string(out))...)
	}

	inputs := t.TempDir()
	makeInputs(t, inputs, bin, env)
	// The blocks run side by side (each in its own directory): most of
	// their time is replays at their traces' own pace.
	var n atomic.Int64
	t.Run("blocks", func(t *testing.T) {
		for i, g := range groups {
			if len(g) == 0 {
				continue
			}
			t.Run(fmt.Sprintf("%d-%s", i, strings.Fields(g[0].where)[0]), func(t *testing.T) {
				t.Parallel()
				// Each block runs in a fresh directory holding the inputs, in
				// order, as a reader types it.
				dir := t.TempDir()
				if err := os.CopyFS(dir, os.DirFS(inputs)); err != nil {
					t.Fatal(err)
				}
				skippedOut := map[string]bool{}
				for _, ex := range g {
					line, why := rewrite(ex.line, dir)
					if why == "" {
						why = needs(line, skippedOut)
					}
					if why != "" {
						t.Logf("%s: skipped (%s): %s", ex.where, why, ex.line)
						src := line
						if src == "" {
							src = ex.line // not rewritten: what it would have written
						}
						for _, f := range redirects(src) {
							skippedOut[f] = true
						}
						continue
					}
					n.Add(1)
					cmd := exec.Command("bash", "-o", "pipefail", "-c", line)
					cmd.Dir, cmd.Env = dir, env
					began := time.Now()
					out, err := cmd.CombinedOutput()
					if d := time.Since(began); d > 5*time.Second {
						t.Logf("%s: %v: %s", ex.where, d.Round(time.Second), line)
					}
					if err != nil {
						t.Errorf("%s: %s\n  ran: %s\n  %v\n%s", ex.where, ex.line, line, err, tail(out))
						continue
					}
					if strings.Contains(ex.line, "go run ./cmd/kvreport -") && !strings.Contains(string(out), "storage_health") {
						t.Errorf("%s: the set-up command printed no summary:\n%s", ex.where, tail(out))
					}
				}
			})
		}
	})
	if n := n.Load(); n < 30 {
		t.Errorf("ran %d examples: the extraction lost some", n)
	}
}

// readmeBlocks returns the command lines of README.md's code blocks, one
// list per block, with continuation lines joined and comments dropped.
func readmeBlocks(text string) [][]example {
	var blocks [][]example
	var cur []example
	in := false
	pending, start := "", 0
	sc := bufio.NewScanner(strings.NewReader(text))
	for ln := 1; sc.Scan(); ln++ {
		l := sc.Text()
		if strings.HasPrefix(l, "```") {
			if in {
				blocks = append(blocks, cur)
				cur = nil
			}
			in = !in
			continue
		}
		if !in {
			continue
		}
		if pending == "" {
			start = ln
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			pending += s + " "
			continue
		}
		l = strings.TrimSpace(pending + l)
		pending = ""
		if isCommand(l) {
			cur = append(cur, example{where: fmt.Sprintf("README.md:%d", start), line: l})
		}
	}
	return blocks
}

// helpExamples returns the command lines of a help text's Examples
// section, one group per paragraph (examples apart from each other, run
// side by side).
func helpExamples(where, help string) [][]example {
	_, ex, ok := strings.Cut(help, "\nExamples:\n")
	if !ok {
		return nil
	}
	ex, _, _ = strings.Cut(ex, "\nOptions:\n")
	var out [][]example
	var cur []example
	for l := range strings.Lines(ex) {
		l = strings.TrimSpace(l)
		if l == "" && len(cur) > 0 {
			out, cur = append(out, cur), nil
		}
		if isCommand(l) {
			cur = append(cur, example{where: where, line: l})
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

var commandRE = regexp.MustCompile(`^([A-Z_][A-Z0-9_]*=\S* )*(kvtrace|kvreplay|kvreport|go |fio |jq |benchstat |sai3-bench |bench/|mpirun |srun )`)

// isCommand tells command lines from comments, tables and the layout tree.
func isCommand(l string) bool { return commandRE.MatchString(l) }

// tools are the kvbench commands whose command lines rewrite adapts.
var tools = map[string]bool{"kvtrace": true, "kvreplay": true, "kvreport": true}

// rewrite makes the substitutions the package documentation lists, or says
// why the line is not run.
func rewrite(line, dir string) (string, string) {
	switch {
	case strings.HasPrefix(line, "go test"), strings.HasPrefix(line, "go install"):
		return "", "the test suite itself"
	case strings.HasPrefix(line, "bench/"):
		return "", "a disk benchmark"
	case strings.HasPrefix(line, "mpirun "), strings.HasPrefix(line, "srun "):
		return "", "a launcher (cmd/kvreplay's TestRealMpirun runs kvreplay under mpirun)"
	case strings.Contains(line, "--s3-endpoint"):
		return "", "an S3 server (cmd/kvreplay's S3 tests run kvreplay on versitygw)"
	}
	line = strings.ReplaceAll(line, "go run ./cmd/", "")
	line = strings.ReplaceAll(line, "kvtrace ... ", "kvtrace --num-users 5 --duration 10 --generation-mode none ")
	line = strings.ReplaceAll(line, " /mnt/", " "+dir+"/mnt/")
	words := split(stripComment(line))
	var out []string
	seg := []string{}
	flush := func() {
		out = append(out, adapt(seg)...)
		seg = seg[:0]
	}
	for _, w := range words {
		if w == "|" || w == "&&" || w == ";" || w == ">" || w == "<" {
			flush()
			out = append(out, w)
			continue
		}
		seg = append(seg, w)
	}
	flush()
	for i, w := range out {
		if !(w == "|" || w == "&&" || w == ";" || w == ">" || w == "<") && strings.ContainsAny(w, " '\"|$&;<>()\\[]{}") {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " "), ""
}

// adapt shrinks one simple command of a kvbench tool.
func adapt(seg []string) []string {
	if len(seg) == 0 || !tools[seg[0]] {
		return seg
	}
	has := func(flag string) bool {
		for _, w := range seg {
			if w == flag || strings.HasPrefix(w, flag+"=") {
				return true
			}
		}
		return false
	}
	sub := ""
	if len(seg) > 1 {
		sub = seg[1]
	}
	if seg[0] == "kvreplay" && has("--search") {
		// Each probe holds its load for --duration (10 s in the README): a
		// probe whose trace runs out first is not a measurement and stops
		// the search, and run.csv.zst here is 5 s of trace (the README's
		// is 600 s), search.csv.zst 60 s.
		for i, w := range seg {
			if w == "run.csv.zst" {
				seg[i] = "search.csv.zst"
			}
		}
	}
	switch {
	case seg[0] == "kvtrace" && sub != "export" && sub != "inspect" && sub != "models" && sub != "help":
		// A simulation: its trace file under another name.
		for i := 1; i < len(seg); i++ {
			switch w := seg[i]; {
			case (w == "-o" || w == "--io-trace-log") && i+1 < len(seg) && seg[i+1] != "-":
				seg[i+1] = fullName(seg[i+1])
			case strings.HasPrefix(w, "--io-trace-log=") && w != "--io-trace-log=-":
				seg[i] = "--io-trace-log=" + fullName(strings.TrimPrefix(w, "--io-trace-log="))
			}
		}
	case seg[0] == "kvreplay" && !long && has("--fit") && (has("--closed-loop") || has("--search")):
		// At the disk's speed, at the scale --fit picks for space alone
		// (1/2 here): at 1/64, unless long.
		seg = append(seg, "--size-scale", "1/64")
	case seg[0] == "kvreplay" && !has("--size-scale") && !has("--fit") && !has("--plan"):
		if !slices.Contains(seg, "capacity") { // a capacity search doubles --speed from its own start
			seg = append(seg, "--speed", "max")
		}
		if has("--duration") || has("--search") {
			seg = append(seg, "--duration", "1s") // a window, or each probe's
		}
		if has("--search") {
			seg = append(seg, "--search-probes", "3")
		}
		seg = append(seg, "--size-scale", "1/4096")
	}
	return seg
}

// fullName is where a simulation's trace goes: full-NAME beside NAME.
func fullName(name string) string {
	return filepath.Join(filepath.Dir(name), "full-"+filepath.Base(name))
}

// split splits a shell line into words and the operators |, &&, ;, > and
// <, keeping quoted text as one word without its quotes.
func split(line string) []string {
	var words []string
	var b strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				j = len(line) - i - 1
			}
			b.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		case c == '|' || c == ';' || c == '>' || c == '<' || c == '&' && i+1 < len(line) && line[i+1] == '&':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
			if c == '&' {
				words = append(words, "&&")
				i++
			} else {
				words = append(words, string(c))
			}
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	return words
}

// stripComment drops a trailing "# comment" outside quotes.
func stripComment(line string) string {
	var q byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '#' && (i == 0 || line[i-1] == ' '):
			return strings.TrimSpace(line[:i])
		}
	}
	return line
}

// needs says why line cannot run here: a tool not installed, or a file an
// example skipped before would have written.
func needs(line string, skippedOut map[string]bool) string {
	words := split(line)
	for i, w := range words {
		if i == 0 || words[i-1] == "|" || words[i-1] == "&&" || words[i-1] == ";" {
			if tools[w] {
				continue
			}
			if _, err := exec.LookPath(w); err != nil {
				return w + " is not installed"
			}
		}
		if skippedOut[w] || skippedOut[filepath.Dir(w)] {
			return "reads " + w + ", which a skipped example writes"
		}
	}
	return ""
}

// redirects returns the files a line writes: > FILE, -o FILE, --output
// FILE.
func redirects(line string) []string {
	words := split(line)
	var out []string
	for i, w := range words {
		if (w == ">" || w == "-o" || w == "--output") && i+1 < len(words) {
			// A rank's template names all the ranks' files.
			out = append(out, strings.ReplaceAll(words[i+1], "{rank}", "*"))
		}
	}
	return out
}

// makeInputs writes the files the examples read into dir.
func makeInputs(t *testing.T, dir, bin string, env []string) {
	t.Helper()
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("inputs: %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "..", from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"mnt/nvme", "mnt/nvme0/kv", "mnt/nvme0/kvbench", "mnt/nvme0/fio", "mnt/nvme1/kv", "results"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run("kvtrace", "--num-users", "10", "--duration", "5", "--generation-mode", "none", "--gpu-mem-gb", "0", "--cpu-mem-gb", "1", "-o", "run.csv.zst")
	run("kvtrace", "--num-users", "10", "--duration", "60", "--generation-mode", "none", "--gpu-mem-gb", "0", "--cpu-mem-gb", "1", "-o", "search.csv.zst")
	copyFile("sim/testdata/config.yaml", "config.yaml")
	copyFile("sim/reqtrace/testdata/mooncake_head200.jsonl", "conversation_trace.jsonl")
	copyFile("testdata/reference/llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst", "kv_trace.csv.zst")
	copyFile("testdata/reference/llama8b_u10_d30_gpu0_cpu4_s42.csv", "kv-cache-trace.csv")
	copyFile("testdata/reference/llama8b_u10_d30_gpu0_cpu4_s42.csv", "a.csv")
	copyFile("testdata/reference/llama8b_u10_d30_gpu0_cpu4_s42_zst.csv.zst", "b.csv.zst")
	copyFile("testdata/reference/llama8b_u50_d20_gpu2_cpu4_gennone_s42.json", "kv-cache-output.json")
	copyFile("testdata/reference/llama8b_u50_d20_gpu2_cpu4_gennone_s42.json", "kvcache_ref.json")
	b, err := os.ReadFile(filepath.Join(dir, "run.csv.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.csv.zst"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	// One real result, then copies of it for each system, trial and rank
	// the examples name.
	run("kvreplay", "--speed", "max", "--size-scale", "1/1024", "-o", "base.json", "run.csv.zst")
	raw, err := os.ReadFile(filepath.Join(dir, "base.json"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, edit map[string]any) {
		t.Helper()
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		for k, v := range edit {
			doc[k] = v
		}
		b, _ := json.MarshalIndent(doc, "", "  ")
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, sys := range []string{"sysA", "sysB", "fast", "slow"} {
		for trial := 1; trial <= 2; trial++ {
			name := fmt.Sprintf("%s-t%d.json", sys, trial)
			if sys == "fast" || sys == "slow" {
				name = fmt.Sprintf("%s-%d.json", sys, trial)
			}
			write(name, map[string]any{"system": sys, "trial": trial})
		}
	}
	write("sysA.json", map[string]any{"system": "sysA"})
	write("sysB.json", map[string]any{"system": "sysB"})
	write("kvreplay.json", map[string]any{})
	write("results/a.json", map[string]any{"system": "sysA"})
	write("results/b.json", map[string]any{"system": "sysB"})
	write("rank0.json", map[string]any{"rank": 0, "ranks": 2})
	write("rank1.json", map[string]any{"rank": 1, "ranks": 2})
	// An MLPerf Option's run as bench/mlperf-option.sh --option 1 --ranks
	// 2 --trials 3 writes it: RESULTS/kvbench_mlperf_<ts>/ holding
	// option_1/trial_<T>/rank_<N>/kvbench_result.json, trials from 0, and
	// the run's summary, kvcache_run_summary_<ts>.json, which the script
	// has kvreport write. The ranks of a trial start together, each trial
	// an hour after the last (kvreport refuses one rank's result found at
	// two places).
	const mlperfRun = "mnt/nvme1/results/kvbench_mlperf_20261126_213000"
	for trial := range 3 {
		for rank := range 2 {
			write(fmt.Sprintf("%s/option_1/trial_%d/rank_%d/kvbench_result.json", mlperfRun, trial, rank),
				map[string]any{"rank": rank, "ranks": 2, "trial": trial, "label": "option_1",
					"started": fmt.Sprintf("2026-11-26T%02d:30:00Z", 21+trial)})
		}
	}
	run("kvreport", "--aggregate", "mlperf", "--format", "json", "-o", mlperfRun+"/kvcache_run_summary_20261126_213000.json", mlperfRun)
}

func tail(b []byte) string {
	s := string(b)
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}
