package setup

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/s3/s3test"
	"github.com/kvbench/kvbench/schema"
)

const s3Bucket = "kvbench-setup"

// s3Replay replays a small Tier-2 trace (writes, reads, deletes) with
// Tier-2 on the S3 server at endpoint, and returns the result and what
// was printed on stderr.
func s3Replay(t *testing.T, endpoint string, keep bool) (*schema.Result, string) {
	t.Helper()
	var rows strings.Builder
	rows.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
	for i := range 8 {
		fmt.Fprintf(&rows, "%d.0,Write,65536,Tier-2,k%d,Prefill\n", i, i)
		fmt.Fprintf(&rows, "%d.5,Read,65536,Tier-2,k%d,Decode\n", i, i)
	}
	// Two deleted by the trace, the rest left for the clean-up.
	rows.WriteString("9.0,Delete,65536,Tier-2,k0,Evict\n9.1,Delete,65536,Tier-2,k1,Evict\n")
	return s3ReplayRows(t, endpoint, keep, rows.String())
}

// s3ReplayRows replays the trace rows (a CSV with its header) as
// s3Replay does.
func s3ReplayRows(t *testing.T, endpoint string, keep bool, rows string) (*schema.Result, string) {
	t.Helper()
	tr := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(tr, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := replay.DefaultConfig()
	cfg.Speed = 0 // as fast as it goes
	env := &Env{}
	if err := env.MapTier(&cfg, schema.TierNVMe, "Tier-2", "s3"); err != nil {
		t.Fatal(err)
	}
	srcs, plan, err := Prescan(context.Background(), []string{tr}, "", &cfg, Fitting{})
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	opts := Options{Keep: keep, Stderr: &stderr, S3: S3Config{Endpoint: endpoint, Bucket: s3Bucket, Prefix: "setup"}}
	res, err := Replay(context.Background(), env, &cfg, plan, srcs, opts, nil, nil)
	if err != nil || res == nil || !res.Complete {
		t.Fatalf("Replay: %v (result %v): %s", err, res != nil, stderr.String())
	}
	return res, stderr.String()
}

// s3PathOf is res's s3 tier path; the test fails without one.
func s3PathOf(t *testing.T, res *schema.Result) *schema.PathInfo {
	t.Helper()
	for i, pi := range res.Host.TierPaths {
		if pi.Backend == "s3" && pi.S3 != nil {
			return &res.Host.TierPaths[i]
		}
	}
	t.Fatalf("the result has no s3 tier path: %+v", res.Host.TierPaths)
	return nil
}

// TestS3ResultCountsCleanup: the result's S3 requests are every request
// the run made to the server, as a proxy in front of it counts them: the
// clean-up's deletes and listings at the backend's Close included (the
// result was described before the Close, and left them out).
func TestS3ResultCountsCleanup(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{KeepAlive: true})
	srv.Env(t)
	srv.Bucket(t, s3Bucket)
	px := s3test.Throttle(t, srv)
	res, _ := s3Replay(t, px.Endpoint, false)
	st := s3PathOf(t, res).S3
	var calls int64
	for _, n := range st.Requests {
		calls += n
	}
	if got := calls + st.Retries; got != px.Served() {
		t.Errorf("the result counts %d requests (%v, %d retries); the server was sent %d", got, st.Requests, st.Retries, px.Served())
	}
	// The six objects the trace left and the run's claim of its prefix,
	// deleted at the clean-up; its listing of what is left and of the
	// unfinished uploads.
	if st.Requests["DeleteObject"] != 9 || st.Requests["ListMultipartUploads"] < 1 || st.Requests["ListObjectsV2"] < 2 {
		t.Errorf("requests %v: want 9 DeleteObject (2 of the trace's, 7 of the clean-up), the clean-up's listings", st.Requests)
	}
	if keys := srv.Keys(t, s3Bucket); len(keys) != 0 {
		t.Errorf("the bucket holds %q after the run", keys)
	}
}

// TestS3Keep: with --keep the objects stay, and kvreplay says where they
// are (endpoint, bucket, the run's prefix) and how to remove them; the
// result records the same place.
func TestS3Keep(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	srv.Env(t)
	srv.Bucket(t, s3Bucket)
	res, stderr := s3Replay(t, srv.Endpoint, true)
	pi := s3PathOf(t, res)
	where := "s3://" + s3Bucket + "/" + pi.S3.Prefix
	if !strings.HasPrefix(pi.S3.Prefix, "setup/run-") || pi.Path != where || pi.S3.Endpoint != srv.Endpoint {
		t.Errorf("the result's s3 path %q, prefix %q, endpoint %q", pi.Path, pi.S3.Prefix, pi.S3.Endpoint)
	}
	want := "kvreplay: --keep: the S3 tier's objects are kept under " + where + " at " + srv.Endpoint +
		" (remove them with: aws --endpoint-url " + srv.Endpoint + " s3 rm --recursive " + where + ")\n"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q; want the line %q", stderr, want)
	}
	keys := srv.Keys(t, s3Bucket)
	if len(keys) != 7 || !slices.Contains(keys, pi.S3.Prefix+".kvreplay-run") {
		t.Errorf("the bucket holds %q; want the 6 objects the trace left and the run's claim of its prefix", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, pi.S3.Prefix) {
			t.Errorf("kept key %q is not under the prefix printed", k)
		}
	}
}

// TestS3ResultSplitsSetup: the result's S3 requests keep the whole
// account, and split it between the measured window (the trace's writes,
// reads and deletes, the bytes Tier-2 moved while timed) and the setup:
// the check of the bucket, the untimed writes of the cold objects (keys
// the trace reads before writing) before the clock, and the clean-up. The
// two add up to the whole, operation by operation.
func TestS3ResultSplitsSetup(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{KeepAlive: true})
	srv.Env(t)
	srv.Bucket(t, s3Bucket)
	const size = 65536
	var rows strings.Builder
	rows.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
	for i := range 3 {
		// Read before any write: a cold object, written before the clock.
		fmt.Fprintf(&rows, "%d.0,Read,%d,Tier-2,cold%d,Decode\n", i, size, i)
	}
	for i := range 5 {
		fmt.Fprintf(&rows, "%d.0,Write,%d,Tier-2,k%d,Prefill\n", 3+i, size, i)
		fmt.Fprintf(&rows, "%d.5,Read,%d,Tier-2,k%d,Decode\n", 3+i, size, i)
	}
	rows.WriteString("9.0,Delete,65536,Tier-2,k0,Evict\n")
	res, _ := s3ReplayRows(t, srv.Endpoint, false, rows.String())
	if res.Replay.ColdPrepared != 3 {
		t.Fatalf("%d cold objects prepared; the trace reads 3 before writing them", res.Replay.ColdPrepared)
	}
	var t2 schema.TierTotals
	for _, tt := range res.Tiers {
		if tt.Tier == "Tier-2" {
			t2 = tt
		}
	}
	st := s3PathOf(t, res).S3
	m, su := st.Measured, st.Setup
	if m == nil || su == nil {
		t.Fatalf("the s3 tier's requests are not split: measured %+v, setup %+v", m, su)
	}
	// The window: the trace's 5 writes, 8 reads and 1 delete, and the
	// bytes Tier-2 moved while timed.
	wantM := map[string]int64{"PutObject": 5, "GetObject": 8, "DeleteObject": 1}
	if !maps.Equal(m.Requests, wantM) || m.BytesPut != 5*size || m.BytesGot != 8*size ||
		m.BytesPut != t2.PhysicalWriteBytes || m.BytesGot != t2.PhysicalReadBytes {
		t.Errorf("measured %+v; want requests %v, %d bytes put and %d got (Tier-2 wrote %d and read %d)",
			m, wantM, 5*size, 8*size, t2.PhysicalWriteBytes, t2.PhysicalReadBytes)
	}
	// The setup: the check's listing and its claim of the prefix (an
	// empty PUT), the 3 cold writes, the clean-up's deletes of the 7
	// objects left and the claim, and its listings.
	if su.Requests["PutObject"] != 4 || su.BytesPut != 3*size || su.BytesGot != 0 || su.Requests["GetObject"] != 0 ||
		su.Requests["DeleteObject"] != 8 || su.Requests["ListObjectsV2"] < 2 || su.Requests["ListMultipartUploads"] < 1 {
		t.Errorf("setup %+v; want 4 PutObject (the claim, 3 of %d bytes), no GET, 8 DeleteObject, the check's and the clean-up's listings", su, size)
	}
	// The two add up to the whole account.
	for _, op := range slices.Sorted(maps.Keys(st.Requests)) {
		if m.Requests[op]+su.Requests[op] != st.Requests[op] {
			t.Errorf("%s: %d measured + %d setup, of %d in all", op, m.Requests[op], su.Requests[op], st.Requests[op])
		}
	}
	if m.BytesPut+su.BytesPut != st.BytesPut || m.BytesGot+su.BytesGot != st.BytesGot || m.Retries+su.Retries != st.Retries ||
		m.Throttled+su.Throttled != st.Throttled || st.BytesPut != 8*size || m.BytesPutFailed+su.BytesPutFailed != st.BytesPutFailed {
		t.Errorf("measured %+v and setup %+v do not add up to the whole %+v (%d bytes put in all)", m, su, st, 8*size)
	}
	// The GETs' time to first byte is the whole run's, one figure: the
	// setup makes no GET (its writes before the clock make new objects,
	// no rewrite reads one), so it is the measured window's GETs'.
	if st.GetTTFB.Count != m.Requests["GetObject"] || st.GetTTFB.Count != 8 || st.GetTTFB.P50US <= 0 {
		t.Errorf("get_ttfb %+v; want the 8 GETs of the measured window", st.GetTTFB)
	}
}

// TestPlanCountsS3Requests holds the plan's count of the s3 tier's
// requests (Plan.Ops, which --fit's request rate divides) against those a
// replay on the S3 test server made in its measured window, case by case:
// an object above the part size is a multipart upload (create, a PUT of
// each part, complete) and a GET of each part, at the replay's scaled
// size. Before, the plan counted one a row: 3 for the multipart case's
// 9 requests, and --fit's check of the request rate was that lenient.
func TestPlanCountsS3Requests(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{KeepAlive: true})
	srv.Env(t)
	srv.Bucket(t, s3Bucket)
	const part = 5 << 20 // s3.MinPartSize: the least data to move
	for _, c := range []struct {
		name  string
		scale float64
		rows  string // Timestamp,Operation,Object_Size_Bytes,Tier,Key (Phase Decode); Tier-2 on s3, Tier-1 in RAM
		want  int64
	}{
		// 1 PUT, 1 GET, 1 DELETE.
		{"small", 1, "0,Write,65536,Tier-2,k\n1,Read,65536,Tier-2,k\n2,Delete,65536,Tier-2,k", 3},
		// 3 parts: create, 3 PUTs, complete; 3 GETs; 1 DELETE.
		{"multipart", 1, "0,Write,12582912,Tier-2,k\n1,Read,12582912,Tier-2,k\n2,Delete,12582912,Tier-2,k", 9},
		// One part exactly: 1 PUT, 1 GET.
		{"one-part", 1, "0,Write,5242880,Tier-2,k\n1,Read,5242880,Tier-2,k", 2},
		// 48 MiB at 1/4: the 12 MiB above, 5 + 3; at 1/16, 3 MiB: 1 + 1.
		{"scaled-1/4", 0.25, "0,Write,50331648,Tier-2,k\n1,Read,50331648,Tier-2,k", 8},
		{"scaled-1/16", 1.0 / 16, "0,Write,50331648,Tier-2,k\n1,Read,50331648,Tier-2,k", 2},
		// An empty object: its PUT at close; nothing to GET.
		{"empty", 1, "0,Write,0,Tier-2,k\n1,Read,0,Tier-2,k", 1},
		// A rewrite is another upload: 5 + 5 + 3.
		{"rewrite", 1, "0,Write,12582912,Tier-2,k\n1,Write,12582912,Tier-2,k\n2,Read,12582912,Tier-2,k", 13},
		// Read before written: prepared before the clock; its 3 GETs.
		{"cold", 1, "0,Read,12582912,Tier-2,k", 3},
		// Read after its delete: written again at the read (4), then read
		// (2): 4 + 1 + 6.
		{"read-after-delete", 1, "0,Write,6291456,Tier-2,k\n1,Delete,6291456,Tier-2,k\n2,Read,6291456,Tier-2,k", 11},
		// Moved to RAM (5, then its DELETE), read there and where the row
		// says Tier-2 (RAM's, where it is), moved back (5) and read (3).
		{"moves", 1, "0,Write,12582912,Tier-2,k\n1,Write,12582912,Tier-1,k\n2,Read,12582912,Tier-1,k\n3,Read,12582912,Tier-2,k\n" +
			"4,Write,12582912,Tier-2,k\n5,Read,12582912,Tier-2,k", 14},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows := "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n" + strings.ReplaceAll(c.rows, "\n", ",Decode\n") + ",Decode\n"
			plan, res := s3PlanReplay(t, srv.Endpoint, rows, part, c.scale)
			m := s3PathOf(t, res).S3.Measured
			if m == nil {
				t.Fatal("the result does not split the s3 tier's requests")
			}
			var made int64
			for _, n := range m.Requests {
				made += n
			}
			if plan.Ops["s3"] != made || made != c.want {
				t.Errorf("the plan counts %d requests of the s3 tier; the replay made %d (%v); want %d", plan.Ops["s3"], made, m.Requests, c.want)
			}
		})
	}
}

// s3PlanReplay replays rows (a CSV with its header) with Tier-2 on the S3
// server at endpoint in parts of part bytes, at scale, as fast as it goes,
// and returns its plan and result.
func s3PlanReplay(t *testing.T, endpoint, rows string, part int64, scale float64) (*replay.Plan, *schema.Result) {
	t.Helper()
	tr := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(tr, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := replay.DefaultConfig()
	cfg.Speed, cfg.SizeScale = 0, scale
	env := &Env{}
	if err := env.MapTier(&cfg, schema.TierNVMe, "Tier-2", "s3"); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	opts := Options{Stderr: &stderr, S3: S3Config{Endpoint: endpoint, Bucket: s3Bucket, Prefix: "plan", PartSize: part}}
	cfg.S3PartSize = opts.S3.PartSizeOrDefault() // as kvreplay's main sets it
	srcs, plan, err := Prescan(context.Background(), []string{tr}, "", &cfg, Fitting{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Replay(context.Background(), env, &cfg, plan, srcs, opts, nil, nil)
	if err != nil || res == nil || !res.Complete {
		t.Fatalf("Replay: %v (result %v): %s", err, res != nil, stderr.String())
	}
	return plan, res
}
