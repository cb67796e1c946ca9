package trace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// FuzzParseDialect: --dialect accepts exactly the two names, which String
// gives back; a refusal is one line that names the value.
func FuzzParseDialect(f *testing.F) {
	for _, s := range []string{"kvbench", "mlperf", "MLPerf", "kvbench ", "", "Dialect(2)", "mlperf\n", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := trace.ParseDialect(s)
		if s != "kvbench" && s != "mlperf" {
			if err == nil {
				t.Fatalf("ParseDialect(%q) = %v, want an error", s, d)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "trace: dialect ") {
				t.Fatalf("ParseDialect(%q): error %q is not one line naming the dialect", s, msg)
			}
			return
		}
		if err != nil || d.String() != s {
			t.Fatalf("ParseDialect(%q) = %v (%q), %v", s, d, d.String(), err)
		}
	})
}

// FuzzReadMeta: a sidecar read is one JSON value of a format version this
// package reads, its keys exactly the schema's and each once, its counts,
// peaks and sizes in range and consistent (a damaged sidecar must not size
// a replay's arenas or count its users); written back as WriteMeta writes
// it, it reads the same; a sidecar refused gets one line naming it, never
// taken for a missing one. The seeds are hand-made and kvtrace's own
// (testdata/sidecars).
func FuzzReadMeta(f *testing.F) {
	for _, s := range []string{
		`{"format_version":1,"dialect":"kvbench","tool":"kvtrace","tool_version":"v0.1.0","command_line":["kvtrace","--seed","42"],"seed":-42,"model":"llama3.1-8b","bytes_per_token":131072,"tensor_parallel":8,"tier_capacity_bytes":{"Tier-0":0,"Tier-1":4294967296,"Tier-2":-1},"peak_live_bytes":{"Tier-1":123456789},"epoch_base":1795255939.072664,"measured_from_s":12.5,"counts":{"rows":33134,"objects":2416,"requests":2416,"users":50,"read_bytes":9223372036854775807,"write_bytes":9223372036854775806,"dropped_deletes":3},"notes":["a note"],"config":{"users":50,"nested":{"a":null}}}`,
		`{"format_version":1,"tool":"x","future":{"a":[1,2]},"counts":{"rows":5,"new_count":3}}`,
		`{}`, `{"tool":"y"}`, `{"format_version":2}`, `{"format_version":-1}`, `{"format_version":1,`, `{"format_version":"1"}`,
		``, `null`, `[]`, `{} {}`, `{}garbage`, "{}\n", `{"counts":{"rows":-1}}`, `{"peak_live_bytes":{"Tier-1":-5}}`,
		`{"tier_capacity_bytes":{"Tier-2":-2}}`, `{"counts":{"users":-3}}`, `{"bytes_per_token":-1}`, `{"tensor_parallel":-8}`,
		`{"measured_from_s":-1}`, `{"counts":{"rows":1e30}}`, `{"seed":1.5}`, `{"notes":[]}`, `{"config":null}`, `{"config":[ 1 , 2 ]}`,
		`{"tool":"a\u0000b\ud800"}`, "{\"tool\":\"\xff\"}", `{"dialect":"x","dialect":"y"}`, `{"Tool":"x"}`, `{"counts":{"Rows":1}}`,
		`{"peak_live_bytes":{"tier-1":1},"counts":{"rows":1,"write_bytes":1}}`, `{"counts":{"rows":1,"objects":2}}`, `{"measured_from_s":1e10}`,
	} {
		f.Add([]byte(s))
	}
	for _, tr := range realSidecars(f) {
		raw, err := os.ReadFile(trace.MetaPath(tr))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	dir := f.TempDir()
	tracePath := filepath.Join(dir, "t.csv")
	f.Fuzz(func(t *testing.T, raw []byte) {
		if err := os.WriteFile(trace.MetaPath(tracePath), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := trace.ReadMeta(tracePath)
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "trace: meta: "+trace.MetaPath(tracePath)) {
				t.Fatalf("ReadMeta(%q): error %q is not one line naming the sidecar", raw, msg)
			}
			if errors.Is(err, os.ErrNotExist) {
				t.Fatalf("ReadMeta(%q): a bad sidecar reported as missing: %v", raw, err)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("ReadMeta(%q) = %+v: not one JSON value", raw, m)
		}
		if err := schema.CheckKeys(raw, &trace.Meta{}); err != nil {
			t.Fatalf("ReadMeta(%q) = %+v, of keys a Python reader reads otherwise: %v", raw, m, err)
		}
		c := m.Counts
		if m.FormatVersion < 0 || m.FormatVersion > trace.FormatVersion || m.BytesPerToken < 0 || m.TensorParallel < 0 ||
			m.MeasuredFrom < 0 || m.MeasuredFrom >= math.MaxInt64/1e9 || m.EpochBase < 0 || m.EpochBase >= math.MaxInt64/1e9 ||
			c.Rows < 0 || c.Objects < 0 || c.Requests < 0 || c.Users < 0 || c.ReadBytes < 0 ||
			c.WriteBytes < 0 || c.DroppedDeletes < 0 || c.Objects > c.Rows || c.Requests > c.Rows || c.Users > c.Rows {
			t.Fatalf("ReadMeta(%q) = %+v: out of range", raw, m)
		}
		peaks := big.NewInt(0)
		for tier, n := range m.PeakLiveBytes {
			if _, err := schema.ParseTier(tier); err != nil || n < 0 {
				t.Fatalf("ReadMeta(%q): peak %s %d", raw, tier, n)
			}
			peaks.Add(peaks, big.NewInt(n))
		}
		if peaks.Cmp(big.NewInt(c.WriteBytes)) > 0 {
			t.Fatalf("ReadMeta(%q): peaks %v in all, more than the %d bytes written", raw, peaks, c.WriteBytes)
		}
		for tier, n := range m.TierCapacityBytes {
			if _, err := schema.ParseTier(tier); err != nil || n < -1 {
				t.Fatalf("ReadMeta(%q): capacity %s %d", raw, tier, n)
			}
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("ReadMeta(%q) = %+v, which does not encode: %v", raw, m, err)
		}
		// Written back as WriteMeta writes it (TestMetaRoundTrip runs
		// WriteMeta itself; its fsync would slow the fuzzer a hundredfold).
		back := filepath.Join(dir, "back.csv")
		text, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(trace.MetaPath(back), append(text, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		m2, err := trace.ReadMeta(back)
		if err != nil {
			t.Fatalf("ReadMeta(%q) = %+v, written back it reads %v", raw, m, err)
		}
		if got, _ := json.Marshal(m2); !bytes.Equal(got, want) {
			t.Fatalf("ReadMeta(%q) = %s, written back it reads %s", raw, want, got)
		}
	})
}
