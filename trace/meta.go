package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"time"

	"github.com/kvbench/kvbench/internal/outfile"
	"github.com/kvbench/kvbench/schema"
)

// MetaSuffix is appended to a trace's file name to name its sidecar.
const MetaSuffix = ".meta.json"

// FormatVersion is the trace format version this package writes and the
// newest it reads.
const FormatVersion = 1

// Meta is the provenance of a trace, stored beside it as <trace>.meta.json.
// Every field is optional for a reader: a trace is complete without its
// sidecar. Unknown fields are ignored when reading; a known one's key must
// be spelt exactly, once (ReadMeta).
type Meta struct {
	// FormatVersion is the trace format version (FormatVersion).
	FormatVersion int `json:"format_version"`
	// Dialect is "kvbench" or "mlperf".
	Dialect string `json:"dialect"`
	// Tool and ToolVersion name the program that wrote the trace.
	Tool        string `json:"tool"`
	ToolVersion string `json:"tool_version"`
	// CommandLine is the writer's argument vector, program name first.
	CommandLine []string `json:"command_line,omitempty"`
	// Seed is the simulation's random seed.
	Seed int64 `json:"seed"`
	// Model and BytesPerToken describe the KV cache (bytes per token for the
	// whole model, before tensor-parallel division).
	Model         string `json:"model,omitempty"`
	BytesPerToken int64  `json:"bytes_per_token,omitempty"`
	// TensorParallel is the TP degree the object sizes are divided by.
	TensorParallel int `json:"tensor_parallel,omitempty"`
	// TierCapacityBytes is each tier's capacity by its trace name
	// ("Tier-0", ...); 0 means the tier is disabled, -1 unlimited.
	TierCapacityBytes map[string]int64 `json:"tier_capacity_bytes,omitempty"`
	// PeakLiveBytes is the most bytes live on each tier at once, by tier
	// name; replay sizes its arenas from it.
	PeakLiveBytes map[string]int64 `json:"peak_live_bytes,omitempty"`
	// EpochBase is the Unix time, in seconds, of Time 0 in an mlperf-dialect
	// trace.
	EpochBase float64 `json:"epoch_base,omitempty"`
	// MeasuredFrom is the time, in seconds from the trace's start, where the
	// measured window starts (after preconditioning and pre-population).
	MeasuredFrom float64 `json:"measured_from_s"`
	// Counts summarises the trace.
	Counts MetaCounts `json:"counts"`
	// Notes are what the writer noticed about its inputs (a request
	// trace's rows skipped, the unit its timestamps were read in).
	Notes []string `json:"notes,omitempty"`
	// Config is the writer's full configuration, as it chose to encode it.
	Config json.RawMessage `json:"config,omitempty"`
}

// MetaCounts are the totals of a trace, as the Writer that wrote it
// counted them (Writer.Counts).
type MetaCounts struct {
	Rows int64 `json:"rows"`
	// Objects is the number of distinct keys.
	Objects  int64 `json:"objects"`
	Requests int64 `json:"requests"`
	// Users is the number of users whose requests the trace holds (the
	// distinct non-zero User values); 0 when the trace names none.
	Users          int64 `json:"users,omitempty"`
	ReadBytes      int64 `json:"read_bytes"`
	WriteBytes     int64 `json:"write_bytes"`
	DroppedDeletes int64 `json:"dropped_deletes,omitempty"`
}

// MetaPath returns the sidecar's path for the trace at tracePath.
func MetaPath(tracePath string) string { return tracePath + MetaSuffix }

// WriteMeta writes m beside the trace at tracePath, atomically (a temporary
// file renamed into place; see internal/outfile). There is no sidecar for
// "-", and a caller writes none beside a trace that is not a regular file.
func WriteMeta(tracePath string, m *Meta) error {
	if tracePath == "-" {
		return nil
	}
	f, err := outfile.Create(context.Background(), MetaPath(tracePath))
	if err != nil {
		return fmt.Errorf("trace: meta: %w", err)
	}
	if _, err := m.WriteTo(f); err != nil {
		f.Abort()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("trace: meta: %w", err)
	}
	return nil
}

// WriteTo writes m to w as a sidecar holds it: indented JSON and a
// newline. A caller that commits the sidecar together with its trace
// (outfile.CloseAll) writes it with WriteTo; WriteMeta writes it alone.
func (m *Meta) WriteTo(w io.Writer) (int64, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return 0, fmt.Errorf("trace: meta: %w", err)
	}
	n, err := w.Write(append(b, '\n'))
	if err != nil {
		return int64(n), fmt.Errorf("trace: meta: %w", err)
	}
	return int64(n), nil
}

// ReadMeta reads the sidecar of the trace at tracePath. When there is none
// (or tracePath is "-") the error wraps os.ErrNotExist; test for it with
// errors.Is. A sidecar of a newer format version is refused, as is one
// with a key in another case than the schema's or a key given twice
// (schema.CheckKeys: a Python reader would read it otherwise), and one
// whose figures no writer writes (check); the error is one line naming
// the sidecar and the first problem.
func ReadMeta(tracePath string) (*Meta, error) {
	if tracePath == "-" {
		return nil, fmt.Errorf("trace: meta: stdin has no sidecar: %w", os.ErrNotExist)
	}
	path := MetaPath(tracePath)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trace: meta: %w", err)
	}
	var m Meta
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("trace: meta: %s: offset %d: %w", path, se.Offset, err)
		}
		return nil, fmt.Errorf("trace: meta: %s: %w", path, err)
	}
	if bytes.TrimSpace(b)[0] != '{' {
		// null, the one value but an object that decodes into Meta.
		return nil, fmt.Errorf("trace: meta: %s: null, not a JSON object: a damaged sidecar (write the trace again, or remove the sidecar)", path)
	}
	if rest := bytes.TrimSpace(b[dec.InputOffset():]); len(rest) > 0 {
		return nil, fmt.Errorf("trace: meta: %s: offset %d: more after the JSON object: a damaged sidecar (write the trace again, or remove the sidecar)", path, len(b)-len(rest))
	}
	if err := schema.CheckKeys(b, &m); err != nil {
		// encoding/json took a key in any case, and the last of a key
		// given twice: what Python's reader of the same file does not.
		if ke, ok := errors.AsType[*schema.KeyError](err); ok {
			return nil, fmt.Errorf("trace: meta: %s: offset %d: %w: a damaged sidecar (write the trace again, or remove the sidecar)", path, ke.Offset, err)
		}
		return nil, fmt.Errorf("trace: meta: %s: %w", path, err)
	}
	if m.FormatVersion > FormatVersion {
		return nil, fmt.Errorf("trace: meta: %s: format version %d: this kvbench reads up to %d", path, m.FormatVersion, FormatVersion)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("trace: meta: %s: %w: a damaged sidecar (write the trace again, or remove the sidecar)", path, err)
	}
	return &m, nil
}

// maxTraceSeconds is the latest time, in seconds from its start, that a
// trace holds: a Reader reads times up to 1<<63-1 ns.
const maxTraceSeconds = float64(math.MaxInt64) / float64(time.Second)

// check refuses a sidecar whose figures no writer writes, the first
// found: a negative count, peak, size or time, a capacity below -1
// (unlimited), a time past the end of any trace, a peak or capacity of a
// tier that is not one, more objects, requests or users than rows (each
// is counted from a row), or peaks that add up to more bytes than the
// trace writes (a tier's live bytes were each written to it by a row).
// A replay trusts these figures when it does not read the trace first
// (kvreplay --no-prescan): they size its arenas and files, set where its
// measured window starts and count its users and objects.
func (m *Meta) check() error {
	c := m.Counts
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"format_version", float64(m.FormatVersion)}, {"bytes_per_token", float64(m.BytesPerToken)},
		{"tensor_parallel", float64(m.TensorParallel)}, {"epoch_base", m.EpochBase}, {"measured_from_s", m.MeasuredFrom},
		{"counts.rows", float64(c.Rows)}, {"counts.objects", float64(c.Objects)}, {"counts.requests", float64(c.Requests)},
		{"counts.users", float64(c.Users)}, {"counts.read_bytes", float64(c.ReadBytes)},
		{"counts.write_bytes", float64(c.WriteBytes)}, {"counts.dropped_deletes", float64(c.DroppedDeletes)},
	} {
		if f.v < 0 {
			return fmt.Errorf("%s %g: must not be negative", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"measured_from_s", m.MeasuredFrom}, {"epoch_base", m.EpochBase}} {
		if f.v >= maxTraceSeconds {
			return fmt.Errorf("%s %g: past the end of any trace (want less than %.0f s)", f.name, f.v, maxTraceSeconds)
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"counts.objects", c.Objects}, {"counts.requests", c.Requests}, {"counts.users", c.Users}} {
		if f.v > c.Rows {
			return fmt.Errorf("%s %d: more than counts.rows %d (each is counted from a row)", f.name, f.v, c.Rows)
		}
	}
	for _, tiers := range []struct {
		name string
		m    map[string]int64
	}{{"peak_live_bytes", m.PeakLiveBytes}, {"tier_capacity_bytes", m.TierCapacityBytes}} {
		for _, tier := range slices.Sorted(maps.Keys(tiers.m)) {
			if _, err := schema.ParseTier(tier); err != nil {
				return fmt.Errorf("%s %q: not a tier (want Tier-0 to Tier-%d)", tiers.name, tier, schema.NumTiers-1)
			}
		}
	}
	var peaks int64
	for _, tier := range slices.Sorted(maps.Keys(m.PeakLiveBytes)) {
		n := m.PeakLiveBytes[tier]
		if n < 0 {
			return fmt.Errorf("peak_live_bytes %q %d: must not be negative", tier, n)
		}
		if n > c.WriteBytes-peaks {
			return fmt.Errorf("peak_live_bytes %q %d: the peaks add up to more than counts.write_bytes %d (each byte live on a tier was written there first)",
				tier, n, c.WriteBytes)
		}
		peaks += n
	}
	for _, tier := range slices.Sorted(maps.Keys(m.TierCapacityBytes)) {
		if n := m.TierCapacityBytes[tier]; n < -1 {
			return fmt.Errorf("tier_capacity_bytes %q %d: want -1 (unlimited), 0 (disabled) or a size", tier, n)
		}
	}
	return nil
}
