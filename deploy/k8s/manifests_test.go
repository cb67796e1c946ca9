package k8s

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The parts of the manifests that the test reads.
type (
	envVar struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom struct {
			FieldRef struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	}
	container struct {
		Name    string   `yaml:"name"`
		Image   string   `yaml:"image"`
		Env     []envVar `yaml:"env"`
		Command []string `yaml:"command"`
		Args    []string `yaml:"args"`
		Mounts  []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	podSpec struct {
		RestartPolicy string      `yaml:"restartPolicy"`
		Containers    []container `yaml:"containers"`
		Volumes       []struct {
			Name string `yaml:"name"`
		} `yaml:"volumes"`
	}
	podTemplate struct {
		Spec podSpec `yaml:"spec"`
	}
	manifest struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
		Spec struct {
			// batch/v1 Job
			CompletionMode string      `yaml:"completionMode"`
			Completions    int         `yaml:"completions"`
			Parallelism    int         `yaml:"parallelism"`
			Template       podTemplate `yaml:"template"`
			// kubeflow.org/v2beta1 MPIJob
			SlotsPerWorker  int `yaml:"slotsPerWorker"`
			MPIReplicaSpecs map[string]struct {
				Replicas int         `yaml:"replicas"`
				Template podTemplate `yaml:"template"`
			} `yaml:"mpiReplicaSpecs"`
		} `yaml:"spec"`
	}
)

// load parses a manifest file strictly: a field the structs above do not
// know is fine (KnownFields is off), a YAML error is not.
func load(t *testing.T, name string) manifest {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var m manifest
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var extra manifest
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("%s: want one document, got more (%v)", name, err)
	}
	return m
}

// kubeVar is Kubernetes' $(VAR) reference in command and args; $$ escapes.
var kubeVar = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand does Kubernetes' expansion of $(VAR) from the container's env
// (an undefined reference stays as written, as Kubernetes leaves it).
func expand(s string, env map[string]string) string {
	return kubeVar.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		if v, ok := env[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// host maps the manifests' mount paths to this machine's directories.
type host struct {
	root, bin string
}

// local rewrites the mount paths in s to directories under h.root.
func (h host) local(s string) string {
	for _, p := range []string{"/traces", "/results", "/mnt/nvme"} {
		s = strings.ReplaceAll(s, p+"/", filepath.Join(h.root, filepath.Base(p))+"/")
	}
	return s
}

func (h host) env(extra ...string) []string {
	return append(os.Environ(), append([]string{"PATH=" + h.bin + string(os.PathListSeparator) + os.Getenv("PATH")}, extra...)...)
}

// tools is the one build of the tools that the tests share.
var tools struct {
	once sync.Once
	dir  string
	out  []byte
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if tools.dir != "" {
		os.RemoveAll(tools.dir)
	}
	os.Exit(code)
}

// setup builds the tools (once), writes a small trace where the manifests
// read it, and returns the host.
func setup(t *testing.T) host {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the tools and runs the manifests' commands; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain on PATH to build the tools")
	}
	tools.once.Do(func() {
		if tools.dir, tools.err = os.MkdirTemp("", "kvbench-k8s-test-bin-"); tools.err != nil {
			return
		}
		build := exec.Command("go", "build", "-o", tools.dir+string(os.PathSeparator), "./cmd/kvtrace", "./cmd/kvreplay", "./cmd/kvreport")
		build.Dir = filepath.Join("..", "..")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		tools.out, tools.err = build.CombinedOutput()
	})
	if tools.err != nil {
		t.Fatalf("go build: %v\n%s", tools.err, tools.out)
	}
	// Each test its own bin directory (TestMPIJob adds mpirun to it).
	h := host{root: t.TempDir(), bin: t.TempDir()}
	for _, name := range []string{"kvtrace", "kvreplay", "kvreport"} {
		if err := os.Symlink(filepath.Join(tools.dir, name), filepath.Join(h.bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"traces", "results", "nvme"} {
		if err := os.Mkdir(filepath.Join(h.root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A few seconds of a small run: the replays go at the trace's pace.
	run(t, h, "", "kvtrace", "--model", "llama3.1-8b", "--num-users", "4", "--duration", "3", "--generation-mode", "none",
		"--gpu-mem-gb", "0", "--cpu-mem-gb", "1", "--seed", "28", "-o", filepath.Join(h.root, "traces", "run.csv.zst"))
	return h
}

func run(t *testing.T, h host, extraEnv string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(h.bin, name), args...)
	cmd.Env = h.env(strings.Fields(extraEnv)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// smaller is the one change to the manifests' kvreplay command lines: the
// objects are replayed at 1/1024 of their size, so that the run fits a
// test's disk; the bytes compared are scaled alike.
var smaller = []string{"--size-scale", "1/1024"}

// tierBytes reads a result document's bytes read and written per tier.
func tierBytes(t *testing.T, path string) (ranks int, bytes string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Ranks       int   `json:"ranks"`
		MergedRanks []int `json:"merged_ranks"`
		Tiers       []struct {
			Tier       string `json:"tier"`
			ReadBytes  int64  `json:"read_bytes"`
			WriteBytes int64  `json:"write_bytes"`
		} `json:"tiers"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return max(doc.Ranks, len(doc.MergedRanks)), fmt.Sprint(doc.Tiers)
}

// single replays the trace in one process, as the manifests' ranks do
// together.
func single(t *testing.T, h host) string {
	t.Helper()
	out := filepath.Join(h.root, "single.json")
	run(t, h, "", "kvreplay", append(smaller, "--mkdir", "--dir", filepath.Join(h.root, "nvme", "single"),
		"--tier-map", "Tier-0=ram,Tier-1=ram,Tier-2=nvme", "-o", out, filepath.Join(h.root, "traces", "run.csv.zst"))...)
	_, b := tierBytes(t, out)
	return b
}

func envMap(c container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
		if e.ValueFrom.FieldRef.FieldPath == jobUID {
			m[e.Name] = "6f1c2a9e-1b8e-4c55-9a3d-2f0e5b7c8d41" // as Kubernetes gives a Job's pods
		}
	}
	return m
}

// jobUID is the downward API's path of a Job's uid, a label of its pods.
const jobUID = "metadata.labels['batch.kubernetes.io/controller-uid']"

// TestIndexedJob parses the Indexed Job and its merge Job, and runs them
// as Kubernetes would: one kvreplay a completion index, all at once, with
// the container's env and JOB_COMPLETION_INDEX; then the merge. The ranks
// meet at the start barrier, and the merged bytes equal one process's.
func TestIndexedJob(t *testing.T) {
	t.Parallel()
	job := load(t, "kvreplay-indexed-job.yaml")
	merge := load(t, "kvreplay-merge-job.yaml")
	s := job.Spec
	if job.Kind != "Job" || job.APIVersion != "batch/v1" || s.CompletionMode != "Indexed" || s.Completions < 2 || s.Parallelism != s.Completions {
		t.Fatalf("%s %s: completionMode %q, completions %d, parallelism %d: want an Indexed Job whose ranks all run at once",
			job.APIVersion, job.Kind, s.CompletionMode, s.Completions, s.Parallelism)
	}
	if len(s.Template.Spec.Containers) != 1 || s.Template.Spec.RestartPolicy != "Never" {
		t.Fatalf("want one container, restartPolicy Never: %+v", s.Template.Spec)
	}
	c := s.Template.Spec.Containers[0]
	env := envMap(c)
	if env["KVBENCH_RANKS"] != strconv.Itoa(s.Completions) {
		t.Fatalf("KVBENCH_RANKS %q, spec.completions %d: keep them equal", env["KVBENCH_RANKS"], s.Completions)
	}
	if env["KVBENCH_RUN_ID"] == "" {
		t.Fatalf("no KVBENCH_RUN_ID from %s: the barrier takes a killed Job's ready files for its ranks'", jobUID)
	}
	if len(c.Command) != 1 || c.Command[0] != "kvreplay" || !strings.Contains(strings.Join(c.Args, " "), "--start-barrier") {
		t.Fatalf("command %q %q: want kvreplay with --start-barrier", c.Command, c.Args)
	}
	mc := merge.Spec.Template.Spec.Containers[0]
	if merge.Kind != "Job" || len(mc.Command) != 1 || mc.Command[0] != "kvreport" || len(mc.Args) != 3+s.Completions || mc.Args[0] != "merge" {
		t.Fatalf("merge job: %s, command %q %q: want kvreport merge -o OUT and one result a rank", merge.Kind, mc.Command, mc.Args)
	}
	if envMap(mc)["RUN"] != env["RUN"] {
		t.Fatalf("RUN %q in the ranks' Job, %q in the merge's", env["RUN"], envMap(mc)["RUN"])
	}

	h := setup(t)
	want := single(t, h)
	var args []string
	for _, a := range c.Args {
		args = append(args, h.local(expand(a, env)))
	}
	// A rank that fails before the barrier leaves the others waiting: here
	// for 2 minutes, not the manifest's 15, so that the test fails with
	// every rank's output before go test's own timeout kills it silent.
	args = append(args, "--start-barrier-timeout", "2m")
	var envs []string
	for k, v := range env {
		envs = append(envs, k+"="+v)
	}
	var wg sync.WaitGroup
	errs := make([]error, s.Completions)
	outs := make([][]byte, s.Completions)
	for i := range s.Completions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(filepath.Join(h.bin, c.Command[0]), append(append([]string{}, smaller...), args...)...)
			// Each rank's own copy: appended to envs in place, the ranks
			// wrote one slot, and two of them got one index (a race).
			cmd.Env = h.env(append(slices.Clip(envs), "JOB_COMPLETION_INDEX="+strconv.Itoa(i))...)
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("index %d: %v\n%s", i, err, outs[i])
		}
	}
	var margs []string
	for _, a := range mc.Args {
		margs = append(margs, h.local(expand(a, envMap(mc))))
	}
	run(t, h, "", "kvreport", margs...)
	ranks, got := tierBytes(t, margs[2])
	if ranks != s.Completions || got != want {
		t.Errorf("merged %d ranks moving %s; one process moved %s", ranks, got, want)
	}
	ready, _ := filepath.Glob(filepath.Join(h.root, "results", env["RUN"]+".barrier", "kvreplay-ready.*"))
	if len(ready) != s.Completions {
		t.Errorf("%d ranks marked ready at the barrier, want %d", len(ready), s.Completions)
	}
}

// fakeMPIRun stands in for mpirun on this machine: -np copies of the
// program, each with Open MPI's rank variables and the --mca parameters
// (OMPI_MCA_name), as mpirun starts them.
const fakeMPIRun = `#!/bin/sh
np=1
while [ $# -gt 0 ]; do
  case "$1" in
    -np|-n) np=$2; shift 2 ;;
    --allow-run-as-root|--oversubscribe) shift ;;
    --mca) export "OMPI_MCA_$2=$3"; shift 3 ;;
    -*) echo "mpirun (test stand-in): unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
i=0
pids=
while [ "$i" -lt "$np" ]; do
  OMPI_COMM_WORLD_RANK=$i OMPI_COMM_WORLD_SIZE=$np OMPI_COMM_WORLD_LOCAL_RANK=$i "$@" &
  pids="$pids $!"
  i=$((i + 1))
done
rc=0
for p in $pids; do wait "$p" || rc=1; done
exit $rc
`

// TestMPIJob parses the MPIJob and runs its launcher's script with an
// mpirun stand-in: -np is the workers' slots, every rank finds its rank in
// Open MPI's variables, and the merge after mpirun gives one process's
// bytes.
func TestMPIJob(t *testing.T) {
	t.Parallel()
	job := load(t, "kvreplay-mpijob.yaml")
	launcher, worker := job.Spec.MPIReplicaSpecs["Launcher"], job.Spec.MPIReplicaSpecs["Worker"]
	if job.Kind != "MPIJob" || job.APIVersion != "kubeflow.org/v2beta1" || launcher.Replicas != 1 || worker.Replicas < 2 {
		t.Fatalf("%s %s: launcher %d, workers %d", job.APIVersion, job.Kind, launcher.Replicas, worker.Replicas)
	}
	c := launcher.Template.Spec.Containers[0]
	if len(c.Command) != 2 || c.Command[0] != "sh" || c.Command[1] != "-c" || len(c.Args) != 1 {
		t.Fatalf("launcher command %q %q: want sh -c SCRIPT", c.Command, c.Args)
	}
	script := expand(c.Args[0], envMap(c))
	slots := worker.Replicas * max(1, job.Spec.SlotsPerWorker)
	if np := regexp.MustCompile(`-np (\d+)`).FindStringSubmatch(script); np == nil || np[1] != strconv.Itoa(slots) {
		t.Fatalf("script %q: want mpirun -np %d (workers x slotsPerWorker)", script, slots)
	}
	out := regexp.MustCompile(`kvreport merge -o (\S+)`).FindStringSubmatch(script)
	if out == nil || strings.Count(script, ".json") != 2+slots {
		t.Fatalf("script %q: want kvreplay ranks, then kvreport merge -o OUT of each rank's result", script)
	}

	h := setup(t)
	want := single(t, h)
	if err := os.WriteFile(filepath.Join(h.bin, "mpirun"), []byte(fakeMPIRun), 0o755); err != nil {
		t.Fatal(err)
	}
	script = h.local(strings.Replace(script, "kvreplay ", "kvreplay "+strings.Join(smaller, " ")+" ", 1))
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = h.env()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh -c %q: %v\n%s", script, err, b)
	}
	ranks, got := tierBytes(t, h.local(out[1]))
	if ranks != slots || got != want {
		t.Errorf("merged %d ranks moving %s; one process moved %s", ranks, got, want)
	}
}
