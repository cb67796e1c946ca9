package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputFileErrors: a request trace, ShareGPT dataset, BurstGPT path
// or --config file that is missing, a directory or malformed, and an --output that cannot
// be written, end in exit 2 before the simulation runs, with a message
// that names the flag and the file and no internal prefix.
func TestInputFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(dir, "missing.csv")
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	badJSONL := write("bad.jsonl", `{"timestamp": 1, "input_length": 5, "output_length": 3, "hash_ids": [1]}`+"\n"+`{"timestamp": 2, "input_length": "x"`+"\n")
	badHeader := write("header.csv", "Foo,Bar\n1,2\n")
	badShareGPT := write("share.json", `[{"id": 1, "conversations": 5}]`)
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"missing --request-trace", []string{"--request-trace", missing}, "--request-trace " + missing + ": no such file"},
		{"--request-trace a directory", []string{"--request-trace", dir}, "--request-trace " + dir + ": a directory"},
		{"malformed --request-trace", []string{"--request-trace", badJSONL}, "--request-trace " + badJSONL + ":2:37: "}, // its column: where the line ends early
		{"unknown --request-trace", []string{"--request-trace", badHeader}, "--request-trace " + badHeader + ":1: "},
		{"missing --dataset-path", []string{"--dataset-path", missing}, "--dataset-path " + missing + ": no such file"},
		{"malformed --dataset-path", []string{"--dataset-path", badShareGPT}, "--dataset-path " + badShareGPT + ":1: conversations"},
		{"missing BurstGPT file", []string{"--use-burst-trace", "--burst-trace-path", missing}, "--burst-trace-path " + missing + ": no such file"},
		{"BurstGPT glob matching nothing", []string{"--use-burst-trace", "--burst-trace-path", filepath.Join(dir, "*.nope")}, "--burst-trace-path " + filepath.Join(dir, "*.nope") + ": no file matches"},
		{"BurstGPT directory without CSV", []string{"--use-burst-trace", "--burst-trace-path", empty}, "--burst-trace-path " + empty + ": a directory with no *.csv file"},
		{"BurstGPT bad header", []string{"--use-burst-trace", "--burst-trace-path", badHeader}, "--burst-trace-path " + badHeader + ":1: "},
		{"--config a directory", []string{"--config", dir}, "--config " + dir + ": a directory (want kv-cache.py's config.yaml)"},
		{"unwritable --output", []string{"--output", filepath.Join(dir, "no", "stats.json")}, "--output " + filepath.Join(dir, "no", "stats.json") + ": no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "t.csv")
			args := append([]string{"--num-users", "2", "--duration", "5", "-o", out}, tt.args...)
			_, stderr, code := runKvtrace(t, args...)
			if code != 2 || !strings.HasPrefix(stderr, "kvtrace: "+tt.stderr) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.stderr)
			}
			for _, internal := range []string{"simulation:", "reqtrace:", ".tmp"} {
				if strings.Contains(stderr, internal) {
					t.Errorf("stderr %q names %q", stderr, internal)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a failed simulation left its trace")
			}
		})
	}
}

// TestBurstDirectoryIsInput: the CSV files of a --burst-trace-path
// directory are the run's inputs, which -o must not replace (kvtrace
// checked the directory alone, and its trace replaced the BurstGPT file
// it had read), and a Mac's ._*.csv beside them is not read, as Python's
// glob leaves it out in kv-cache.py (kvtrace read it and failed).
func TestBurstDirectoryIsInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "burst.csv")
	data := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n45,ChatGPT,1087,230,1317,Conversation log\n"
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "._burst.csv"), []byte("\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--use-burst-trace", "--burst-trace-path", dir, "--duration", "60", "--trace-speedup", "0"}
	_, stderr, code := runKvtrace(t, append(args, "-o", in)...)
	if code != 2 || !strings.Contains(stderr, "refusing to overwrite an input") {
		t.Errorf("-o the directory's CSV file: exit %d, %q; want 2 and a refusal", code, stderr)
	}
	if got, err := os.ReadFile(in); err != nil || string(got) != data {
		t.Fatalf("the BurstGPT input changed (%v)", err)
	}
	out := filepath.Join(t.TempDir(), "t.csv")
	if _, stderr, code := runKvtrace(t, append(args, "-o", out)...); code != 0 {
		t.Fatalf("a directory with a ._ file beside its trace: exit %d, %q", code, stderr)
	}
}

// TestRequestTraceStdin: "-" names standard input for --request-trace and
// --dataset-path, as it does for every file a tool reads: the trace is the
// one the file gives, over several passes too (stdin is read once, its
// requests kept), an output that is the file stdin comes from is refused,
// and --config - beside one of them is refused (one standard input).
func TestRequestTraceStdin(t *testing.T) {
	dir := t.TempDir()
	req := filepath.Join(dir, "req.jsonl")
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": 600, "output_length": 10, "hash_ids": [%d, %d]}`+"\n", i*500, i%3, 10+i)
	}
	if err := os.WriteFile(req, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	stdinFrom := func(path string) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		old := os.Stdin
		os.Stdin = f
		t.Cleanup(func() { os.Stdin = old; f.Close() })
	}
	common := []string{"--duration", "25", "--generation-mode", "none", "--gpu-mem-gb", "0", "--replay-cycles", "0"}
	fromFile := filepath.Join(dir, "file.csv")
	if _, stderr, code := runKvtrace(t, append([]string{"--request-trace", req, "-o", fromFile}, common...)...); code != 0 {
		t.Fatalf("--request-trace FILE: exit %d, %s", code, stderr)
	}
	fromStdin := filepath.Join(dir, "stdin.csv")
	stdinFrom(req)
	if _, stderr, code := runKvtrace(t, append([]string{"--request-trace", "-", "-o", fromStdin}, common...)...); code != 0 {
		t.Fatalf("--request-trace -: exit %d, %s", code, stderr)
	}
	want, err := os.ReadFile(fromFile)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(fromStdin)
	if err != nil {
		t.Fatal(err)
	}
	if rows := bytes.Count(want, []byte("\n")); rows < 40 || !bytes.Equal(got, want) {
		t.Fatalf("--request-trace - wrote %d bytes, want the %d (%d rows) of --request-trace FILE", len(got), len(want), rows)
	}

	before := sum(t, req)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--request-trace", "-", "-o", req}, "--io-trace-log " + req + ": is --request-trace - (standard input): refusing to overwrite an input"},
		{[]string{"--request-trace", "-", "--config", "-", "-o", filepath.Join(dir, "x.csv")}, "--config - and --request-trace -: both read standard input"},
		{[]string{"--dataset-path", "-", "--config", "-", "-o", filepath.Join(dir, "x.csv")}, "--config - and --dataset-path -: both read standard input"},
	} {
		stdinFrom(req)
		_, stderr, code := runKvtrace(t, append(tt.args, common...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("kvtrace %s: exit %d, %q; want 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}
	if sum(t, req) != before {
		t.Error("the request trace changed")
	}
}
