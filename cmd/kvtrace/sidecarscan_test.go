package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"

	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
	"github.com/kvbench/kvbench/trace/zst"
)

// traceScan is what a full scan of a trace computes, independently of the
// Writer's counters and of the simulation's accounting: the sidecar's
// figures, and the pre-run rows' place in time.
type traceScan struct {
	rows, deletes                  int64
	readBytes, writeBytes          int64
	keys, requests, users          map[string]bool
	peak, peakScaled               map[schema.Tier]int64
	peakAt                         map[schema.Tier]time.Duration
	peakObjects                    map[schema.Tier]int64 // most objects of a byte or more live at once
	maxObject                      int64
	sizeNotTokens                  int64 // objects not a whole number of tokens
	lastSetup, firstRun            time.Duration
	setupAfter                     []string // setup rows after the first measured one, but demotions
	orphans                        []string // a move, Read or Delete of an object not live where the row says
	digest                         string
	contentLen                     int64
	nonSetupBefore, setupNotBefore int64
}

// scanTrace replays rec through a model of live objects per tier: a Write
// makes its object live on its tier (moving it there from another tier:
// the Write of a demotion), a Delete frees it; the peak of a tier is the
// most bytes live on it after any row, at scale 1 and with every object
// scaled by trace.ScaledSize. tok is the bytes of one token (bytes per
// token over TP); measuredFrom the sidecar's.
func scanTrace(t *testing.T, path string, scale float64, tok int64, measuredFrom time.Duration) *traceScan {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Digest = true
	type obj struct {
		tier schema.Tier
		size int64
	}
	s := &traceScan{keys: map[string]bool{}, requests: map[string]bool{}, users: map[string]bool{},
		peak: map[schema.Tier]int64{}, peakScaled: map[schema.Tier]int64{}, peakAt: map[schema.Tier]time.Duration{},
		peakObjects: map[schema.Tier]int64{}, firstRun: -1, lastSetup: -1}
	live := map[string]obj{}
	var bytes, scaled, objects [schema.NumTiers]int64
	add := func(o obj, sign int64) {
		bytes[o.tier] += sign * o.size
		scaled[o.tier] += sign * trace.ScaledSize(o.size, scale)
		if o.size > 0 {
			objects[o.tier] += sign
		}
	}
	var rec schema.Record
	for {
		err := r.Read(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		s.rows++
		key := string(rec.Key)
		s.keys[key] = true
		if rec.Request != 0 {
			s.requests[fmt.Sprint(rec.Request)] = true
		}
		if rec.User != 0 {
			s.users[fmt.Sprint(rec.User)] = true
		}
		s.maxObject = max(s.maxObject, rec.Size)
		if tok > 0 && rec.Size%tok != 0 {
			s.sizeNotTokens++
		}
		setup := strings.HasPrefix(key, "precond_") || strings.HasPrefix(key, "prepop_")
		switch {
		case setup && rec.Time < measuredFrom:
			s.lastSetup = max(s.lastSetup, rec.Time)
		case setup && rec.Phase != schema.PhaseEvict:
			// A pre-run object read by the measured run is measured;
			// written again, it is not a pre-run row either: only its
			// first write is. A Write Prefill of a pre-run key after
			// the measured window began is the pre-run phase running
			// late.
			if rec.Op == schema.OpWrite && len(s.setupAfter) < 5 {
				s.setupAfter = append(s.setupAfter, fmt.Sprintf("line %d: %s", r.Line(), rec.String()))
			}
		case !setup && rec.Time < measuredFrom:
			s.nonSetupBefore++
		}
		if !setup && s.firstRun < 0 {
			s.firstRun = rec.Time
		}
		o, ok := live[key]
		switch rec.Op {
		case schema.OpRead:
			s.readBytes += rec.Size
			if !ok || o.tier != rec.Tier {
				if len(s.orphans) < 5 {
					s.orphans = append(s.orphans, fmt.Sprintf("line %d: read of an object not live on its tier: %s", r.Line(), rec.String()))
				}
			}
		case schema.OpWrite:
			s.writeBytes += rec.Size
			if ok {
				add(o, -1)
			}
			o = obj{rec.Tier, rec.Size}
			live[key] = o
			add(o, 1)
		case schema.OpDelete:
			s.deletes++
			if !ok || o.tier != rec.Tier {
				if len(s.orphans) < 5 {
					s.orphans = append(s.orphans, fmt.Sprintf("line %d: delete of an object not live on its tier: %s", r.Line(), rec.String()))
				}
				break
			}
			add(o, -1)
			delete(live, key)
		}
		for tier := range schema.Tier(schema.NumTiers) {
			if bytes[tier] > s.peak[tier] {
				s.peak[tier], s.peakAt[tier] = bytes[tier], rec.Time
			}
			s.peakScaled[tier] = max(s.peakScaled[tier], scaled[tier])
			s.peakObjects[tier] = max(s.peakObjects[tier], objects[tier])
		}
	}
	var ok bool
	if s.digest, s.contentLen, ok = r.ContentDigest(); !ok {
		t.Fatal("no content digest")
	}
	return s
}

// zstdCLI returns what the zstd command decodes path to, and what the zstd
// library does: the two must agree.
func zstdCLI(t *testing.T, path string) []byte {
	t.Helper()
	zpath, err := exec.LookPath("zstd")
	if err != nil {
		t.Skip("no zstd command")
	}
	var errb bytes.Buffer
	cmd := exec.Command(zpath, "-d", "-c", "-q", path)
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zstd -dc %s: %v: %s", path, err, errb.String())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := zst.Codec.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	lib, err := io.ReadAll(d)
	if err != nil {
		t.Fatalf("zstd library: %v", err)
	}
	if !bytes.Equal(out, lib) {
		t.Fatalf("zstd -dc decodes %d bytes, the library %d", len(out), len(lib))
	}
	return out
}

// TestSidecarMatchesScan: for the traces kvtrace writes in several
// configurations, zstd -dc decodes the trace to the bytes kvbench's Reader
// reads (the same digest), and the sidecar's counts, per-tier peaks and
// measured_from_s are those a full scan of the trace computes.
func TestSidecarMatchesScan(t *testing.T) {
	base := []string{"--model", "llama3.1-8b", "--generation-mode", "none", "--gpu-mem-gb", "0", "--cpu-mem-gb", "4"}
	mlperf8B := []string{"--num-users", "150", "--duration", "600"}
	short := []string{"--num-users", "40", "--duration", "60"}
	cases := []struct {
		name string
		args []string
	}{
		{"mlperf8b", mlperf8B},
		{"precondition", append([]string{"--precondition", "--storage-capacity-gb", "20"}, short...)},
		{"precondition-large", append([]string{"--precondition", "--precondition-size-gb", "600", "--storage-capacity-gb", "300"}, short...)},
		{"decode-only", append([]string{"--decode-only"}, short...)},
		{"decode-only-many", []string{"--decode-only", "--num-users", "300", "--duration", "20"}},
		{"rag", append([]string{"--enable-rag"}, short...)},
		{"tp2", append([]string{"--num-gpus", "2", "--tensor-parallel", "2"}, short...)},
		{"object-tier", append([]string{"--object-tier", "--storage-capacity-gb", "5"}, short...)},
		{"mlperf-dialect", append([]string{"--format", "mlperf", "--storage-capacity-gb", "5"}, short...)},
		{"mlperf-precondition", append([]string{"--format", "mlperf", "--precondition", "--storage-capacity-gb", "20"}, short...)},
		{"level3", append([]string{"--zstd-level", "3", "--storage-capacity-gb", "5"}, short...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "t.csv.zst")
			args := append(append(append([]string{}, base...), c.args...), "-o", path)
			if _, stderr, code := runKvtrace(t, args...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			text := zstdCLI(t, path)
			m, err := trace.ReadMeta(path)
			if err != nil {
				t.Fatal(err)
			}
			tok := m.BytesPerToken / int64(max(1, m.TensorParallel))
			from := time.Duration(m.MeasuredFrom*1e6) * time.Microsecond
			const scale = 1.0 / 1000
			s := scanTrace(t, path, scale, tok, from)
			sum := sha256.Sum256(text)
			if got := hex.EncodeToString(sum[:]); got != s.digest || int64(len(text)) != s.contentLen {
				t.Errorf("zstd -dc: %d bytes, sha256 %s; the Reader read %d bytes, %s", len(text), got, s.contentLen, s.digest)
			}
			// Every row decoded: the text's lines are the header and the rows.
			if n := int64(bytes.Count(text, []byte("\n"))); n != s.rows+1 {
				t.Errorf("zstd -dc: %d lines, the Reader read %d rows and a header", n, s.rows)
			}
			mc := m.Counts
			users, requests := int64(len(s.users)), int64(len(s.requests))
			if m.Dialect == "mlperf" {
				// The dialect's columns name neither: the sidecar counts
				// no users, and the simulation's requests.
				users, requests = 0, mc.Requests
			}
			for _, f := range []struct {
				name      string
				got, want int64
			}{
				{"rows", mc.Rows, s.rows}, {"objects", mc.Objects, int64(len(s.keys))},
				{"requests", mc.Requests, requests}, {"users", mc.Users, users},
				{"read_bytes", mc.ReadBytes, s.readBytes}, {"write_bytes", mc.WriteBytes, s.writeBytes},
			} {
				if f.got != f.want {
					t.Errorf("sidecar counts.%s %d, the scan %d", f.name, f.got, f.want)
				}
			}
			if m.Dialect == "kvbench" && mc.DroppedDeletes != 0 {
				t.Errorf("kvbench dialect: %d dropped deletes", mc.DroppedDeletes)
			}
			for _, o := range s.orphans {
				t.Errorf("the trace's rows do not keep objects live: %s", o)
			}
			if s.sizeNotTokens > 0 && m.Dialect == "kvbench" {
				t.Errorf("%d rows of a size not a whole number of tokens of %d bytes (bytes_per_token %d / TP %d)", s.sizeNotTokens, tok, m.BytesPerToken, m.TensorParallel)
			}
			for tier := range schema.Tier(schema.NumTiers) {
				name := tier.String()
				want, ok := m.PeakLiveBytes[name]
				if !ok && s.peak[tier] > 0 {
					t.Errorf("%s: no sidecar peak, the scan's is %d at %v", name, s.peak[tier], s.peakAt[tier])
					continue
				}
				if want != s.peak[tier] {
					t.Errorf("%s: sidecar peak_live_bytes %d, the scan's %d (at %v)", name, want, s.peak[tier], s.peakAt[tier])
				}
				// Scaled, the objects' own scaled sizes never sum above the
				// scaled peak that a replay sizes from (replay's fromMeta).
				if got, bound := s.peakScaled[tier], trace.ScaledSize(want, scale); got > bound {
					t.Errorf("%s: scaled by %g the objects peak at %d bytes, above the sidecar's peak scaled, %d", name, scale, got, bound)
				}
				if tok > 0 && s.peakObjects[tier] > (want+tok-1)/tok {
					t.Errorf("%s: %d objects live at once, more than the sidecar's peak %d holds of %d-byte tokens", name, s.peakObjects[tier], want, tok)
				}
			}
			// measured_from_s: after every pre-run row, and no measured row
			// before it.
			if s.lastSetup >= 0 && !(from > s.lastSetup) {
				t.Errorf("measured_from_s %v: not after the last pre-run row, at %v", from, s.lastSetup)
			}
			if s.lastSetup >= 0 && from == 0 {
				t.Errorf("pre-run rows up to %v, measured_from_s 0", s.lastSetup)
			}
			if s.nonSetupBefore > 0 {
				t.Errorf("%d measured rows before measured_from_s %v", s.nonSetupBefore, from)
			}
			if s.firstRun >= 0 && s.firstRun < from {
				t.Errorf("first measured row at %v, before measured_from_s %v", s.firstRun, from)
			}
			for _, r := range s.setupAfter {
				t.Errorf("a pre-run write after measured_from_s %v: %s", from, r)
			}
			t.Logf("%d rows, %d objects, %d deletes, peaks %v at %v, measured from %v, last pre-run row %v, first measured %v",
				s.rows, len(s.keys), s.deletes, m.PeakLiveBytes, s.peakAt, from, s.lastSetup, s.firstRun)
		})
	}
}
