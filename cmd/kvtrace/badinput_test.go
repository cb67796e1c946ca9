package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadValuesOneLine: a value typed with a newline (a pasted line, a
// "$(cmd)" that kept its own) is named quoted, on the line of its flag,
// and an empty one as "": the newline split "--model a" from a line
// "kvtrace: b: unknown model" that named no flag, and "--model : unknown
// model" showed nothing. Every malformed value of a command line is said,
// one a line, and pflag's numbers in words ("not a valid float64" was Go's
// type). --storage-capacity-gb 1e30 overflowed the sidecar's int64 bytes
// (-9223372036854775808, a sidecar no tool reads), and a precondition of
// 1e30 GiB never ended. An --output that fio cannot name in an iolog is
// refused before the export makes it (exit 2, not 1 once it was made).
func TestBadValuesOneLine(t *testing.T) {
	tr := filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv")
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	tabbed := filepath.Join(tmp, "a\tb")
	for _, tt := range []struct {
		args []string
		want []string // stderr's lines, after "kvtrace: "; a prefix of each
	}{
		{[]string{"--model", "a\nb"}, []string{`--model "a\nb": unknown model (want one of `}},
		{[]string{"--model", ""}, []string{`--model "": unknown model (want one of `}},
		{[]string{"--config", "a\nb"}, []string{`--config "a\nb": no such file or directory`}},
		{[]string{"--dataset-path", "a\nb"}, []string{`--dataset-path "a\nb": no such file or directory`}},
		{[]string{"--request-trace", "a\nb"}, []string{`--request-trace "a\nb": no such file or directory`}},
		{[]string{"models", "--config", "a\nb"}, []string{`--config "a\nb": no such file or directory`}},
		{[]string{"--num-users", "x", "--gpu-mem-gb", "1,5", "--seed", "9223372036854775808"}, []string{
			"--num-users x: not an integer",
			"--gpu-mem-gb 1,5: not a number",
			"--seed 9223372036854775808: out of range (want an integer from -9223372036854775808 to 9223372036854775807)"}},
		{[]string{"--storage-capacity-gb", "1e30", "--precondition-size-gb", "9223372036854775808"}, []string{
			"--storage-capacity-gb 1e+30: must be at most 16777216 (16 PiB)",
			"--precondition-size-gb 9223372036854775808: must be at most 16777216 (16 PiB)"}},
		{[]string{"export", "--to", "a\nb", "-o", out, tr}, []string{`--to "a\nb": want fio or sai3`}},
		{[]string{"export", "--to", "fio", "--dir", tmp, "--layout", "a\nb", "--speed", "a\nb", "--tiers", "a\nb", "-o", out, tr}, []string{
			`--tiers "a\nb": "a\nb": want Tier-0, Tier-1, Tier-2 or Tier-3`,
			`--layout "a\nb": want extent or dir`,
			`--speed "a\nb": want asap or timed`}},
		{[]string{"export", "--to", "fio", "--dir", tmp, "-o", tabbed, tr}, []string{
			`--output "` + strings.ReplaceAll(tabbed, "\t", `\t`) + `": holds whitespace or a control character, which fio's iolog cannot name`}},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(tt.args, &stdout, &stderr)
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		ok := code == 2 && len(lines) == len(tt.want)
		for i := 0; ok && i < len(lines); i++ {
			ok = strings.HasPrefix(lines[i], "kvtrace: "+tt.want[i])
		}
		if !ok {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant exit 2 and lines starting:\nkvtrace: %s", tt.args, code, stderr.String(), strings.Join(tt.want, "\nkvtrace: "))
		}
	}
	if _, err := os.Stat(tabbed); err == nil {
		t.Errorf("export made %q, which fio cannot name", tabbed)
	}
}
