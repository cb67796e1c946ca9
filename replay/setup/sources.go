package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// Sources opens the traces' descriptions (names; "-" is stdin); regular files can be read twice
// (the prescan), stdin and named pipes once. Opening a trace stops when
// ctx is done, a named pipe's wait for its writer included.
func Sources(ctx context.Context, names []string) ([]replay.Source, error) {
	var srcs []replay.Source
	stdin := 0
	for _, name := range names {
		name := name
		s := replay.Source{Name: name, Open: func() (*trace.Reader, error) { return trace.Open(name) },
			Stored: func() (io.ReadCloser, error) { return openStored(ctx, name) }}
		if name == "-" {
			stdin++
			if stdin > 1 {
				return nil, errors.New("stdin (-) given twice")
			}
		} else {
			fi, err := os.Stat(name)
			if err != nil {
				return nil, fmt.Errorf("trace: %w", err)
			}
			s.Rescan = fi.Mode().IsRegular()
			if m, err := trace.ReadMeta(name); err == nil {
				s.Meta = m
			} else if !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
		srcs = append(srcs, s)
	}
	return srcs, nil
}

// openStored opens a trace's bytes as stored: the file, or stdin for "-".
func openStored(ctx context.Context, name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	f, err := cli.OpenRead(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return f, nil
}

// CheckSidecars refuses a --model (model, its bytes per token and tensor
// parallelism in cfg) that contradicts a trace's sidecar: the sidecar's
// bytes per token are the trace's own.
func CheckSidecars(model string, cfg *replay.Config, srcs []replay.Source) error {
	if model == "" {
		return nil
	}
	for _, s := range srcs {
		m := s.Meta
		if m == nil || m.BytesPerToken <= 0 {
			continue
		}
		if m.BytesPerToken != cfg.BytesPerToken || max(1, m.TensorParallel) != cfg.TensorParallel {
			return fmt.Errorf("--model %s: %s's sidecar says model %s (%d bytes per token, tensor parallelism %d), not %d bytes per token at %d: leave --model out for a trace with a sidecar",
				model, s.Name, m.Model, m.BytesPerToken, max(1, m.TensorParallel), cfg.BytesPerToken, cfg.TensorParallel)
		}
	}
	return nil
}

// Prescan opens the traces (Sources), checks their sidecars against
// --model (CheckSidecars) and plans the replay of cfg (f.Prepare): the
// part a run and --plan share. A bad trace is the user's input (exit 2).
func Prescan(ctx context.Context, traces []string, model string, cfg *replay.Config, f Fitting) ([]replay.Source, *replay.Plan, error) {
	srcs, err := Sources(ctx, traces)
	if err != nil {
		return nil, nil, cli.Input(err)
	}
	if err := CheckSidecars(model, cfg, srcs); err != nil {
		return nil, nil, cli.Input(err)
	}
	plan, err := f.Prepare(ctx, cfg, srcs)
	if err != nil {
		if InputError(err) {
			return nil, nil, cli.Input(err)
		}
		return nil, nil, err
	}
	return srcs, plan, nil
}

// ConfigJSON is the configuration a result records: cfg, and where and how
// the tiers lived (opts), in snake case.
func ConfigJSON(cfg *replay.Config, opts *Options) json.RawMessage {
	c := struct {
		replay.Config
		Dir       string `json:"dir"`
		Layout    string `json:"layout"`
		Device    string `json:"device,omitempty"`
		Keep      bool   `json:"keep"`
		Buffered  bool   `json:"buffered"`
		Prewrite  bool   `json:"prewrite"`
		RAMBudget int64  `json:"ram_budget"`
	}{*cfg, opts.Dir, opts.Layout, opts.Device, opts.Keep, opts.Buffered, opts.Prewrite && opts.Layout == "extent", opts.RAMBudget}
	b, _ := json.Marshal(c)
	return schema.SnakeCaseKeys(b) // replay.Config's Go field names
}
