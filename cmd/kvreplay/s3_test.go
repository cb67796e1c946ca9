package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay/s3/s3test"
	"github.com/kvbench/kvbench/schema"
)

const s3Bucket = "kvreplay-e2e"

// s3Server starts versitygw with a bucket holding an object of someone
// else's, and points the AWS chain at it.
func s3Server(t *testing.T) *s3test.Server {
	t.Helper()
	srv := s3test.Start(t, s3test.Options{})
	srv.Env(t)
	srv.Bucket(t, s3Bucket)
	srv.Put(t, s3Bucket, "not-kvbench", []byte("someone else's"))
	return srv
}

// checkBucketAfter: the bucket holds exactly the object kvreplay did not
// create, as it was.
func checkBucketAfter(t *testing.T, srv *s3test.Server) {
	t.Helper()
	if keys := srv.Keys(t, s3Bucket); len(keys) != 1 || keys[0] != "not-kvbench" {
		t.Errorf("after the replay the bucket holds %q, want only the object kvreplay did not create", keys)
	}
	if got := srv.Get(t, s3Bucket, "not-kvbench"); string(got) != "someone else's" {
		t.Errorf("the object kvreplay did not create now holds %q", got)
	}
}

// TestS3Tier replays a kv-cache.py trace and a kvtrace trace (demotions
// from Tier-1 included) with Tier-2 on S3 (versitygw) and --verify:
// complete, every byte of Tier-2 the trace implies read and written, the
// tier and its requests described, the bucket as it was, and the
// credentials in no output.
func TestS3Tier(t *testing.T) {
	srv := s3Server(t)
	traces := []struct{ path, scale string }{
		{filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv"), "1/4096"},
	}
	if !testing.Short() {
		kvtrace, _ := buildTools(t)
		tr := filepath.Join(t.TempDir(), "kvtrace.csv.zst")
		if out, err := exec.Command(kvtrace, "--num-users", "6", "--duration", "20", "--generation-mode", "none",
			"--gpu-mem-gb", "0", "--cpu-mem-gb", "1", "-o", tr).CombinedOutput(); err != nil {
			t.Fatalf("kvtrace: %v\n%s", err, out)
		}
		traces = append(traces, struct{ path, scale string }{tr, "1/1024"})
	}
	for _, tc := range traces {
		t.Run(filepath.Base(tc.path), func(t *testing.T) { replayS3(t, srv, tc.path, tc.scale) })
	}
}

func replayS3(t *testing.T, srv *s3test.Server, tr, scale string) {
	res, stderr := replayDoc(t, "--tier-map", "Tier-1=ram,Tier-2=s3", "--s3-endpoint", srv.Endpoint, "--s3-bucket", s3Bucket,
		"--s3-prefix", "e2e", "--verify", "--speed", "max", "--size-scale", scale, "-o", "-", tr)
	if !res.Complete {
		t.Fatalf("the replay did not complete: %s", stderr)
	}
	var f float64
	if _, err := fmt.Sscanf(scale, "1/%g", &f); err != nil {
		t.Fatal(err)
	}
	read, write, _ := impliedAt(t, tr, 1/f)
	checkTierBytes(t, res, read, write)
	var physRead int64
	for _, tt := range res.Tiers {
		physRead += tt.PhysicalReadBytes
	}
	if res.Replay.VerifiedBytes != physRead || read[schema.TierNVMe] == 0 || write[schema.TierNVMe] == 0 {
		t.Errorf("verified %d bytes of the %d read; the trace reads %d bytes of Tier-2 and writes %d", res.Replay.VerifiedBytes, physRead, read[schema.TierNVMe], write[schema.TierNVMe])
	}
	pi := tierPathOf(res, "s3")
	if pi == nil || !strings.HasPrefix(pi.Path, "s3://"+s3Bucket+"/e2e/run-") || pi.Device != srv.Endpoint {
		t.Errorf("the s3 tier's path: %+v", pi)
	}
	if pi != nil {
		var t2 schema.TierTotals
		for _, tt := range res.Tiers {
			if tt.Tier == "Tier-2" {
				t2 = tt
			}
		}
		st := pi.S3
		if st == nil || st.Requests["PutObject"] == 0 || st.Requests["GetObject"] == 0 || st.BytesGot != t2.PhysicalReadBytes ||
			st.BytesPut != t2.PhysicalWriteBytes || st.GetTTFB.Count != st.Requests["GetObject"] || st.Retries != 0 || st.Throttled != 0 {
			t.Errorf("the s3 tier's requests %+v, Tier-2 moved %d bytes read, %d written", st, t2.PhysicalReadBytes, t2.PhysicalWriteBytes)
		}
		// The measured window's share: the bytes Tier-2 moved while timed
		// (the trace has no cold object), and no listing; the setup's:
		// the check's listing and the clean-up's.
		if m, su := st.Measured, st.Setup; m == nil || su == nil || m.BytesPut != t2.PhysicalWriteBytes || m.BytesGot != t2.PhysicalReadBytes ||
			m.Requests["ListObjectsV2"] != 0 || m.Requests["GetObject"] != st.Requests["GetObject"] || su.Requests["ListObjectsV2"] < 2 {
			t.Errorf("the s3 tier's measured requests %+v and setup %+v; Tier-2 moved %d bytes read, %d written", m, su, t2.PhysicalReadBytes, t2.PhysicalWriteBytes)
		}
	}
	// Each read of the S3 tier has its time to first byte, within its
	// latency; no other tier's backend knows one.
	for _, c := range res.Cells {
		fb := c.FirstByte
		switch {
		case c.Backend != "s3" || c.Op != "Read":
			if fb != nil {
				t.Errorf("%s %s %s (%s): time to first byte %+v", c.Tier, c.Op, c.Phase, c.Backend, fb)
			}
		case fb == nil || fb.Count != c.Ops || fb.MinUS > c.Latency.MinUS || fb.P50US > c.Latency.P50US || fb.MaxUS > c.Latency.MaxUS:
			t.Errorf("%s %s %s: %d ops, latency %+v, time to first byte %+v", c.Tier, c.Op, c.Phase, c.Ops, c.Latency, fb)
		}
	}
	doc, _ := json.Marshal(res)
	for _, secret := range []string{srv.AccessKey, srv.SecretKey} {
		if bytes.Contains(doc, []byte(secret)) || strings.Contains(stderr, secret) {
			t.Errorf("a credential is in the result or on stderr")
		}
	}
	checkBucketAfter(t, srv)
}

// TestS3Gateway replays a trace with Tier-2 in --dir on an s3fs mount of
// the bucket, the POSIX gateway MLPerf's rules require for object storage,
// under --verify: complete, every byte read checked, the tier's path
// recorded as the gateway (FUSE type, s3fs and its version, its command
// line without the credentials), and the bucket as it was after.
func TestS3Gateway(t *testing.T) {
	srv := s3Server(t)
	point := srv.MountS3FS(t, s3Bucket)
	tr := filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv")
	// --plan assumes the object store's rate of a --dir on the gateway,
	// not a disk's.
	code, stdout, stderr := kvreplay("--plan", "--tier-map", "Tier-1=ram,Tier-2=nvme", "--dir", point, "--speed", "max", tr)
	if want := "disk 0.250 GB/s (" + point + " is on s3fs, an object store's gateway: the object store's rate)"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("--plan: exit %d, no %q in\n%s%s", code, want, stdout, stderr)
	}
	res, stderr := replayDoc(t, "--tier-map", "Tier-1=ram,Tier-2=nvme", "--dir", point, "--verify", "--speed", "max",
		"--size-scale", "1/4096", "-o", "-", tr)
	if !res.Complete || res.Replay.VerifiedBytes == 0 {
		t.Fatalf("complete %v, %d bytes verified: %s", res.Complete, res.Replay.VerifiedBytes, stderr)
	}
	read, write, _ := impliedAt(t, tr, 1.0/4096)
	checkTierBytes(t, res, read, write)
	pi := tierPathOf(res, "nvme")
	if pi == nil || pi.FileSystem != "fuse.s3fs" || !strings.HasPrefix(pi.Gateway, "s3fs: ") ||
		!strings.Contains(pi.GatewayCommand, "s3fs "+s3Bucket+" "+point+" ") || !strings.Contains(pi.GatewayCommand, "url="+srv.Endpoint) {
		t.Errorf("the gateway's path: %+v", pi)
	}
	doc, _ := json.Marshal(res)
	for _, secret := range []string{srv.AccessKey, srv.SecretKey} {
		if bytes.Contains(doc, []byte(secret)) || strings.Contains(stderr, secret) {
			t.Errorf("a credential is in the result or on stderr")
		}
	}
	checkBucketAfter(t, srv)
}

// TestS3ObjectTier replays a kvtrace --object-tier trace (Tier-3 below a
// bounded NVMe tier: NVMe's evictions move there and are read from there)
// with Tier-3 on S3 and --verify: every Tier-3 byte the trace implies
// moved through the bucket, checked, and the bucket as it was after.
func TestS3ObjectTier(t *testing.T) {
	kvtrace, _ := buildTools(t)
	tr := filepath.Join(t.TempDir(), "object.csv.zst")
	if out, err := exec.Command(kvtrace, "--num-users", "10", "--duration", "30", "--generation-mode", "none",
		"--gpu-mem-gb", "0", "--cpu-mem-gb", "1", "--storage-capacity-gb", "4", "--object-tier", "-o", tr).CombinedOutput(); err != nil {
		t.Fatalf("kvtrace: %v\n%s", err, out)
	}
	read, write, _ := impliedAt(t, tr, 1.0/4096)
	if read[schema.TierObject] == 0 || write[schema.TierObject] == 0 {
		t.Fatalf("the trace reads %d and writes %d bytes of Tier-3: want both", read[schema.TierObject], write[schema.TierObject])
	}
	srv := s3Server(t)
	res, stderr := replayDoc(t, "--tier-map", "Tier-1=ram,Tier-2=nvme,Tier-3=s3", "--mkdir", "--dir", filepath.Join(t.TempDir(), "nvme"),
		"--s3-endpoint", srv.Endpoint, "--s3-bucket", s3Bucket, "--verify", "--speed", "max", "--size-scale", "1/4096", "-o", "-", tr)
	if !res.Complete || res.Replay.VerifiedBytes == 0 {
		t.Fatalf("complete %v, %d bytes verified: %s", res.Complete, res.Replay.VerifiedBytes, stderr)
	}
	checkTierBytes(t, res, read, write)
	if p := tierPathOf(res, "s3"); p == nil || p.S3 == nil || p.S3.BytesPut == 0 || p.S3.BytesGot == 0 {
		t.Errorf("the s3 tier's path: %+v", p)
	}
	checkBucketAfter(t, srv)
}

// tierPathOf is res's tier path of backend; nil when it has none.
func tierPathOf(res *schema.Result, backend string) *schema.PathInfo {
	for i := range res.Host.TierPaths {
		if res.Host.TierPaths[i].Backend == backend {
			return &res.Host.TierPaths[i]
		}
	}
	return nil
}

// TestS3Refusals: a tier on S3 without a bucket, with a bucket that does
// not exist, an endpoint where no server listens, credentials the server
// refuses or none at all stops before any I/O with one line that names
// what to change, and no result. Flags that cannot work exit with status
// 2; the failures of s3.New's check exit non-zero (2 once replay/setup
// marks the errors s3.IsInput reports as input).
func TestS3Refusals(t *testing.T) {
	srv := s3Server(t)
	tr := filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
		flag bool // refused as bad input: exit status 2
	}{
		{"no bucket", []string{"--s3-endpoint", srv.Endpoint}, nil, "kvreplay: --s3-bucket: a tier maps to s3 and names no bucket", true},
		{"missing bucket", []string{"--s3-endpoint", srv.Endpoint, "--s3-bucket", "nope-missing"}, nil,
			"kvreplay: --s3-bucket nope-missing: no such bucket at " + srv.Endpoint + ": create it first (kvreplay never creates buckets)", true},
		{"not a URL", []string{"--s3-endpoint", "127.0.0.1:1", "--s3-bucket", s3Bucket}, nil, `kvreplay: --s3-endpoint "127.0.0.1:1": want a URL`, true},
		{"nothing listening", []string{"--s3-endpoint", "http://127.0.0.1:1", "--s3-bucket", s3Bucket}, nil,
			"kvreplay: --s3-endpoint http://127.0.0.1:1: cannot connect (connect: connection refused)", true},
		{"wrong secret", []string{"--s3-endpoint", srv.Endpoint, "--s3-bucket", s3Bucket}, map[string]string{"AWS_SECRET_ACCESS_KEY": "not-the-secret-0123"},
			"kvreplay: s3: " + srv.Endpoint + " refused the credentials (SignatureDoesNotMatch): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE", true},
		{"no credentials", []string{"--s3-endpoint", srv.Endpoint, "--s3-bucket", s3Bucket}, map[string]string{"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""},
			"kvreplay: s3: no AWS credentials found for " + srv.Endpoint + ": set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out := filepath.Join(t.TempDir(), "r.json")
			var stdout, errb bytes.Buffer
			args := append([]string{"--tier-map", "Tier-1=ram,Tier-2=s3", "--speed", "max", "--size-scale", "1/4096", "-o", out, tr}, tc.args...)
			code := cli.Main("kvreplay", args, &stdout, &errb, run)
			if tc.flag && code != cli.ExitUsage || code == cli.ExitOK {
				t.Errorf("kvreplay %s: exit %d", strings.Join(tc.args, " "), code)
			}
			if msg := errb.String(); !strings.HasPrefix(msg, tc.want) || strings.Count(msg, "\n") != 1 || strings.Contains(msg, srv.SecretKey) {
				t.Errorf("kvreplay %s: %q; want one line %q", strings.Join(tc.args, " "), msg, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused run wrote %s", out)
			}
		})
	}
	checkBucketAfter(t, srv)
}

// TestS3ServerKilled: the server dies in the middle of a replay at the
// trace's pace: kvreplay exits non-zero, its result is incomplete and not
// PASS, and nothing of someone else's is gone.
func TestS3ServerKilled(t *testing.T) {
	_, kvreplay := buildTools(t)
	root := t.TempDir()
	srv := s3test.Start(t, s3test.Options{Root: root})
	srv.Env(t)
	srv.Bucket(t, s3Bucket)
	srv.Put(t, s3Bucket, "not-kvbench", []byte("someone else's"))
	tr := filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv")
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(kvreplay, "--tier-map", "Tier-1=ram,Tier-2=s3", "--s3-endpoint", srv.Endpoint, "--s3-bucket", s3Bucket,
		"--size-scale", "1/4096", "--speed", "1", "-o", out, tr)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the server once the run has objects in the bucket.
	deadline := time.Now().Add(30 * time.Second)
	for {
		runs, _ := filepath.Glob(filepath.Join(root, s3Bucket, "run-*", "*"))
		if len(runs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no object of the run in the bucket after 30 s: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.Kill()
	err := cmd.Wait()
	if err == nil {
		t.Fatalf("kvreplay exited 0 after its S3 server died: %s", stderr.String())
	}
	var res schema.Result
	p, rerr := os.ReadFile(out)
	if rerr != nil || json.Unmarshal(p, &res) != nil {
		t.Fatalf("no result document after the server died (%v): %s", rerr, stderr.String())
	}
	if res.Complete || res.Summary.StorageHealth.OverallStatus == schema.HealthPass {
		t.Errorf("a replay whose server died: complete %v, health %v", res.Complete, res.Summary.StorageHealth.OverallStatus)
	}
	if !strings.Contains(stderr.String(), "is the server up?") || !strings.Contains(stderr.String(), "warning: s3: close: the run's objects and unfinished uploads may be left under s3://"+s3Bucket+"/run-") {
		t.Errorf("stderr does not say the server went away and what it left: %s", stderr.String())
	}
	again := s3test.Start(t, s3test.Options{Root: root})
	if got := again.Get(t, s3Bucket, "not-kvbench"); string(got) != "someone else's" {
		t.Errorf("the object kvreplay did not create now holds %q", got)
	}
}

// TestS3Throttled: a 503 SlowDown from the server is retried, and the
// result counts it.
func TestS3Throttled(t *testing.T) {
	srv := s3Server(t)
	px := s3test.Throttle(t, srv)
	px.Fail(1)
	tr := filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv")
	res, stderr := replayDoc(t, "--tier-map", "Tier-1=ram,Tier-2=s3", "--s3-endpoint", px.Endpoint, "--s3-bucket", s3Bucket,
		"--speed", "max", "--size-scale", "1/4096", "-o", "-", tr)
	if !res.Complete {
		t.Fatalf("the replay did not complete: %s", stderr)
	}
	for _, pi := range res.Host.TierPaths {
		if pi.Backend == "s3" && (pi.S3 == nil || pi.S3.Throttled != 1 || pi.S3.Retries != 1) {
			t.Errorf("the s3 tier's requests %+v: want the one 503 counted, and its retry", pi.S3)
		}
	}
	if px.Refused() != 1 {
		t.Errorf("the proxy refused %d requests, want 1", px.Refused())
	}
	checkBucketAfter(t, srv)
}
