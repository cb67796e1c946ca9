package trace_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// refDir holds traces written by the Python reference kv-cache.py (CRLF,
// epoch timestamps).
const refDir = "../testdata/reference"

// referenceColumns is the header of kv-cache.py --io-trace-log.
var referenceColumns = []string{"Timestamp", "Operation", "Object_Size_Bytes", "Tier", "Key", "Phase"}

// refTrace is the expected summary of one reference trace: the row
// composition table of docs/reference.md section 8, written out by hand.
// Cells are keyed "Op Tier Phase"; cells not listed must be empty.
type refTrace struct {
	file       string
	compressed bool
	rows       int64
	cells      map[string]int64
	nonMono    int64
	spanS      float64   // the table's span, rounded to 0.1 s
	first      time.Time // the first row's timestamp, from the file
}

var refTraces = []refTrace{
	{
		file: "llama8b_u10_d30_gpu0_cpu4_s42.csv", compressed: false, rows: 594,
		cells: map[string]int64{
			"Write Tier-1 Prefill": 56, "Write Tier-2 Evict": 53,
			"Read Tier-1 Decode": 356, "Read Tier-1 Evict": 53, "Read Tier-2 Decode": 76,
		},
		nonMono: 0, spanS: 29.8, first: time.Unix(1795255939, 72664000),
	},
	{
		file: "llama8b_u10_d30_gpu0_cpu4_s42_zst.csv.zst", compressed: true, rows: 637,
		cells: map[string]int64{
			"Write Tier-1 Prefill": 62, "Write Tier-2 Evict": 60,
			"Read Tier-1 Decode": 357, "Read Tier-1 Evict": 60, "Read Tier-2 Decode": 98,
		},
		nonMono: 0, spanS: 28.6, first: time.Unix(1795256005, 697168000),
	},
	{
		file: "llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst", compressed: true, rows: 33134,
		cells: map[string]int64{
			"Write Tier-0 Prefill": 2353, "Write Tier-1 Prefill": 61, "Write Tier-1 Evict": 2345,
			"Write Tier-2 Prefill": 2, "Write Tier-2 Evict": 2401,
			"Read Tier-0 Decode": 12911, "Read Tier-0 Evict": 2345,
			"Read Tier-1 Decode": 44, "Read Tier-1 Evict": 2401, "Read Tier-2 Decode": 8271,
		},
		nonMono: 33, spanS: 19.9, first: time.Unix(1795256488, 875623000),
	},
	{
		file: "llama8b_u50_d30_gpu0_cpu4_decodeonly_s42.csv.zst", compressed: true, rows: 3533,
		cells: map[string]int64{
			"Write Tier-1 Prefill": 500, "Write Tier-2 Evict": 488,
			"Read Tier-1 Decode": 108, "Read Tier-1 Evict": 488, "Read Tier-2 Decode": 1949,
		},
		nonMono: 2, spanS: 30.0, first: time.Unix(1795256372, 483932000),
	},
	{
		file: "llama8b_u50_d30_gpu0_cpu4_rag_s42.csv.zst", compressed: true, rows: 4851,
		cells: map[string]int64{
			"Write Tier-1 Prefill": 494, "Write Tier-2 Evict": 485,
			"Read Tier-1 Decode": 2142, "Read Tier-1 Evict": 485, "Read Tier-2 Decode": 1245,
		},
		nonMono: 1, spanS: 30.0, first: time.Unix(1795256277, 688461000),
	},
}

// TestReferenceFilesRead reads every reference trace to its end.
func TestReferenceFilesRead(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(refDir, "*.csv*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range refTraces {
		if !slices.Contains(files, filepath.Join(refDir, rt.file)) {
			t.Errorf("reference trace %s is missing from %s", rt.file, refDir)
		}
	}
	if len(files) < len(refTraces) {
		t.Fatalf("found %d reference traces, want at least %d", len(files), len(refTraces))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r, err := trace.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Name != path {
				t.Errorf("Name = %q, want %q", r.Name, path)
			}
			var rec schema.Record
			var n int64
			for {
				err := r.Read(&rec)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("after %d rows: %v", n, err)
				}
				n++
			}
			if n == 0 || r.Rows() != n {
				t.Errorf("read %d rows, Rows() = %d", n, r.Rows())
			}
			if got, want := r.Compressed(), strings.HasSuffix(path, ".zst"); got != want {
				t.Errorf("Compressed() = %v, want %v", got, want)
			}
			hdr, err := r.Header()
			if err != nil || !slices.Equal(hdr, referenceColumns) {
				t.Errorf("Header() = %q, %v; want %q", hdr, err, referenceColumns)
			}
			if r.HasRequest() || r.HasQoS() {
				t.Errorf("HasRequest, HasQoS = %v, %v; the reference has neither", r.HasRequest(), r.HasQoS())
			}
			// Header and one line per row: the reference has no blank lines.
			if r.Line() != int(n)+1 {
				t.Errorf("Line() = %d after %d rows, want %d", r.Line(), n, n+1)
			}
			if err := r.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestReferenceSummaries checks Summarize against the row composition
// table of docs/reference.md section 8.
func TestReferenceSummaries(t *testing.T) {
	for _, rt := range refTraces {
		t.Run(rt.file, func(t *testing.T) {
			path := filepath.Join(refDir, rt.file)
			r, err := trace.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			s, err := trace.Summarize(r)
			if err != nil {
				t.Fatal(err)
			}
			checkRefSummary(t, s, &rt)
			if s.File != path {
				t.Errorf("File = %q, want %q", s.File, path)
			}
		})
	}
}

func checkRefSummary(tb testing.TB, s *trace.Summary, rt *refTrace) {
	tb.Helper()
	if s.Rows != rt.rows {
		tb.Errorf("Rows = %d, want %d", s.Rows, rt.rows)
	}
	got := map[string]int64{}
	var sum int64
	for _, c := range s.ByOpTierPhase {
		got[c.Op+" "+c.Tier+" "+c.Phase] = c.Rows
		sum += c.Rows
	}
	for k, want := range rt.cells {
		if got[k] != want {
			tb.Errorf("cell %s = %d, want %d", k, got[k], want)
		}
	}
	for k, n := range got {
		if _, ok := rt.cells[k]; !ok {
			tb.Errorf("cell %s = %d, want none", k, n)
		}
	}
	if sum != rt.rows {
		tb.Errorf("cells sum to %d rows, want %d", sum, rt.rows)
	}
	var wantRead, wantWrite int64
	for k, n := range rt.cells {
		if strings.HasPrefix(k, "Read ") {
			wantRead += n
		} else {
			wantWrite += n
		}
	}
	if s.Totals.ReadRows != wantRead || s.Totals.WriteRows != wantWrite || s.Totals.DeleteRows != 0 {
		tb.Errorf("Totals = %+v, want %d reads, %d writes, no deletes", s.Totals, wantRead, wantWrite)
	}
	if s.OutOfOrder != rt.nonMono {
		tb.Errorf("OutOfOrder = %d, want %d", s.OutOfOrder, rt.nonMono)
	}
	if s.Compressed != rt.compressed {
		tb.Errorf("Compressed = %v, want %v", s.Compressed, rt.compressed)
	}
	if s.TimeBase != "epoch" {
		tb.Errorf("TimeBase = %q, want epoch", s.TimeBase)
	}
	if want := float64(rt.first.UnixMicro()) / 1e6; s.EpochStart != want {
		tb.Errorf("EpochStart = %.6f, want %.6f", s.EpochStart, want)
	}
	if math.Abs(s.SpanS-rt.spanS) > 0.05 {
		tb.Errorf("SpanS = %.6f, want %.1f", s.SpanS, rt.spanS)
	}
	if !slices.Equal(s.Columns, referenceColumns) {
		tb.Errorf("Columns = %q, want %q", s.Columns, referenceColumns)
	}
	if s.Requests != 0 {
		tb.Errorf("Requests = %d; the reference has no Request column", s.Requests)
	}
}

// TestReferenceEpoch checks the normalisation of epoch timestamps to the
// first row.
func TestReferenceEpoch(t *testing.T) {
	for _, rt := range refTraces {
		t.Run(rt.file, func(t *testing.T) {
			r, err := trace.Open(filepath.Join(refDir, rt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, ok := r.Epoch(); ok {
				t.Errorf("Epoch() ok before the first row")
			}
			var rec schema.Record
			if err := r.Read(&rec); err != nil {
				t.Fatal(err)
			}
			if rec.Time != 0 {
				t.Errorf("first record Time = %v, want 0", rec.Time)
			}
			ep, ok := r.Epoch()
			if !ok || !ep.Equal(rt.first) {
				t.Errorf("Epoch() = %v, %v; want %v", ep.Format(time.RFC3339Nano), ok, rt.first.UTC().Format(time.RFC3339Nano))
			}
			// Every later Time is its row's epoch timestamp minus the first.
			var maxT time.Duration
			for {
				err := r.Read(&rec)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if rec.Time%time.Microsecond != 0 {
					t.Fatalf("Time %v is not a whole microsecond; the reference writes 6 decimals", rec.Time)
				}
				maxT = max(maxT, rec.Time)
			}
			if maxT < time.Duration(rt.spanS*float64(time.Second))-100*time.Millisecond || maxT > 60*time.Second {
				t.Errorf("largest Time %v; want about %.1f s (epoch normalised)", maxT, rt.spanS)
			}
		})
	}
}

// TestReferenceFirstRecord pins the first row of the plain reference trace
// field by field (CRLF stripped, columns by name).
func TestReferenceFirstRecord(t *testing.T) {
	r, err := trace.Open(filepath.Join(refDir, "llama8b_u10_d30_gpu0_cpu4_s42.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got [2]schema.Record
	for i := range got {
		if err := r.Read(&got[i]); err != nil {
			t.Fatal(err)
		}
	}
	want := [2]schema.Record{
		{Time: 0, Op: schema.OpWrite, Size: 298188800, Tier: schema.TierCPU, Key: []byte("conv_user_0001_1795255939067_turn_1"), Phase: schema.PhasePrefill},
		{Time: 106 * time.Microsecond, Op: schema.OpRead, Size: 298188800, Tier: schema.TierCPU, Key: []byte("conv_user_0001_1795255939067_turn_1"), Phase: schema.PhaseDecode},
	}
	for i := range got {
		if !recordsEqual(&got[i], &want[i]) {
			t.Errorf("record %d = %s, want %s", i, got[i].String(), want[i].String())
		}
	}
}

// TestReferenceMagicNotName proves compression is detected by content: a
// zstd reference trace under a name without .zst reads as zstd, the plain
// one under a .zst name reads as plain, and both give the same summary as
// the originals.
func TestReferenceMagicNotName(t *testing.T) {
	for _, tc := range []struct {
		ref  refTrace
		name string
	}{
		{refTraces[1], "renamed.csv"},
		{refTraces[3], "noext"},
		{refTraces[0], "plain-but-named.csv.zst"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(refDir, tc.ref.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.HasPrefix(data, zstdMagic); got != tc.ref.compressed {
				t.Fatalf("%s starts with the zstd magic: %v, want %v", tc.ref.file, got, tc.ref.compressed)
			}
			path := writeFile(t, tc.name, data)
			r, err := trace.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			s, err := trace.Summarize(r)
			if err != nil {
				t.Fatal(err)
			}
			checkRefSummary(t, s, &tc.ref)

			// The same through NewReader, which has no name at all.
			s2, err := trace.Summarize(trace.NewReader(bytes.NewReader(data)))
			if err != nil {
				t.Fatal(err)
			}
			checkRefSummary(t, s2, &tc.ref)
		})
	}
}

// TestReferenceNoSidecar: the reference writes no sidecar.
func TestReferenceNoSidecar(t *testing.T) {
	_, err := trace.ReadMeta(filepath.Join(refDir, refTraces[0].file))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadMeta of a trace without a sidecar: %v, want os.ErrNotExist", err)
	}
}
