package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
)

func TestFilesCheck(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.csv.zst")
	if err := os.WriteFile(in, []byte("trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	soft := filepath.Join(dir, "soft")
	if err := os.Symlink(in, soft); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	side := filepath.Join(dir, "q.meta.json")
	if err := os.WriteFile(side, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	toEtc := filepath.Join(dir, "to-etc")
	if err := os.Symlink("/etc/kvbench-test-link.json", toEtc); err != nil {
		t.Fatal(err)
	}
	toNew := filepath.Join(dir, "to-new")
	if err := os.Symlink("t.csv.zst.meta.json", toNew); err != nil {
		t.Fatal(err)
	}
	sideToEtc := filepath.Join(dir, "side-etc")
	if err := os.Symlink("/etc/kvbench-test-sidecar.json", sideToEtc+".meta.json"); err != nil {
		t.Fatal(err)
	}
	trace := cli.File{Flag: "trace", Path: in, Sidecar: true}
	// Standard input redirected from the trace, from a pipe, from a
	// terminal-like character device.
	stdinFile, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer stdinFile.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	devNull, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	sideFile, err := os.Open(side)
	if err != nil {
		t.Fatal(err)
	}
	defer sideFile.Close()
	stdin := cli.File{Flag: "trace", Path: "-", Sidecar: true}
	appendIn, err := os.OpenFile(in, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer appendIn.Close()
	appendSide, err := os.OpenFile(side, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer appendSide.Close()
	pipeByName := "/proc/self/fd/" + strconv.Itoa(int(pr.Fd()))
	stdoutByName := "/proc/self/fd/" + strconv.Itoa(int(pw.Fd()))
	appendOut, err := os.OpenFile(filepath.Join(dir, "r.json"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer appendOut.Close()
	out := func(path string) cli.File { return cli.File{Flag: "-o", Path: path} }
	tests := []struct {
		name  string
		files cli.Files
		want  string // "" when accepted
	}{
		{"new file", cli.Files{Inputs: []cli.File{trace}, Outputs: []cli.File{out(filepath.Join(dir, "r.json"))}}, ""},
		{"stdout", cli.Files{Inputs: []cli.File{trace}, Outputs: []cli.File{out("-")}}, ""},
		{"the input", cli.Files{Inputs: []cli.File{trace}, Outputs: []cli.File{out(in)}}, "is trace " + in + ": refusing to overwrite an input"},
		{"a hard link", cli.Files{Inputs: []cli.File{trace}, Outputs: []cli.File{out(hard)}}, "is trace " + in},
		{"a symlink", cli.Files{Inputs: []cli.File{trace}, Outputs: []cli.File{out(soft)}}, "is trace " + in},
		{"relative", cli.Files{Inputs: []cli.File{trace}, Outputs: []cli.File{out(filepath.Join(dir, ".", "x", "..", "t.csv.zst"))}}, "is trace"},
		{"the sidecar", cli.Files{Inputs: []cli.File{trace}, Outputs: []cli.File{out(in + ".meta.json")}}, "is the sidecar of trace " + in},
		{"two outputs", cli.Files{Outputs: []cli.File{out(filepath.Join(dir, "x")), {Flag: "--output", Path: filepath.Join(dir, "x")}}}, "is also --output"},
		{"an output's sidecar", cli.Files{Outputs: []cli.File{{Flag: "-o", Path: filepath.Join(dir, "y"), Sidecar: true}, {Flag: "--output", Path: filepath.Join(dir, "y.meta.json")}}}, "is also --output"},
		{"another file", cli.Files{Inputs: []cli.File{{Flag: "--request-trace", Path: in}}, Outputs: []cli.File{out(strings.TrimSuffix(in, ".zst"))}}, ""},
		{"output's sidecar is an input", cli.Files{Inputs: []cli.File{{Flag: "--request-trace", Path: side}}, Outputs: []cli.File{{Flag: "-o", Path: strings.TrimSuffix(side, ".meta.json"), Sidecar: true}}},
			"the sidecar of -o " + strings.TrimSuffix(side, ".meta.json") + ": is --request-trace " + side},
		{"system dir", cli.Files{Outputs: []cli.File{out("/etc/kvbench-test.json")}}, "refusing a path under the system directory /etc"},
		{"a dangling link into /etc", cli.Files{Outputs: []cli.File{out(toEtc)}}, "refusing a path under the system directory /etc (it resolves to /etc/kvbench-test-link.json)"},
		{"a dangling link to the sidecar", cli.Files{Inputs: []cli.File{trace}, Outputs: []cli.File{out(toNew)}}, "is the sidecar of trace " + in},
		{"the sidecar a dangling link into /etc", cli.Files{Outputs: []cli.File{{Flag: "--io-trace-log", Path: sideToEtc, Sidecar: true}}},
			"the sidecar of --io-trace-log " + sideToEtc + ": --io-trace-log " + sideToEtc + ".meta.json: refusing a path under the system directory /etc (it resolves to /etc/kvbench-test-sidecar.json)"},
		{"the sidecar a link into /etc, allowed", cli.Files{AllowSystem: true, Outputs: []cli.File{{Flag: "--io-trace-log", Path: sideToEtc, Sidecar: true}}}, ""},
		{"no sidecar, a link into /etc beside", cli.Files{Outputs: []cli.File{{Flag: "--io-trace-log", Path: sideToEtc}}}, ""},
		{"system dir allowed", cli.Files{AllowSystem: true, Outputs: []cli.File{out("/etc/kvbench-test.json")}}, ""},
		{"new file in /dev", cli.Files{Outputs: []cli.File{out("/dev/kvbench-test")}}, "system directory /dev"},
		{"/dev/null", cli.Files{Outputs: []cli.File{out("/dev/null")}}, ""},
		{"/dev/null twice", cli.Files{Outputs: []cli.File{out("/dev/null"), {Flag: "--output", Path: "/dev/null"}}}, ""},
		{"/dev/stdout", cli.Files{Outputs: []cli.File{out("/dev/stdout")}}, ""},
		{"a device under /dev", cli.Files{Outputs: []cli.File{out("/dev/random")}}, "under the system directory /dev"},
		{"a directory", cli.Files{Outputs: []cli.File{out(dir)}}, "is a directory"},
		{"a fifo", cli.Files{Outputs: []cli.File{out(fifo)}}, ""},
		{"stdin redirected from the output", cli.Files{Stdin: stdinFile, Inputs: []cli.File{stdin}, Outputs: []cli.File{out(in)}},
			"-o " + in + ": is trace - (standard input): refusing to overwrite an input"},
		{"stdin redirected from the output, a link", cli.Files{Stdin: stdinFile, Inputs: []cli.File{stdin}, Outputs: []cli.File{out(soft)}}, "is trace - (standard input)"},
		{"stdin redirected from the output's sidecar", cli.Files{Stdin: sideFile, Inputs: []cli.File{{Flag: "--config", Path: "-"}},
			Outputs: []cli.File{{Flag: "--io-trace-log", Path: strings.TrimSuffix(side, ".meta.json"), Sidecar: true}}},
			"the sidecar of --io-trace-log " + strings.TrimSuffix(side, ".meta.json") + ": is --config - (standard input)"},
		{"stdin a pipe, the output that pipe", cli.Files{Stdin: pr, Inputs: []cli.File{stdin}, Outputs: []cli.File{out(pipeByName)}}, "is trace - (standard input)"},
		{"stdin redirected from another file", cli.Files{Stdin: stdinFile, Inputs: []cli.File{stdin}, Outputs: []cli.File{out(filepath.Join(dir, "r.json"))}}, ""},
		{"stdin from a file no input reads", cli.Files{Stdin: stdinFile, Inputs: []cli.File{trace}, Outputs: []cli.File{out(filepath.Join(dir, "r.json"))}}, ""},
		{"stdin a character device", cli.Files{Stdin: devNull, Inputs: []cli.File{stdin}, Outputs: []cli.File{out("/dev/null")}}, ""},
		{"stdout appended to the input", cli.Files{Stdout: appendIn, Inputs: []cli.File{trace}, Outputs: []cli.File{out("-")}},
			"-o - (standard output): is trace " + in + ": refusing to overwrite an input"},
		{"stdout appended to the input's sidecar", cli.Files{Stdout: appendSide, Inputs: []cli.File{{Flag: "trace", Path: strings.TrimSuffix(side, ".meta.json"), Sidecar: true}}, Outputs: []cli.File{out("-")}},
			"is the sidecar of trace"},
		{"stdout another file", cli.Files{Stdout: appendSide, Inputs: []cli.File{trace}, Outputs: []cli.File{out("-")}}, ""},
		{"stdout the input, no output to it", cli.Files{Stdout: appendIn, Inputs: []cli.File{trace}, Outputs: []cli.File{out(filepath.Join(dir, "r.json"))}}, ""},
		{"stdout a character device", cli.Files{Stdout: devNull, Inputs: []cli.File{{Flag: "trace", Path: "/dev/null"}}, Outputs: []cli.File{out("-")}}, ""},
		{"stdout a pipe, another output that pipe", cli.Files{Stdout: pw, Outputs: []cli.File{out("-"), {Flag: "--output", Path: stdoutByName}}},
			"--output " + stdoutByName + ": is -o - (standard output): two outputs cannot share a file"},
		{"stdout redirected to another output", cli.Files{Stdout: appendOut, Outputs: []cli.File{{Flag: "-o", Path: filepath.Join(dir, "r.json"), Sidecar: true}, {Flag: "--output", Path: "-"}}},
			"-o " + filepath.Join(dir, "r.json") + ": is --output - (standard output): two outputs cannot share a file"},
		{"stdout redirected to an output's sidecar", cli.Files{Stdout: appendSide, Outputs: []cli.File{{Flag: "-o", Path: strings.TrimSuffix(side, ".meta.json"), Sidecar: true}, {Flag: "--output", Path: "-"}}},
			"the sidecar of -o"},
		{"stdout a pipe, another output elsewhere", cli.Files{Stdout: pw, Outputs: []cli.File{out("-"), {Flag: "--output", Path: filepath.Join(dir, "s.json")}}}, ""},
		{"a fifo read and written", cli.Files{Inputs: []cli.File{{Flag: "trace", Path: fifo}}, Outputs: []cli.File{out(fifo)}}, "refusing to overwrite an input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.files.Check()
			if tt.want == "" {
				if len(errs) > 0 {
					t.Fatalf("Check() = %v, want no error", errs)
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("Check() accepted, want %q", tt.want)
			}
			if !strings.Contains(errs[0].Error(), tt.want) {
				t.Fatalf("Check() = %v, want %q", errs[0], tt.want)
			}
			if cli.ExitCode(errs[0]) != cli.ExitUsage {
				t.Fatalf("%v is not a usage error", errs[0])
			}
		})
	}
}

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		a, b string
		want bool
	}{
		{a, a, true},
		{a, filepath.Join(dir, "b"), false},
		{filepath.Join(dir, "new"), filepath.Join(dir, "sub", "..", "new"), true},
		{"-", "-", false},
		{"/dev/null", "/dev/null", false},
	}
	for _, tt := range tests {
		if got := cli.SameFile(tt.a, tt.b); got != tt.want {
			t.Errorf("SameFile(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
