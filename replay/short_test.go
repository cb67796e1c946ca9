package replay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// TestShortTrace: a trace that ends before the row count its sidecar
// gives, cut at a line boundary so that it parses as a shorter trace,
// is refused by the prescan, which reads every row, before any I/O (it
// had been replayed, then found short); without the prescan it replays
// what it has into a result marked incomplete (never a PASS) that says
// so. A trace with more rows than its sidecar counts is refused by the
// prescan too: the sidecar is another trace's. The whole trace is
// complete, and a trace without a sidecar cannot be judged.
func TestShortTrace(t *testing.T) {
	recs := writes(40, 0)
	meta := &trace.Meta{FormatVersion: trace.FormatVersion, Tool: "kvtrace", Counts: trace.MetaCounts{Rows: int64(len(recs))}}
	for _, tt := range []struct {
		name    string
		rows    int
		meta    *trace.Meta
		prescan bool
		want    string // "" for a complete run
	}{
		{"cut, prescan", 30, meta, true, "refused: mem has 30 rows and its sidecar counts 40"},
		{"longer, prescan", 40, &trace.Meta{FormatVersion: trace.FormatVersion, Tool: "kvtrace", Counts: trace.MetaCounts{Rows: 30}}, true,
			"refused: mem has 40 rows and its sidecar counts 30"},
		{"cut, no prescan", 30, meta, false, "mem: 30 of 40 rows: the trace ended before its sidecar's count"},
		{"whole", 40, meta, true, ""},
		{"cut, no sidecar", 30, nil, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := memTrace(t, recs[:tt.rows])
			src.Meta = tt.meta
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
			cfg.Speed, cfg.Prescan = 0, tt.prescan
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
			if msg, refused := strings.CutPrefix(tt.want, "refused: "); refused {
				if !errors.Is(err, replay.ErrSidecarMismatch) || !strings.Contains(err.Error(), msg) {
					t.Errorf("prescan: %v, want %q", err, msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src},
				map[string]backend.Backend{"ram": newRAM(t, 1<<20)}, replay.Hooks{})
			if res == nil {
				t.Fatalf("no result: %v", err)
			}
			if res.Replay.RowsDone != int64(tt.rows) {
				t.Errorf("%d rows done, want %d", res.Replay.RowsDone, tt.rows)
			}
			if tt.want == "" {
				if err != nil || !res.Complete {
					t.Errorf("error %v, complete %v", err, res.Complete)
				}
				return
			}
			if !errors.Is(err, replay.ErrShortTrace) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
			// INCOMPLETE, or FAIL where a criterion failed too (a slow
			// machine under -race): never PASS, and the health says why.
			h := res.Summary.StorageHealth
			if res.Complete || !strings.Contains(res.IncompleteReason, tt.want) ||
				(h.OverallStatus != results.HealthIncomplete && h.OverallStatus != results.HealthFail) ||
				!slices.ContainsFunc(h.Reasons, func(r string) bool { return strings.HasPrefix(r, "incomplete: ") && strings.Contains(r, tt.want) }) {
				t.Errorf("complete %v, reason %q, health %q %q", res.Complete, res.IncompleteReason, h.OverallStatus, h.Reasons)
			}
		})
	}
}

// TestCorruptZstdTrace: a zstd trace damaged in its middle, or cut short,
// stops the prescan with an error that names the trace and the byte of
// the compressed stream where decoding failed, never "line 0".
func TestCorruptZstdTrace(t *testing.T) {
	var plain bytes.Buffer
	w, err := trace.NewWriter(&plain, trace.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		r := rec(0, schema.OpWrite, 4096, schema.TierCPU, fmt.Sprint("key-", i*7919), schema.PhasePrefill, uint64(i))
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	z := zstdBytes(t, plain.Bytes())
	flipped := bytes.Clone(z)
	mid := len(z) / 2
	for i := mid; i < mid+16; i++ {
		flipped[i] ^= 0xff
	}
	for _, tt := range []struct {
		name     string
		data     []byte
		sentinel error
		lo, hi   int64 // the offset reported is in (lo, hi]
	}{
		{"bytes flipped", flipped, trace.ErrCorrupt, int64(mid), int64(len(z))},
		{"truncated", z[:mid], trace.ErrTruncated, int64(mid) - 1, int64(mid)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := replay.Source{Name: "run.csv.zst", Rescan: true,
				Stored: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tt.data)), nil }}
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
			_, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
			var pe *trace.ParseError
			if !errors.As(err, &pe) || !errors.Is(err, tt.sentinel) {
				t.Fatalf("error %v, want a *trace.ParseError of %v", err, tt.sentinel)
			}
			if pe.File != "run.csv.zst" || pe.Offset <= tt.lo || pe.Offset > tt.hi || pe.Line < 1 {
				t.Errorf("file %q line %d offset %d, want run.csv.zst, line >= 1, offset in (%d, %d]", pe.File, pe.Line, pe.Offset, tt.lo, tt.hi)
			}
			if want := fmt.Sprintf("at byte %d of the compressed stream", pe.Offset); !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), ":0:") {
				t.Errorf("error %q, want it to say %q", err, want)
			}
		})
	}
}

// zstdBytes compresses data into one zstd frame with a checksum.
func zstdBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestUncheckedTraceEnd: a trace read whole as plain CSV from a pipe
// without a sidecar ends where its writer stopped, and nothing tells a
// writer killed between two rows from the trace's end, so the result
// says so; a zstd stream (which a cut makes an error), a file the
// prescan read, and a trace with a sidecar (whose count shortTraces
// checks) are checked to their end and get no such warning.
func TestUncheckedTraceEnd(t *testing.T) {
	recs := writes(20, 0)
	plain := traceBytes(t, recs)
	meta := &trace.Meta{FormatVersion: trace.FormatVersion, Tool: "kvtrace", Counts: trace.MetaCounts{Rows: int64(len(recs))}}
	for _, tt := range []struct {
		name   string
		data   []byte
		rescan bool
		meta   *trace.Meta
		warn   bool
	}{
		{"plain pipe", plain, false, nil, true},
		{"zstd pipe", zstdBytes(t, plain), false, nil, false},
		{"plain file", plain, true, nil, false},
		{"plain pipe with a sidecar", plain, false, meta, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := replay.Source{Name: "-", Rescan: tt.rescan, Meta: tt.meta, Stored: func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(tt.data)), nil
			}}
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
			cfg.Speed, cfg.Prescan = 0, tt.rescan
			res, err := runReplay(t, cfg, src, map[string]backend.Backend{"ram": newRAM(t, 1<<20)})
			if err != nil || !res.Complete || res.Replay.RowsDone != int64(len(recs)) {
				t.Fatalf("error %v, complete %v, %d rows done", err, res != nil && res.Complete, res.Replay.RowsDone)
			}
			got := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, "UNCHECKED TRACE END: - came as plain CSV read once") })
			if got != tt.warn {
				t.Errorf("unchecked-end warning %v, want %v: %q", got, tt.warn, res.Warnings)
			}
		})
	}
}
