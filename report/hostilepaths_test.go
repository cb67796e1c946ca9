package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hostileName is a file or directory name that would forge a line of a
// report ("PASS 6 of 6", a warning) and set a terminal's title, were it
// printed as it is. It holds no glob character: kvreport expands a path
// with one.
const hostileName = "run\nPASS 6 of 6\x1b]0;owned\x07\rWARNING: all clear"

// unprintable returns the first character of s, with some context, that
// is neither printable nor a newline or a space; "" when there is none.
func unprintable(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r != '\n' && r != ' ' && !strconv.IsPrint(r) })
	if i < 0 {
		return ""
	}
	return strconv.Quote(s[max(i-40, 0):min(i+40, len(s))])
}

// checkShown fails t when what shows a character that is not printable,
// or a line a hostile name forged.
func checkShown(t *testing.T, what, s string) {
	t.Helper()
	if u := unprintable(s); u != "" {
		t.Errorf("%s: a character that is not printable: %s", what, u)
	}
	for _, line := range strings.Split(s, "\n") {
		if l := strings.TrimLeft(line, " -|*#"); strings.HasPrefix(l, "PASS 6 of 6") || strings.HasPrefix(l, "WARNING: all clear") {
			t.Errorf("%s: a line forged by a path: %q", what, line)
		}
	}
}

// checkJSONShown is checkShown for the strings a JSON document holds.
func checkJSONShown(t *testing.T, what string, raw []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if strings.Contains(x, "\n") || unprintable(x) != "" {
				t.Errorf("%s: a string that is not printable: %q", what, x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				walk(k)
				walk(e)
			}
		}
	}
	walk(v)
}

// TestHostilePaths: the paths kvreport is given on its command line, and
// those it finds in a run's directory, are shown escaped wherever it
// shows them, as the text of documents is (printable): in its errors, in
// the report's warnings in every format, and in the MLPerf view (its
// missing files, its ranks' documents, its warnings), text, md and json.
// A path with a newline forged a line of the report or of the error, and
// an escape sequence in it reached the terminal.
func TestHostilePaths(t *testing.T) {
	dir := filepath.Join(t.TempDir(), hostileName)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("a file system without such names: %v", err)
	}
	write := func(name string, raw []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("errors", func(t *testing.T) {
		for _, p := range [][]string{
			{filepath.Join(dir, "missing.json")},
			{write("cut\nPASS 6 of 6.json", []byte(`{"format": "kvbench.result", "format_version": 1`))},
			{write("other.json", []byte(`{"format": "x"}`))},
			{write("stream.json", mustReadFile(t, "testdata/u10_t1.json")), write("stream2.json", mustReadFile(t, "testdata/u10_t1.json"))},
			{dir},
			{filepath.Join(dir, "glob\x1b[")},
			// A document's own text quoted in an error: JSON holds a
			// bidirectional override, or a line separator, as it is.
			{write("started.json", []byte(`{"format": "kvbench-result", "format_version": 3, "started": "\u202e`+"\u202e\u2028"+`"}`))},
		} {
			docs, err := Load(p, nil, LoadOptions{})
			if err == nil {
				_, err = Build(docs, BuildOptions{})
			}
			if err == nil {
				t.Errorf("%q: no error", p)
				continue
			}
			checkShown(t, "error", strings.ReplaceAll(err.Error(), "\n", "|"))
			_, err = LoadMLPerf(context.Background(), p, nil, nil)
			if err != nil {
				checkShown(t, "mlperf error", strings.ReplaceAll(err.Error(), "\n", "|"))
			}
		}
	})
	t.Run("report", func(t *testing.T) {
		p := write("stats\nWARNING: all clear.json", mustReadFile(t, "testdata/kvtrace_stats.json"))
		r := build(t, []string{p, "testdata/u10_t1.json"}, LoadOptions{}, BuildOptions{})
		for f, s := range renderAll(t, r) {
			switch f {
			case "json":
				checkJSONShown(t, f, []byte(s))
				continue
			case "xlsx":
				s = strings.ReplaceAll(s, "\t", " ") // renderAll's, between cells
			}
			checkShown(t, f, s)
		}
	})
	t.Run("mlperf", func(t *testing.T) {
		run, _ := writeMLPerfRun(t)
		top := filepath.Join(dir, "mlperf")
		if err := os.Rename(run, top); err != nil {
			t.Fatal(err)
		}
		// A rank whose result does not read: a missing file, named.
		rank := filepath.Join(top, "option_3", "trial_1", "rank_1")
		if err := os.WriteFile(filepath.Join(rank, "kvbench\nPASS 6 of 6.json"), []byte(`{"cut`), 0o644); err != nil {
			t.Fatal(err)
		}
		lr, err := LoadMLPerf(context.Background(), []string{top}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := AggregateMLPerf(context.Background(), lr, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Options["3"].MissingFiles) == 0 {
			t.Fatalf("option 3: no missing file: %+v", s.Options["3"])
		}
		for _, f := range []string{"text", "md", "json"} {
			var b bytes.Buffer
			if err := RenderMLPerf(&b, s, nil, f); err != nil {
				t.Fatal(err)
			}
			if f == "json" {
				checkJSONShown(t, f, b.Bytes())
				continue
			}
			checkShown(t, f, b.String())
		}
	})
}
